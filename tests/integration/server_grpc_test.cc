// The gRPC API end to end: a real `tessera server --dev` process, real task processes on the
// local cluster, the generated tessera.v1.JobService stub over loopback. The same semantics as
// the REST tests (server_rest_test.cc). Every wait is bounded and generous.
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "process_tools.h"
#include "rest_api.h"
#include "server_process.h"
#include "temp_dir.h"
#include "tessera/v1/jobs.grpc.pb.h"

namespace tessera::integration {
namespace {

namespace v1 = ::tessera::v1;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

// The value of trailing metadata `key`, "" when absent.
std::string Trailer(const grpc::ClientContext& context, const std::string& key) {
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto found = trailers.find(key);
  return found == trailers.end() ? "" : std::string(found->second.data(), found->second.size());
}

bool IsTerminal(v1::JobPhase phase) {
  return phase == v1::JOB_PHASE_SUCCEEDED || phase == v1::JOB_PHASE_FAILED ||
         phase == v1::JOB_PHASE_CANCELLED;
}

class ServerGrpcTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer("data", {"--rate-limit", "0"}); }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      const std::string log = server_->Log();
      std::cerr << "--- server log (tail) ---\n"
                << log.substr(log.size() > 8000 ? log.size() - 8000 : 0) << "\n";
    }
  }

  void StartServer(const std::string& data_name, std::vector<std::string> args) {
    stub_.reset();
    server_.reset();
    server_ = std::make_unique<ServerProcess>(ServerOptions{
        .data_dir = dir_.Sub(data_name), .log_dir = dir_.path(), .extra_args = std::move(args)});
    const absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
    admin_ = server_->admin_token();
    stub_ = v1::JobService::NewStub(
        grpc::CreateChannel(server_->grpc_target(), grpc::InsecureChannelCredentials()));
  }

  RestApi Rest() const { return RestApi(server_->host(), server_->http_port(), admin_); }

  // A call context with "authorization: Bearer <token>" (none for an empty token). The
  // deadline only keeps a broken server from hanging the test.
  static std::unique_ptr<grpc::ClientContext> Context(
      const std::string& token, std::chrono::seconds deadline = std::chrono::seconds(60)) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + deadline);
    return context;
  }

  grpc::Status Submit(const std::string& token, const std::string& document,
                      v1::SubmitJobResponse* response) {
    v1::SubmitJobRequest request;
    request.set_document(document);
    return stub_->SubmitJob(Context(token).get(), request, response);
  }

  // Submits as `token` (the admin by default), expecting success; returns the job's id.
  std::string SubmitOk(const std::string& document) { return SubmitOk(admin_, document); }
  std::string SubmitOk(const std::string& token, const std::string& document) {
    v1::SubmitJobResponse response;
    const grpc::Status status = Submit(token, document, &response);
    EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
    EXPECT_TRUE(response.created());
    return response.job().id();
  }

  grpc::Status Get(const std::string& token, const std::string& id, v1::Job* job) {
    v1::GetJobRequest request;
    request.set_job_id(id);
    return stub_->GetJob(Context(token).get(), request, job);
  }

  // Polls GetJob until `done(job)` (at most two minutes); returns the last job read.
  v1::Job WaitForJob(const std::string& id, const std::function<bool(const v1::Job&)>& done) {
    v1::Job job;
    WaitUntil([&] {
      v1::Job read;
      if (!Get(admin_, id, &read).ok()) return false;
      job = read;
      return done(job);
    });
    return job;
  }
  v1::Job WaitForEnd(const std::string& id) {
    return WaitForJob(id, [](const v1::Job& job) { return IsTerminal(job.phase()); });
  }

  std::vector<std::string> EventTypesOf(const std::string& id) {
    v1::ListJobEventsRequest request;
    request.set_job_id(id);
    v1::ListJobEventsResponse response;
    std::vector<std::string> types;
    if (!stub_->ListJobEvents(Context(admin_).get(), request, &response).ok()) return types;
    for (const v1::JobEvent& event : response.events()) types.push_back(event.type());
    return types;
  }

  TempDir dir_{"tessera-it-grpc"};
  std::unique_ptr<ServerProcess> server_;
  std::string admin_;
  std::unique_ptr<v1::JobService::Stub> stub_;
};

TEST_F(ServerGrpcTest, SubmitRunWatchAndRead) {
  v1::SubmitJobResponse submitted;
  const std::string yaml =
      "apiVersion: tessera/v1\nkind: Job\nmetadata:\n  name: hello\n"
      "spec:\n  tasks:\n  - name: main\n    command: [sh, -c, 'echo hi']\n";
  const grpc::Status status = Submit(admin_, yaml, &submitted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(submitted.created());
  const v1::Job& job = submitted.job();
  ASSERT_FALSE(job.id().empty());
  EXPECT_EQ(job.tenant(), "admin");
  EXPECT_EQ(job.name(), "hello");
  EXPECT_EQ(job.queue(), "default");
  EXPECT_TRUE(job.has_submit_time());

  // Watch from the start: every event of the job, through Succeeded.
  v1::WatchJobEventsRequest watch;
  watch.set_job_id(job.id());
  watch.set_after_sequence(0);
  auto context = Context(admin_, std::chrono::seconds(120));
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader =
      stub_->WatchJobEvents(context.get(), watch);
  std::vector<std::string> types;
  int64_t last_sequence = 0;
  v1::JobEvent event;
  while (reader->Read(&event)) {
    EXPECT_EQ(event.job_id(), job.id());
    EXPECT_EQ(event.sequence(), last_sequence + 1) << event.type();
    last_sequence = event.sequence();
    types.push_back(event.type());
    if (event.type() == "Succeeded" || event.type() == "Failed") break;
  }
  context->TryCancel();
  reader->Finish();
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.front(), "Submitted");
  EXPECT_EQ(types.back(), "Succeeded") << ::testing::PrintToString(types);
  EXPECT_EQ(event.phase(), v1::JOB_PHASE_SUCCEEDED);

  v1::Job got = WaitForEnd(job.id());
  EXPECT_EQ(got.phase(), v1::JOB_PHASE_SUCCEEDED);
  EXPECT_EQ(got.cluster(), "local");
  EXPECT_TRUE(got.has_start_time());
  EXPECT_TRUE(got.has_end_time());
  const Json document = Json::parse(got.document_json());
  EXPECT_EQ(document["metadata"]["id"], job.id());
  EXPECT_EQ(document["status"]["tasks"][0]["exitCode"], 0);

  v1::ListJobsResponse listed;
  ASSERT_TRUE(stub_->ListJobs(Context(admin_).get(), {}, &listed).ok());
  ASSERT_EQ(listed.jobs_size(), 1);
  EXPECT_EQ(listed.jobs(0).id(), job.id());
  EXPECT_EQ(listed.next_page_token(), "");

  EXPECT_EQ(EventTypesOf(job.id()), types);

  v1::GetJobLogsRequest logs;
  logs.set_job_id(job.id());
  v1::LogChunk chunk;
  ASSERT_TRUE(WaitUntil([&] {
    return stub_->GetJobLogs(Context(admin_).get(), logs, &chunk).ok() && chunk.end();
  })) << chunk.ShortDebugString();
  EXPECT_EQ(chunk.data(), "hi\n");
  EXPECT_EQ(chunk.next_offset(), 3);
}

TEST_F(ServerGrpcTest, StopEndsAWatchWithUnavailable) {
  v1::WatchJobEventsRequest watch;  // every job the admin may see, from now on
  auto context = Context(admin_, std::chrono::seconds(180));
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader =
      stub_->WatchJobEvents(context.get(), watch);
  // The stream is open once it delivers the events of a job submitted after it.
  SubmitOk(ShellJob("", "exit 0").dump());
  v1::JobEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), "Submitted");

  const int status = server_->Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "wait status " << status << " (the server did not stop by itself on SIGTERM)";
  while (reader->Read(&event)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(ServerGrpcTest, FailureAndTimeLimit) {
  Json failing = ShellJob("fails", "exit 3");
  failing["spec"]["restartPolicy"] = {{"onFailure", "fail"}};
  Json limited = ShellJob("limited", "exec sleep 30");
  limited["spec"]["timeLimit"] = "1s";
  const std::string failing_id = SubmitOk(failing.dump());
  const std::string limited_id = SubmitOk(limited.dump());

  const v1::Job failed = WaitForEnd(failing_id);
  EXPECT_EQ(failed.phase(), v1::JOB_PHASE_FAILED) << failed.ShortDebugString();
  EXPECT_EQ(Json::parse(failed.document_json())["status"]["tasks"][0]["exitCode"], 3);

  const v1::Job timed_out = WaitForEnd(limited_id);
  EXPECT_EQ(timed_out.phase(), v1::JOB_PHASE_FAILED) << timed_out.ShortDebugString();
  EXPECT_EQ(timed_out.reason(), "TimeLimitExceeded");
}

TEST_F(ServerGrpcTest, CancelStopsARunningTask) {
  const std::string pid_file = dir_.Sub("cancel.pid");
  const std::string id =
      SubmitOk(ShellJob("sleeper", absl::StrCat("echo $$ > ", pid_file, "; exec sleep 60")).dump());
  const v1::Job running =
      WaitForJob(id, [](const v1::Job& job) { return job.phase() == v1::JOB_PHASE_RUNNING; });
  ASSERT_EQ(running.phase(), v1::JOB_PHASE_RUNNING);
  ASSERT_TRUE(WaitUntil([&] { return ReadPidFile(pid_file) > 0; }));
  const pid_t pid = ReadPidFile(pid_file);

  v1::CancelJobRequest cancel;
  cancel.set_job_id(id);
  v1::Job answered;
  const grpc::Status status = stub_->CancelJob(Context(admin_).get(), cancel, &answered);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(answered.id(), id);

  EXPECT_EQ(WaitForEnd(id).phase(), v1::JOB_PHASE_CANCELLED);
  EXPECT_TRUE(WaitUntil([&] { return !ProcessAlive(pid); }, std::chrono::seconds(60)))
      << "the task's process " << pid << " is still alive after its job was cancelled";
  std::vector<std::string> types;
  WaitUntil([&] {
    types = EventTypesOf(id);
    return !types.empty() && types.back() == "Cancelled";
  });
  EXPECT_THAT(types, Contains("CancelRequested"));
  EXPECT_EQ(types.back(), "Cancelled");
}

TEST_F(ServerGrpcTest, RetryWithTheSameRequestIdReturnsTheSameJob) {
  Json job = ShellJob("idem", "exit 0");
  job["metadata"]["requestId"] = "grpc-req-1";
  v1::SubmitJobResponse first;
  ASSERT_TRUE(Submit(admin_, job.dump(), &first).ok());
  EXPECT_TRUE(first.created());
  v1::SubmitJobResponse retry;
  ASSERT_TRUE(Submit(admin_, job.dump(), &retry).ok());
  EXPECT_FALSE(retry.created());
  EXPECT_EQ(retry.job().id(), first.job().id());
}

TEST_F(ServerGrpcTest, CallsWithoutAValidTokenAreUnauthenticated) {
  v1::Job job;
  EXPECT_EQ(Get("", "1", &job).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Get("tsr_" + std::string(64, '0'), "1", &job).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::SubmitJobResponse response;
  EXPECT_EQ(Submit("", ShellJob("x", "exit 0").dump(), &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::ListJobsResponse listed;
  EXPECT_EQ(stub_->ListJobs(Context("").get(), {}, &listed).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Basic dXNlcjpwYXNz");
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  EXPECT_EQ(stub_->ListJobs(context.get(), {}, &listed).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(ServerGrpcTest, AnotherTenantsJobIsNotFound) {
  const std::string token_a = Rest().IssueToken("team-a");
  const std::string token_b = Rest().IssueToken("team-b");
  ASSERT_FALSE(token_a.empty());
  ASSERT_FALSE(token_b.empty());
  const std::string id = SubmitOk(token_a, ShellJob("private", "exec sleep 30").dump());
  ASSERT_FALSE(id.empty());

  v1::Job job;
  EXPECT_EQ(Get(token_b, id, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::CancelJobRequest cancel;
  cancel.set_job_id(id);
  EXPECT_EQ(stub_->CancelJob(Context(token_b).get(), cancel, &job).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::ListJobEventsRequest events;
  events.set_job_id(id);
  v1::ListJobEventsResponse events_response;
  EXPECT_EQ(stub_->ListJobEvents(Context(token_b).get(), events, &events_response).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::GetJobLogsRequest logs;
  logs.set_job_id(id);
  v1::LogChunk chunk;
  EXPECT_EQ(stub_->GetJobLogs(Context(token_b).get(), logs, &chunk).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::ExplainJobRequest explain;
  explain.set_job_id(id);
  v1::Explanation explanation;
  EXPECT_EQ(stub_->ExplainJob(Context(token_b).get(), explain, &explanation).error_code(),
            grpc::StatusCode::NOT_FOUND);

  v1::ListJobsResponse b_list;
  ASSERT_TRUE(stub_->ListJobs(Context(token_b).get(), {}, &b_list).ok());
  for (const v1::Job& listed : b_list.jobs()) EXPECT_NE(listed.id(), id);
  v1::ListJobsResponse a_list;
  ASSERT_TRUE(stub_->ListJobs(Context(token_a).get(), {}, &a_list).ok());
  ASSERT_EQ(a_list.jobs_size(), 1);
  EXPECT_EQ(a_list.jobs(0).id(), id);

  // B cannot watch A's job either: refused, or nothing delivered before the deadline.
  v1::WatchJobEventsRequest watch;
  watch.set_job_id(id);
  watch.set_after_sequence(0);
  auto context = Context(token_b, std::chrono::seconds(3));
  auto reader = stub_->WatchJobEvents(context.get(), watch);
  v1::JobEvent event;
  EXPECT_FALSE(reader->Read(&event)) << "tenant B received " << event.ShortDebugString();
  const grpc::Status watch_status = reader->Finish();
  EXPECT_FALSE(watch_status.ok());

  // The job is untouched by B's cancel.
  ASSERT_TRUE(Get(token_a, id, &job).ok());
  EXPECT_FALSE(IsTerminal(job.phase())) << job.ShortDebugString();
  ASSERT_TRUE(stub_->CancelJob(Context(token_a).get(), cancel, &job).ok());
  EXPECT_EQ(WaitForEnd(id).phase(), v1::JOB_PHASE_CANCELLED);
}

TEST_F(ServerGrpcTest, RateLimitIsResourceExhaustedWithRetryAfter) {
  StartServer("data-limited", {"--rate-limit", "0.5"});
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string retry_after;
  for (int i = 0; i < 2000 && code == grpc::StatusCode::OK; ++i) {
    auto context = Context(admin_);
    v1::ListJobsResponse listed;
    const grpc::Status status = stub_->ListJobs(context.get(), {}, &listed);
    code = status.error_code();
    retry_after = Trailer(*context, "retry-after-ms");
  }
  ASSERT_EQ(code, grpc::StatusCode::RESOURCE_EXHAUSTED);
  int64_t milliseconds = 0;
  EXPECT_TRUE(absl::SimpleAtoi(retry_after, &milliseconds)) << "retry-after-ms: " << retry_after;
  EXPECT_GT(milliseconds, 0);
}

TEST_F(ServerGrpcTest, BadSpecIsInvalidArgumentWithTheField) {
  auto context = Context(admin_);
  v1::SubmitJobRequest request;
  request.set_document(R"({"apiVersion": "tessera/v1", "kind": "Job",
      "spec": {"tasks": [{"name": "main", "resources": {"gpu": -1}, "command": ["true"]}]}})");
  v1::SubmitJobResponse response;
  const grpc::Status status = stub_->SubmitJob(context.get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(Trailer(*context, "field"), "spec.tasks[0].resources.gpu");

  v1::ListJobsResponse listed;
  ASSERT_TRUE(stub_->ListJobs(Context(admin_).get(), {}, &listed).ok());
  EXPECT_EQ(listed.jobs_size(), 0);
  v1::Job job;
  EXPECT_EQ(Get(admin_, "", &job).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace tessera::integration
