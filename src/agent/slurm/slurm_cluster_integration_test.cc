// agent_slurm_test: SlurmCluster against a real Slurm — slurmctld, four slurmd virtual nodes
// with eight fake H100s each, slurmrestd with JWT and a private munge, all on loopback —
// started by scripts/slurm/start-slurm.sh before the first test and stopped (state removed)
// after the last. Needs root (the script installs missing Debian packages and runs the
// daemons). TESSERA_SLURM_TEST_INSTANCE (default 6) picks the script's instance: its ports and
// state directory, so a developer's own Slurm instance is left alone.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "agent/slurm/slurm_api_probe.h"
#include "agent/slurm/slurm_cluster.h"
#include "agent/slurm/slurm_inventory.h"
#include "agent/slurm/slurm_rest_client.h"
#include "agent/slurm/testing/real_slurm.h"
#include "core/job_phase.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::HasSubstr;

constexpr auto kDeadline = std::chrono::seconds(120);
constexpr int kNodes = 4;
constexpr int kGpusPerNode = 8;

std::string Instance() {
  const char* instance = std::getenv("TESSERA_SLURM_TEST_INSTANCE");
  return instance != nullptr ? instance : "6";
}

// The Slurm the tests share: started before the first test, stopped after the last.
testing::RealSlurm* slurm = nullptr;

class SlurmEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override { slurm = new testing::RealSlurm(Instance(), kNodes, kGpusPerNode); }
  void TearDown() override {
    delete slurm;
    slurm = nullptr;
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new SlurmEnvironment());

class Recorder final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view launch_id, TimePoint time) override {
    std::lock_guard<std::mutex> lock(mu_);
    started_[std::string(launch_id)] = time;
    events_.push_back(fmt::format("{} started", launch_id));
    changed_.notify_all();
  }
  void OnTaskEnded(const TaskEnd& end) override {
    std::lock_guard<std::mutex> lock(mu_);
    ends_[end.launch_id] = end;
    events_.push_back(fmt::format("{} ended {}", end.launch_id, TaskPhaseName(end.phase)));
    changed_.notify_all();
  }
  // Every start and end reported, in order: "<launch id> started", "<launch id> ended <phase>".
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  bool WaitStarted(const std::string& id) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kDeadline, [&] { return started_.contains(id); });
  }
  std::optional<TaskEnd> WaitEnded(const std::string& id) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, kDeadline, [&] { return ends_.contains(id); });
    if (!ends_.contains(id)) return std::nullopt;
    return ends_[id];
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, TimePoint> started_;
  std::map<std::string, TaskEnd> ends_;
  std::vector<std::string> events_;
};

// The real HTTP transport, recording each request's path and status.
class RecordingTransport final : public SlurmTransport {
 public:
  explicit RecordingTransport(std::unique_ptr<SlurmTransport> inner) : inner_(std::move(inner)) {}
  absl::StatusOr<SlurmHttpReply> Send(std::string_view method, const std::string& path,
                                      const std::string& body) override {
    absl::StatusOr<SlurmHttpReply> reply = inner_->Send(method, path, body);
    std::lock_guard<std::mutex> lock(mu_);
    exchanges_.push_back(
        fmt::format("{} {} {}", method, path, reply.ok() ? std::to_string(reply->status) : "-"));
    return reply;
  }
  // "GET /slurm/v0.0.38/jobs?update_time=1796194748 304", ...
  std::vector<std::string> Exchanges() {
    std::lock_guard<std::mutex> lock(mu_);
    return exchanges_;
  }

 private:
  std::unique_ptr<SlurmTransport> inner_;
  std::mutex mu_;
  std::vector<std::string> exchanges_;
};

bool WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

class SlurmIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(slurm, nullptr);
    ASSERT_TRUE(slurm->error().empty()) << slurm->error();
    absl::StatusOr<std::unique_ptr<SlurmTransport>> transport = NewHttpSlurmTransport(
        {.url = slurm->Var("SLURM_REST_URL"), .user = "root", .jwt = slurm->Var("SLURM_JWT")});
    ASSERT_TRUE(transport.ok()) << transport.status();
    transport_ = *std::move(transport);
    rest_ = std::make_unique<SlurmRestClient>(transport_.get(), "v0.0.38");
    cluster_ = MakeCluster(recorder_);
  }

  std::unique_ptr<SlurmCluster> MakeCluster(Recorder& recorder,
                                            std::shared_ptr<SlurmTransport> transport = nullptr) {
    SlurmClusterOptions flags;
    flags.name = "hpc";
    flags.labels = {{"site", "test"}};
    flags.url = slurm->Var("SLURM_REST_URL");
    flags.jwt = slurm->Var("SLURM_JWT");
    flags.user = slurm->Var("SLURM_REST_USER");
    flags.poll_interval = Duration(200);
    flags.log_dir = slurm->Var("SLURM_TEST_DIR") + "/jobs";
    absl::StatusOr<SlurmClusterOptions> options =
        SlurmClusterOptions::FromEnvironment(flags, [](std::string_view) { return std::nullopt; });
    EXPECT_TRUE(options.ok()) << options.status();
    if (transport != nullptr) {
      // The agent's own pace: jobs every 200 ms while Tessera's are in Slurm, else every 1 s.
      options->poll_interval = Duration(1000);
      options->transport = std::move(transport);
    }
    absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster =
        SlurmCluster::Create(*options, &recorder);
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    return cluster.ok() ? *std::move(cluster) : nullptr;
  }

  TaskLaunchSpec Spec(std::string id, std::string node, std::string script,
                      std::vector<int32_t> gpus = {}) {
    TaskLaunchSpec spec;
    spec.launch_id = std::move(id);
    spec.job_id = "job";
    spec.placement.node = std::move(node);
    spec.placement.gpus = {gpus.begin(), gpus.end()};
    spec.command = {"/bin/sh", "-c", std::move(script)};
    spec.time_limit = std::chrono::minutes(10);
    return spec;
  }

  std::optional<SlurmJob> SlurmJobOf(const std::string& launch_id) {
    std::optional<int64_t> id = cluster_->JobIdOf(launch_id);
    if (!id.has_value()) return std::nullopt;
    absl::StatusOr<std::optional<SlurmJob>> job = rest_->Job(*id);
    return job.ok() ? *job : std::nullopt;
  }

  std::optional<Node> InventoryNode(const std::string& name) {
    for (Node& node : cluster_->Inventory()) {
      if (node.name == name) return std::move(node);
    }
    return std::nullopt;
  }

  // The memory Slurm has allocated on `node` (bytes) as last read; -1 when unknown.
  int64_t UsedMemory(const std::string& node) {
    for (const NodeUsage& usage : cluster_->Usage()) {
      if (usage.node == node) return usage.memory.value_or(-1);
    }
    return -1;
  }

  static void Scontrol(const std::string& args) {
    ASSERT_TRUE(slurm->Scontrol(args).has_value()) << "scontrol " << args;
  }

  std::shared_ptr<SlurmTransport> transport_;
  std::unique_ptr<SlurmRestClient> rest_;
  Recorder recorder_;
  std::unique_ptr<SlurmCluster> cluster_;
};

// Slurm 22.05's slurmrestd serves v0.0.38 alone of the supported versions: the probe answers
// v0.0.38 (v0.0.43 down to v0.0.39 are answered 404), and a cluster left on "auto" speaks it.
TEST_F(SlurmIntegrationTest, TheProbeFindsV38) {
  absl::StatusOr<SlurmApiVersion> version = ProbeSlurmApiVersion(*transport_);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, SlurmApiVersion::kV38);
  SlurmRestClient v43(transport_.get(), "v0.0.43");
  absl::StatusOr<bool> served = v43.ServesVersion();
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_FALSE(*served);

  SlurmClusterOptions flags;
  flags.url = slurm->Var("SLURM_REST_URL");
  flags.jwt = slurm->Var("SLURM_JWT");
  flags.user = slurm->Var("SLURM_REST_USER");
  absl::StatusOr<SlurmClusterOptions> options =
      SlurmClusterOptions::FromEnvironment(flags, [](std::string_view) { return std::nullopt; });
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->api_version, "auto");
  auto lines = std::make_shared<std::vector<std::string>>();
  auto lines_mu = std::make_shared<std::mutex>();
  options->log = [lines, lines_mu](std::string_view line) {
    std::lock_guard<std::mutex> lock(*lines_mu);
    lines->emplace_back(line);
  };
  Recorder recorder;
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Create(*options, &recorder);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::lock_guard<std::mutex> lock(*lines_mu);
  EXPECT_THAT(*lines, ::testing::Contains(
                          "slurmrestd REST API v0.0.38 (the newest of v0.0.38 to v0.0.43 that "
                          "slurmrestd serves)"));
}

TEST_F(SlurmIntegrationTest, ATokenFileIsReadAgainWhenItChanges) {
  const std::string path = slurm->Var("SLURM_TEST_DIR") + "/token-file-test.jwt";
  const auto write = [&](const std::string& token) { std::ofstream(path) << token << "\n"; };
  write(slurm->Var("SLURM_JWT"));
  absl::StatusOr<std::unique_ptr<SlurmTransport>> transport = NewHttpSlurmTransport(
      {.url = slurm->Var("SLURM_REST_URL"), .user = "root", .jwt_file = path});
  ASSERT_TRUE(transport.ok()) << transport.status();
  SlurmRestClient rest(transport->get(), "v0.0.38");
  EXPECT_TRUE(rest.Nodes().ok());

  write("not-a-token");  // rotated to a bad token: refused, and slurmrestd closes the connection
  const absl::Status refused = rest.Nodes().status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnauthenticated) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("check the user name and the JWT"));
  write(slurm->Var("SLURM_JWT"));  // and back, on a fresh connection
  for (int i = 0; i < 20; ++i) {
    const absl::StatusOr<std::string> nodes = rest.Nodes();
    EXPECT_TRUE(nodes.ok()) << "request " << i << ": " << nodes.status();
  }

  std::remove(path.c_str());
  const absl::Status missing = rest.Nodes().status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(missing.message(), HasSubstr(path));
}

TEST_F(SlurmIntegrationTest, InventoryShowsTheNodesAndTheirGpus) {
  ASSERT_NE(cluster_, nullptr);
  const std::vector<Node> nodes = cluster_->Inventory();
  ASSERT_EQ(nodes.size(), static_cast<size_t>(kNodes));
  for (int i = 0; i < kNodes; ++i) {
    const Node& node = nodes[i];
    EXPECT_EQ(node.name, fmt::format("node{}", i + 1));
    EXPECT_EQ(node.cluster, "hpc");
    EXPECT_EQ(node.pool, "gpu");
    EXPECT_EQ(node.labels.at("tessera.io/cluster"), "hpc");
    EXPECT_EQ(node.labels.at("tessera.io/partitions"), "gpu");
    EXPECT_EQ(node.labels.at("site"), "test");
    EXPECT_EQ(node.capacity.cpu, 8000);
    EXPECT_EQ(node.capacity.memory, int64_t{65536} << 20);
    ASSERT_EQ(node.gpus.size(), static_cast<size_t>(kGpusPerNode));
    EXPECT_EQ(node.GpuModel(), "H100");
    EXPECT_EQ(node.condition, NodeCondition::kReady);
    EXPECT_FALSE(node.unschedulable);
  }
  EXPECT_EQ(cluster_->Usage().size(), static_cast<size_t>(kNodes));
}

TEST_F(SlurmIntegrationTest, PinnedLaunchRunsOnItsNodeAndSucceeds) {
  ASSERT_NE(cluster_, nullptr);
  cluster_->Launch(Spec("hi-1", "node3", "echo hi"));
  std::optional<TaskEnd> end = recorder_.WaitEnded("hi-1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded) << end->reason << ": " << end->message;
  EXPECT_EQ(end->exit_code, 0);
  std::optional<SlurmJob> job = SlurmJobOf("hi-1");
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->nodes, "node3");
  EXPECT_EQ(job->name, "hi-1");
  EXPECT_EQ(job->comment, "tessera:hi-1");
  absl::StatusOr<LogChunk> log = cluster_->ReadLog("hi-1", LogStream::kStdout, 0, 1 << 20);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->data, "hi\n");
  EXPECT_TRUE(log->end);
}

TEST_F(SlurmIntegrationTest, TaskGetsItsGpusAndEnvironment) {
  ASSERT_NE(cluster_, nullptr);
  TaskLaunchSpec spec =
      Spec("env-1", "node2",
           "echo \"$SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $TESSERA_TASK_ID $GREETING\"; "
           "echo \"cpus $SLURM_JOB_CPUS_PER_NODE memory $SLURM_MEM_PER_NODE\"; "
           "echo oops >&2; exit 3",
           {5, 6});
  spec.env = {{"GREETING", "it's me"}};
  spec.cpu = 1500;                 // two CPUs, rounded up
  spec.memory = int64_t{1} << 30;  // 1024 MiB
  cluster_->Launch(spec);
  std::optional<TaskEnd> end = recorder_.WaitEnded("env-1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "Error");
  EXPECT_EQ(end->exit_code, 3);
  absl::StatusOr<LogChunk> out = cluster_->ReadLog("env-1", LogStream::kStdout, 0, 1 << 20);
  ASSERT_TRUE(out.ok()) << out.status();
  // Slurm numbers the devices it hands out itself: two of them.
  EXPECT_EQ(out->data, "node2 0,1 env-1 it's me\ncpus 2 memory 1024\n");
  absl::StatusOr<LogChunk> err = cluster_->ReadLog("env-1", LogStream::kStderr, 0, 1 << 20);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_EQ(err->data, "oops\n");
}

// The requests of a launch reach Slurm as Slurm's own job fields: CPUs, memory, time limit,
// GPUs per node and the node Tessera chose.
TEST_F(SlurmIntegrationTest, RequestsReachSlurmsJob) {
  ASSERT_NE(cluster_, nullptr);
  TaskLaunchSpec spec = Spec("req-1", "node4", "sleep 600", {0, 1});
  spec.cpu = 3000;
  spec.memory = int64_t{3} << 30;  // 3 GiB
  spec.time_limit = std::chrono::minutes(7);
  cluster_->Launch(spec);
  ASSERT_TRUE(WaitUntil([&] { return cluster_->JobIdOf("req-1").has_value(); }));
  const int64_t job = *cluster_->JobIdOf("req-1");
  const std::optional<std::string> shown = slurm->Scontrol(fmt::format("show job {}", job));
  ASSERT_TRUE(shown.has_value());
  EXPECT_THAT(*shown, HasSubstr("NumCPUs=3 "));
  EXPECT_THAT(*shown, HasSubstr("MinMemoryNode=3G "));
  EXPECT_THAT(*shown, HasSubstr("TimeLimit=00:07:00 "));
  EXPECT_THAT(*shown, HasSubstr("ReqNodeList=node4 "));
  EXPECT_THAT(*shown, HasSubstr("TresPerNode=gres:gpu:2"));
  EXPECT_THAT(*shown, HasSubstr("Comment=tessera:req-1 "));
  cluster_->Cancel("req-1", Duration(0));
  ASSERT_TRUE(recorder_.WaitEnded("req-1").has_value());
}

// Incremental polling against the real slurmrestd: polls in which nothing changed are answered
// 304, and every start and end — completed, failed, cancelled — is reported exactly once.
TEST_F(SlurmIntegrationTest, IncrementalPollingReportsEachStateChangeOnce) {
  auto http = NewHttpSlurmTransport(
      {.url = slurm->Var("SLURM_REST_URL"), .user = "root", .jwt = slurm->Var("SLURM_JWT")});
  ASSERT_TRUE(http.ok()) << http.status();
  auto transport = std::make_shared<RecordingTransport>(*std::move(http));
  Recorder recorder;
  std::unique_ptr<SlurmCluster> cluster = MakeCluster(recorder, transport);
  ASSERT_NE(cluster, nullptr);
  cluster->Launch(Spec("once-ok", "node1", "true"));
  cluster->Launch(Spec("once-fail", "node2", "exit 5"));
  cluster->Launch(Spec("once-cancel", "node3", "sleep 600"));
  ASSERT_TRUE(recorder.WaitEnded("once-ok").has_value());
  ASSERT_TRUE(recorder.WaitEnded("once-fail").has_value());
  ASSERT_TRUE(recorder.WaitStarted("once-cancel"));
  // While only the sleep runs, nothing changes in Slurm: the polls are answered 304.
  EXPECT_TRUE(WaitUntil([&] {
    for (const std::string& exchange : transport->Exchanges()) {
      if (exchange.starts_with("GET /slurm/v0.0.38/jobs?update_time=") &&
          exchange.ends_with(" 304")) {
        return true;
      }
    }
    return false;
  }));
  cluster->Cancel("once-cancel", Duration(0));
  ASSERT_TRUE(recorder.WaitEnded("once-cancel").has_value());
  // A later job's end comes after several more polls: none of them repeated an earlier change.
  cluster->Launch(Spec("once-last", "node4", "true"));
  const std::optional<TaskEnd> last = recorder.WaitEnded("once-last");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->phase, TaskPhase::kSucceeded) << last->reason << ": " << last->message;
  std::vector<std::string> events = recorder.Events();
  std::sort(events.begin(), events.end());
  EXPECT_THAT(events, ::testing::ElementsAre("once-cancel ended Cancelled", "once-cancel started",
                                             "once-fail ended Failed", "once-fail started",
                                             "once-last ended Succeeded", "once-last started",
                                             "once-ok ended Succeeded", "once-ok started"));
}

// slurmctld logs each end to its job-completion log, which the cluster follows: the end
// arrives although the first poll is ten minutes away (past WaitEnded's deadline), and as the
// log tells a completed job's end whole, slurmrestd is not asked about the job at all.
TEST_F(SlurmIntegrationTest, AnEndInSlurmsJobCompletionLogIsReportedWithoutWaitingForAPoll) {
  ASSERT_FALSE(slurm->Var("SLURM_JOBCOMP_FILE").empty());
  cluster_.reset();
  absl::StatusOr<std::unique_ptr<SlurmTransport>> http = NewHttpSlurmTransport(
      {.url = slurm->Var("SLURM_REST_URL"), .user = "root", .jwt = slurm->Var("SLURM_JWT")});
  ASSERT_TRUE(http.ok()) << http.status();
  auto transport = std::make_shared<RecordingTransport>(*std::move(http));
  SlurmClusterOptions options;
  options.name = "hpc";
  options.transport = transport;
  options.user = "root";
  options.poll_interval = std::chrono::minutes(10);
  options.log_dir = slurm->Var("SLURM_TEST_DIR") + "/jobs";
  options.jobcomp_file = slurm->Var("SLURM_JOBCOMP_FILE");
  Recorder recorder;
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster =
      SlurmCluster::Create(std::move(options), &recorder);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // The poll thread's first poll (nodes read again) is over: the next is ten minutes away.
  ASSERT_TRUE(WaitUntil([&] {
    const std::vector<std::string> exchanges = transport->Exchanges();
    return std::count_if(exchanges.begin(), exchanges.end(), [](const std::string& exchange) {
             return exchange.starts_with("GET /slurm/v0.0.38/nodes");
           }) >= 2;
  }));
  (*cluster)->Launch(Spec("logged-1", "node2", "echo hi"));
  std::optional<TaskEnd> end = recorder.WaitEnded("logged-1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded) << end->reason << ": " << end->message;
  EXPECT_EQ(recorder.Events(),
            (std::vector<std::string>{"logged-1 started", "logged-1 ended Succeeded"}));
  for (const std::string& exchange : transport->Exchanges()) {
    EXPECT_FALSE(exchange.starts_with("GET /slurm/v0.0.38/job")) << exchange;
  }
}

TEST_F(SlurmIntegrationTest, RefusedLaunchIsStartFailed) {
  ASSERT_NE(cluster_, nullptr);
  cluster_->Launch(Spec("toomany-1", "node1", "true", {0, 1, 2, 3, 4, 5, 6, 7, 8}));
  std::optional<TaskEnd> end = recorder_.WaitEnded("toomany-1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "StartFailed");
  EXPECT_THAT(end->message, HasSubstr("Slurm refused the job"));
}

TEST_F(SlurmIntegrationTest, CancelledSleepEndsCancelled) {
  ASSERT_NE(cluster_, nullptr);
  cluster_->Launch(Spec("sleep-1", "node1", "sleep 600"));
  ASSERT_TRUE(recorder_.WaitStarted("sleep-1"));
  cluster_->Cancel("sleep-1", std::chrono::seconds(2));
  std::optional<TaskEnd> end = recorder_.WaitEnded("sleep-1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kCancelled) << end->message;
  std::optional<SlurmJob> job = SlurmJobOf("sleep-1");
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(PhaseOf(job->state), SlurmJobPhase::kEnded) << job->state;
}

TEST_F(SlurmIntegrationTest, NodeStateFollowsScontrol) {
  ASSERT_NE(cluster_, nullptr);
  Scontrol("update nodename=node2 state=down reason=test");
  EXPECT_TRUE(WaitUntil([&] {
    std::optional<Node> node = InventoryNode("node2");
    return node.has_value() && node->condition == NodeCondition::kDown;
  }));
  Scontrol("update nodename=node2 state=resume");
  EXPECT_TRUE(WaitUntil([&] {
    std::optional<Node> node = InventoryNode("node2");
    return node.has_value() && node->condition == NodeCondition::kReady;
  }));
  Scontrol("update nodename=node4 state=drain reason=test");
  EXPECT_TRUE(WaitUntil([&] {
    std::optional<Node> node = InventoryNode("node4");
    return node.has_value() && node->unschedulable;
  }));
  Scontrol("update nodename=node4 state=resume");
  EXPECT_TRUE(WaitUntil([&] {
    std::optional<Node> node = InventoryNode("node4");
    return node.has_value() && !node->unschedulable && node->condition == NodeCondition::kReady;
  }));
}

int HealthyGpus(const Node& node) {
  int count = 0;
  for (const GpuDevice& d : node.gpus) count += d.healthy ? 1 : 0;
  return count;
}

// A job submitted with sbatch, beside Tessera (a "foreign" job), is taken out of what node2
// offers, and given back when it is cancelled; a Tessera job running beside it is not taken out
// a second time.
TEST_F(SlurmIntegrationTest, ForeignJobsAreTakenOutOfTheOffer) {
  ASSERT_NE(cluster_, nullptr);
  const std::optional<std::string> submitted =
      slurm->Tool("sbatch",
                  "--parsable -p gpu -w node2 -c 6 --mem=6144 --gres=gpu:2 -o /dev/null "
                  "--wrap 'sleep 600'");
  ASSERT_TRUE(submitted.has_value());
  const std::string foreign = submitted->substr(0, submitted->find_first_of(";\n"));
  absl::Cleanup cancel_foreign = [&] { slurm->Tool("scancel", foreign); };
  EXPECT_TRUE(WaitUntil([&] {
    std::optional<Node> node = InventoryNode("node2");
    return node.has_value() && node->allocatable.cpu == 2000 && HealthyGpus(*node) == 6;
  })) << "node2 allocatable cpu "
      << InventoryNode("node2")->allocatable.cpu;
  std::optional<Node> node2 = InventoryNode("node2");
  EXPECT_EQ(node2->allocatable.memory, int64_t{65536 - 6144} << 20);
  EXPECT_EQ(node2->allocatable.gpu, 6000);
  EXPECT_EQ(node2->capacity.cpu, 8000);
  // Slurm 22.05's own words for it: alloc_cpus 6, alloc_memory 6144, gres_used
  // "gpu:h100:2(IDX:0-1)".
  absl::StatusOr<std::string> reply = rest_->Nodes();
  ASSERT_TRUE(reply.ok()) << reply.status();
  absl::StatusOr<SlurmNodeList> list = ParseSlurmNodes(*reply, {});
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->nodes.size(), static_cast<size_t>(kNodes));
  EXPECT_EQ(list->nodes[1].allocated,
            (SlurmHeld{.cpu = 6000, .memory = int64_t{6144} << 20, .gpus = 2}));

  // Tessera's own job of 1 CPU, 1 GiB and 1 GPU beside it: once Slurm runs it and the node list
  // shows it, node2 still offers all but the foreign job.
  TaskLaunchSpec spec = Spec("beside-1", "node2", "sleep 600", {0});
  spec.cpu = 1000;
  spec.memory = int64_t{1024} << 20;
  cluster_->Launch(spec);
  ASSERT_TRUE(recorder_.WaitStarted("beside-1"));
  // Slurm's allocated memory (the usage, read with the nodes) shows both jobs.
  EXPECT_TRUE(WaitUntil([&] {
    std::optional<Node> node = InventoryNode("node2");
    return UsedMemory("node2") == int64_t{6144 + 1024} << 20 && node->allocatable.cpu == 2000 &&
           node->allocatable.memory == int64_t{65536 - 6144} << 20 && HealthyGpus(*node) == 6;
  })) << "node2 allocatable cpu "
      << InventoryNode("node2")->allocatable.cpu;
  cluster_->Cancel("beside-1", Duration(0));
  ASSERT_TRUE(recorder_.WaitEnded("beside-1").has_value());

  std::move(cancel_foreign).Invoke();
  EXPECT_TRUE(WaitUntil([&] {
    std::optional<Node> node = InventoryNode("node2");
    return node.has_value() && node->allocatable == node->capacity && HealthyGpus(*node) == 8;
  }));
}

TEST_F(SlurmIntegrationTest, RecoverKeepsKnownAndKillsUnknownTesseraJobs) {
  ASSERT_NE(cluster_, nullptr);
  cluster_->Launch(Spec("known-1", "node1", "sleep 600"));
  cluster_->Launch(Spec("orphan-1", "node2", "sleep 600"));
  ASSERT_TRUE(recorder_.WaitStarted("known-1"));
  ASSERT_TRUE(recorder_.WaitStarted("orphan-1"));
  const int64_t known_job = cluster_->JobIdOf("known-1").value();
  const int64_t orphan_job = cluster_->JobIdOf("orphan-1").value();
  cluster_.reset();  // the agent goes away; its jobs keep running

  Recorder recorder;
  std::unique_ptr<SlurmCluster> restarted = MakeCluster(recorder);
  ASSERT_NE(restarted, nullptr);
  KnownLaunch known;
  known.spec = Spec("known-1", "node1", "sleep 600");
  known.start_time = TimePoint(Duration(1));
  KnownLaunch lost;
  lost.spec = Spec("lost-1", "node3", "true");
  EXPECT_THAT(restarted->Recover({known, lost}), ::testing::ElementsAre("known-1"));
  EXPECT_EQ(restarted->JobIdOf("known-1"), known_job);
  std::optional<TaskEnd> end = recorder.WaitEnded("lost-1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "LostOnRestart");
  EXPECT_TRUE(WaitUntil([&] {
    absl::StatusOr<std::optional<SlurmJob>> job = rest_->Job(orphan_job);
    return job.ok() && job->has_value() && PhaseOf((*job)->state) == SlurmJobPhase::kEnded;
  }));
  absl::StatusOr<std::optional<SlurmJob>> still = rest_->Job(known_job);
  ASSERT_TRUE(still.ok() && still->has_value());
  EXPECT_EQ(PhaseOf((*still)->state), SlurmJobPhase::kRunning);

  restarted->Cancel("known-1", Duration(0));
  end = recorder.WaitEnded("known-1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kCancelled);
}

}  // namespace
}  // namespace tessera::agent
