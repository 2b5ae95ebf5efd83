// `tessera server --store etcd`: a real server process whose state lives in a real etcd that
// the test starts (Debian's etcd-server). A job runs to its end; a server started afterwards on
// another, empty data directory finds it in etcd; a server whose etcd does not answer exits
// with an error naming it.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rest_api.h"
#include "server_process.h"
#include "store/etcd/testing/etcd_process.h"
#include "temp_dir.h"

namespace tessera::integration {
namespace {

using ::testing::HasSubstr;

class ServerEtcdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<store::testing::EtcdProcess>> etcd =
        store::testing::EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
  }

  std::unique_ptr<ServerProcess> Server(const std::string& data, const std::string& endpoint) {
    return std::make_unique<ServerProcess>(ServerOptions{
        .data_dir = dir_.Sub(data),
        .log_dir = dir_.path(),
        .extra_args = {"--store", "etcd", "--etcd-endpoints", endpoint, "--rate-limit", "0"}});
  }

  TempDir dir_{"tessera-it-etcd"};
  std::unique_ptr<store::testing::EtcdProcess> etcd_;
};

TEST_F(ServerEtcdTest, JobsLiveInEtcdAcrossServers) {
  std::unique_ptr<ServerProcess> first = Server("first", etcd_->endpoint());
  ASSERT_TRUE(first->Start().ok()) << first->Log();
  const RestApi api(first->host(), first->http_port(), first->admin_token());
  const HttpAnswer submitted = api.Submit(ShellJob("on-etcd", "echo hi; exit 0"));
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["metadata"].value("id", "");
  const Json ended = api.WaitForEnd(id);
  ASSERT_TRUE(ended.is_object());
  EXPECT_EQ(ended["status"]["phase"], "Succeeded") << ended.dump();
  first->Stop();

  // Another data directory: only etcd holds the job (the admin token is the new server's).
  std::unique_ptr<ServerProcess> second = Server("second", etcd_->endpoint());
  ASSERT_TRUE(second->Start().ok()) << second->Log();
  const RestApi again(second->host(), second->http_port(), second->admin_token());
  const HttpAnswer job = again.Job(id);
  ASSERT_EQ(job.status, 200) << job.text;
  EXPECT_EQ(job.body["status"]["phase"], "Succeeded");
  EXPECT_EQ(job.body["metadata"]["name"], "on-etcd");
}

TEST_F(ServerEtcdTest, AnEtcdThatDoesNotAnswerStopsTheServerWithItsAddress) {
  std::unique_ptr<ServerProcess> server = Server("data", "127.0.0.1:1");
  const absl::Status started = server->Start(std::chrono::seconds(60));
  ASSERT_FALSE(started.ok());
  EXPECT_THAT(server->Log(), HasSubstr("etcd: cannot connect to 127.0.0.1:1"));
}

}  // namespace
}  // namespace tessera::integration
