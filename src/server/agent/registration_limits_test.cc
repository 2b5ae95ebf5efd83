// A cluster behind an agent is registered whole or not at all: an inventory the store cannot
// hold is refused naming what is too large, and a store failure while the cluster is first
// stored leaves nothing behind — no record, no nodes, no cluster handed to the scheduler, no
// node names held. Over real SQLite stores with their limits lowered.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/agent_clusters.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::server {
namespace {

namespace fs = std::filesystem;
namespace v1 = agent::v1;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class NullChannel final : public AgentChannel {
 public:
  void Send(v1::ServerMessage message) override { sent.push_back(std::move(message)); }
  void Close(absl::Status) override {}
  std::vector<v1::ServerMessage> sent;
};

class CountingObserver final : public TaskObserver, public InventoryObserver {
 public:
  void OnTaskStarted(std::string_view, TimePoint) override {}
  void OnTaskEnded(const TaskEnd&) override {}
  void OnNodesChanged(const Cluster&, std::vector<Node> nodes) override { changes += nodes.size(); }
  size_t changes = 0;
};

v1::Inventory Inventory(uint64_t epoch, int nodes, const std::string& prefix) {
  v1::Inventory inventory;
  inventory.set_epoch(epoch);
  inventory.set_full(true);
  for (int i = 0; i < nodes; ++i) {
    v1::Node* node = inventory.add_nodes();
    node->set_id(i);
    node->set_name(fmt::format("{}{}", prefix, i));
    node->set_cpu(64000);
    node->set_allocatable_cpu(64000);
    (*node->mutable_labels())["rack"] = fmt::format("r{}", i / 16);
    for (int g = 0; g < 8; ++g) {
      v1::GpuDevice* gpu = node->add_gpus();
      gpu->set_index(g);
      gpu->set_model("H100");
      gpu->set_healthy(true);
    }
    node->set_ready(true);
  }
  return inventory;
}

v1::Register Hello(std::string cluster) {
  v1::Register request;
  request.set_cluster(std::move(cluster));
  request.set_backend("sim");
  return request;
}

class RegistrationLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("registration_limits_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    clusters_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  void Open(store::SqliteStoreOptions options) {
    options.data_dir = (dir_ / "store").string();
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        store::SqliteStore::Open(std::move(options));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    names_ = std::make_unique<NodeNames>();
    clusters_ = std::make_unique<AgentClusters>(
        AgentClustersOptions{.clock = &clock_,
                             .store = store_.get(),
                             .node_names = names_.get(),
                             .task_observer = &observer_,
                             .inventory_observer = &observer_,
                             .attach = [this](Cluster* cluster) { attached_.push_back(cluster); }});
    ASSERT_TRUE(clusters_->Load().ok());
  }

  // Registers `cluster` and sends its first inventory; returns what the inventory got.
  absl::Status Register(const std::string& cluster, v1::Inventory inventory, NullChannel& channel) {
    absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> attached =
        clusters_->Attach(&channel, Hello(cluster));
    if (!attached.ok()) return attached.status();
    inventory.set_epoch(attached->second);
    return attached->first->OnInventory(attached->second, inventory);
  }

  std::vector<std::string> StoredKeys() {
    absl::StatusOr<store::RangeResult> range = store_->Range({.prefix = "/tessera/clusters/"});
    EXPECT_TRUE(range.ok()) << range.status();
    std::vector<std::string> keys;
    for (const store::KeyValue& kv : range->kvs) keys.push_back(kv.key);
    return keys;
  }

  // Nothing of `cluster` is kept: not stored, not handed to the scheduler, its node names free
  // for another cluster.
  void ExpectNothingKept(const std::string& node_prefix, int nodes) {
    EXPECT_THAT(StoredKeys(), IsEmpty());
    EXPECT_THAT(attached_, IsEmpty());
    EXPECT_EQ(observer_.changes, 0u);
    for (int i = 0; i < nodes; ++i) {
      EXPECT_TRUE(names_->Claim(fmt::format("{}{}", node_prefix, i), "other").ok()) << i;
      names_->Release(fmt::format("{}{}", node_prefix, i), "other");
    }
  }

  fs::path dir_;
  ManualClock clock_{TimePoint(Duration(1'000'000))};
  CountingObserver observer_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<NodeNames> names_;
  std::unique_ptr<AgentClusters> clusters_;
  std::vector<Cluster*> attached_;
};

TEST_F(RegistrationLimitsTest, ANodeTooLargeToStoreIsRefusedNamingItAndNothingIsKept) {
  Open({.limits = {.max_value_bytes = 4096}});
  v1::Inventory inventory = Inventory(0, 3, "east-n");
  for (int i = 0; i < 100; ++i) {
    (*inventory.mutable_nodes(1)->mutable_labels())[fmt::format("feature-{}", i)] =
        std::string(60, 'f');
  }
  NullChannel channel;
  const absl::Status refused = Register("east", inventory, channel);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("inventory.nodes[1].labels: node \"east-n1\" is too "
                                           "large to store"));
  EXPECT_THAT(channel.sent, IsEmpty());  // no resync: the session never started
  ExpectNothingKept("east-n", 3);

  // The agent, its labels fixed, registers the cluster whole.
  NullChannel again;
  ASSERT_TRUE(Register("east", Inventory(0, 3, "east-n"), again).ok());
  EXPECT_THAT(attached_, SizeIs(1));
  EXPECT_THAT(StoredKeys(), SizeIs(4));  // the cluster and its three nodes
}

TEST_F(RegistrationLimitsTest, TooManyClusterLabelsToStoreAreRefusedAtRegistration) {
  Open({.limits = {.max_value_bytes = 1024}});
  v1::Register hello = Hello("east");
  for (int i = 0; i < 40; ++i) {
    (*hello.mutable_labels())[fmt::format("zone-{}", i)] = std::string(40, 'z');
  }
  NullChannel channel;
  const absl::Status refused = clusters_->Attach(&channel, hello).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("register.labels: 40 labels"));
  EXPECT_THAT(StoredKeys(), IsEmpty());
}

TEST_F(RegistrationLimitsTest, AnInventoryLargerThanOneTransactionIsStoredInSeveral) {
  Open({.limits = {.max_total_bytes = 16 * 1024}});
  NullChannel channel;
  ASSERT_TRUE(Register("east", Inventory(0, 200, "east-n"), channel).ok());
  EXPECT_THAT(StoredKeys(), SizeIs(201));
  EXPECT_THAT(attached_, SizeIs(1));
  clusters_.reset();
  store_.reset();
  Open({.limits = {.max_total_bytes = 16 * 1024}});
  ASSERT_THAT(clusters_->clusters(), SizeIs(1));
  EXPECT_THAT(clusters_->clusters()[0]->Inventory(), SizeIs(200));
}

TEST_F(RegistrationLimitsTest, AStoreThatFillsUpWhileTheClusterIsFirstStoredKeepsNothing) {
  // A database quota reached part way through the nodes: the writes before it succeeded.
  Open({.limits = {.max_total_bytes = 16 * 1024}, .max_database_bytes = 256 * 1024});
  NullChannel channel;
  const absl::Status refused = Register("east", Inventory(0, 3000, "east-n"), channel);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("cluster east is not registered"));
  EXPECT_THAT(channel.sent, IsEmpty());
  ExpectNothingKept("east-n", 3000);
  // After a restart too: nothing of it comes back.
  clusters_.reset();
  store_.reset();
  Open({.max_database_bytes = 256 * 1024});
  EXPECT_THAT(clusters_->clusters(), IsEmpty());
  EXPECT_THAT(StoredKeys(), IsEmpty());
}

}  // namespace
}  // namespace tessera::server
