// GrpcServer end to end: the generated stub over real gRPC on loopback, against an in-memory
// JobService and a real Authenticator on a SQLite store in a temporary directory.
#include "api/grpc/grpc_server.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/grpc/agent_service.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/agent/agent_clusters.h"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"
#include "server/testing/in_memory_job_service.h"
#include "store/sqlite/sqlite_store.h"
#include "tessera/agent/v1/agent.grpc.pb.h"
#include "tessera/v1/jobs.grpc.pb.h"

namespace tessera::api {
namespace {

namespace v1 = ::tessera::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fresh temporary directory, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = std::filesystem::temp_directory_path() / "tessera-grpc-XXXXXX";
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string JobYaml(const std::string& name, const std::string& extra_metadata = "") {
  return absl::StrCat("apiVersion: tessera/v1\nkind: Job\nmetadata:\n  name: ", name, "\n",
                      extra_metadata,
                      "spec:\n  tasks:\n  - name: main\n    command: [sleep, \"5\"]\n");
}

// The value of trailing metadata `key`, "" when absent.
std::string Trailer(const grpc::ClientContext& context, const std::string& key) {
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto found = trailers.find(key);
  return found == trailers.end() ? "" : std::string(found->second.data(), found->second.size());
}

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store = store::SqliteStore::Open(
        {.data_dir = dir_.path() + "/data", .sync = store::SqliteStoreOptions::Sync::kNormal});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    absl::StatusOr<std::unique_ptr<server::Authenticator>> auth =
        server::Authenticator::Create(store_.get());
    ASSERT_TRUE(auth.ok()) << auth.status();
    auth_ = std::move(*auth);
    team_a_ = Issue("team-a", server::Role::kTenant);
    team_b_ = Issue("team-b", server::Role::kTenant);
    admin_ = Issue("ops", server::Role::kAdmin);
    StartServer(nullptr);
  }

  std::string Issue(std::string_view tenant, server::Role role) {
    absl::StatusOr<server::IssuedToken> issued = auth_->IssueToken(tenant, role);
    EXPECT_TRUE(issued.ok()) << issued.status();
    return issued.ok() ? issued->token : "";
  }

  void StartServer(server::RateLimiter* limiter) {
    stub_.reset();
    server_ = std::make_unique<GrpcServer>(
        GrpcServer::Options{.service = &service_, .auth = auth_.get(), .rate_limiter = limiter});
    const absl::Status started = server_->Start("127.0.0.1:0");
    ASSERT_TRUE(started.ok()) << started;
    ASSERT_GT(server_->port(), 0);
    stub_ = v1::JobService::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                                        grpc::InsecureChannelCredentials()));
  }

  // A call context with "authorization: Bearer <token>" (none for an empty token). The
  // deadline only keeps a broken server from hanging the test.
  static std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(1));
    return context;
  }

  v1::SubmitJobResponse Submit(const std::string& token, const std::string& document) {
    v1::SubmitJobRequest request;
    request.set_document(document);
    v1::SubmitJobResponse response;
    const grpc::Status status = stub_->SubmitJob(Context(token).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  grpc::Status Get(const std::string& token, const std::string& id, v1::Job* job) {
    v1::GetJobRequest request;
    request.set_job_id(id);
    return stub_->GetJob(Context(token).get(), request, job);
  }

  TempDir dir_;
  ManualClock clock_{TimePoint(std::chrono::hours(24 * 365 * 50))};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<server::Authenticator> auth_;
  server::testing::InMemoryJobService service_{&clock_};
  std::string team_a_, team_b_, admin_;
  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<v1::JobService::Stub> stub_;
};

TEST_F(GrpcServerTest, SubmitGetListCancelAndEvents) {
  const v1::SubmitJobResponse submitted = Submit(team_a_, JobYaml("train"));
  EXPECT_TRUE(submitted.created());
  const v1::Job& job = submitted.job();
  EXPECT_FALSE(job.id().empty());
  EXPECT_EQ(job.tenant(), "team-a");
  EXPECT_EQ(job.name(), "train");
  EXPECT_EQ(job.queue(), "default");
  EXPECT_EQ(job.phase(), v1::JOB_PHASE_PENDING);
  EXPECT_TRUE(job.has_submit_time());
  const nlohmann::json document = nlohmann::json::parse(job.document_json());
  EXPECT_EQ(document["metadata"]["id"], job.id());
  EXPECT_EQ(document["metadata"]["tenant"], "team-a");
  EXPECT_EQ(document["status"]["phase"], "Pending");
  EXPECT_EQ(document["spec"]["tasks"][0]["command"][0], "sleep");

  v1::Job got;
  ASSERT_TRUE(Get(team_a_, job.id(), &got).ok());
  EXPECT_EQ(got.document_json(), job.document_json());

  v1::ListJobsResponse listed;
  ASSERT_TRUE(stub_->ListJobs(Context(team_a_).get(), {}, &listed).ok());
  ASSERT_EQ(listed.jobs_size(), 1);
  EXPECT_EQ(listed.jobs(0).id(), job.id());
  EXPECT_EQ(listed.next_page_token(), "");

  v1::CancelJobRequest cancel;
  cancel.set_job_id(job.id());
  v1::Job cancelled;
  ASSERT_TRUE(stub_->CancelJob(Context(team_a_).get(), cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.phase(), v1::JOB_PHASE_CANCELLED);

  v1::ListJobEventsRequest events_request;
  events_request.set_job_id(job.id());
  v1::ListJobEventsResponse events;
  ASSERT_TRUE(stub_->ListJobEvents(Context(team_a_).get(), events_request, &events).ok());
  std::vector<std::string> types;
  for (const v1::JobEvent& event : events.events()) {
    EXPECT_EQ(event.job_id(), job.id());
    EXPECT_TRUE(event.has_time());
    types.push_back(event.type());
  }
  EXPECT_THAT(types, ElementsAre("Submitted", "Cancelled"));
  EXPECT_EQ(events.events(1).phase(), v1::JOB_PHASE_CANCELLED);
  EXPECT_EQ(events.events(1).sequence(), 2);
}

TEST_F(GrpcServerTest, ListPagesAndFilters) {
  for (const char* name : {"a", "b", "c"}) Submit(team_a_, JobYaml(name));
  v1::ListJobsRequest request;
  request.set_limit(2);
  v1::ListJobsResponse first;
  ASSERT_TRUE(stub_->ListJobs(Context(team_a_).get(), request, &first).ok());
  ASSERT_EQ(first.jobs_size(), 2);
  EXPECT_EQ(first.jobs(0).name(), "a");
  ASSERT_NE(first.next_page_token(), "");
  EXPECT_EQ(first.remaining_item_count(), 1);

  request.set_page_token(first.next_page_token());
  v1::ListJobsResponse second;
  ASSERT_TRUE(stub_->ListJobs(Context(team_a_).get(), request, &second).ok());
  ASSERT_EQ(second.jobs_size(), 1);
  EXPECT_EQ(second.jobs(0).name(), "c");
  EXPECT_EQ(second.next_page_token(), "");
  EXPECT_EQ(second.remaining_item_count(), 0);

  v1::ListJobsRequest newest;
  newest.set_order(v1::LIST_ORDER_NEWEST_FIRST);
  newest.set_state(v1::JOB_STATE_FILTER_ACTIVE);
  newest.set_limit(1);
  v1::ListJobsResponse latest;
  ASSERT_TRUE(stub_->ListJobs(Context(team_a_).get(), newest, &latest).ok());
  ASSERT_EQ(latest.jobs_size(), 1);
  EXPECT_EQ(latest.jobs(0).name(), "c");
  EXPECT_EQ(latest.remaining_item_count(), 2);

  v1::ListJobsRequest by_name;
  by_name.set_name("b");
  by_name.set_phase(v1::JOB_PHASE_PENDING);
  v1::ListJobsResponse named;
  ASSERT_TRUE(stub_->ListJobs(Context(team_a_).get(), by_name, &named).ok());
  ASSERT_EQ(named.jobs_size(), 1);
  EXPECT_EQ(named.jobs(0).name(), "b");
}

TEST_F(GrpcServerTest, RepeatedRequestIdReturnsTheEarlierJob) {
  const std::string document = JobYaml("once", "  requestId: r-1\n");
  const v1::SubmitJobResponse first = Submit(team_a_, document);
  const v1::SubmitJobResponse again = Submit(team_a_, document);
  EXPECT_TRUE(first.created());
  EXPECT_FALSE(again.created());
  EXPECT_EQ(again.job().id(), first.job().id());
}

// A batch of the documents, as `token`; the call must succeed.
v1::SubmitJobsResponse SubmitBatch(v1::JobService::Stub& stub, grpc::ClientContext* context,
                                   const std::vector<std::string>& documents) {
  v1::SubmitJobsRequest request;
  for (const std::string& document : documents) request.add_items()->set_document(document);
  v1::SubmitJobsResponse response;
  const grpc::Status status = stub.SubmitJobs(context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

TEST_F(GrpcServerTest, BatchAnswersEachItemInOrderAndRepeatsRequestIds) {
  const std::vector<std::string> batch = {
      JobYaml("one", "  requestId: r1\n"),
      "apiVersion: tessera/v1\nkind: Job\nspec:\n  tasks:\n  - name: a\n"
      "    resources: {gpu: -1}\n",
      JobYaml("one"),
      JobYaml("two", "  requestId: r1\n"),
      JobYaml("three", "  requestId: r3\n")};
  const v1::SubmitJobsResponse first = SubmitBatch(*stub_, Context(team_a_).get(), batch);
  ASSERT_EQ(first.items_size(), 5);
  ASSERT_TRUE(first.items(0).has_submitted());
  EXPECT_TRUE(first.items(0).submitted().created());
  ASSERT_TRUE(first.items(1).has_error());
  EXPECT_EQ(first.items(1).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(first.items(1).error().field(), "items[1].spec.tasks[0].resources.gpu");
  EXPECT_THAT(first.items(1).error().message(),
              HasSubstr("items[1].spec.tasks[0].resources.gpu: must be >= 0"));
  ASSERT_TRUE(first.items(2).has_error());
  EXPECT_EQ(first.items(2).error().code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(first.items(2).error().field(), "items[2]");
  ASSERT_TRUE(first.items(3).has_submitted());
  EXPECT_FALSE(first.items(3).submitted().created());
  EXPECT_EQ(first.items(3).submitted().job().id(), first.items(0).submitted().job().id());
  ASSERT_TRUE(first.items(4).has_submitted());

  // The same batch again answers the same jobs; a single SubmitJob sees the batch's ids too.
  const v1::SubmitJobsResponse again = SubmitBatch(*stub_, Context(team_a_).get(), batch);
  ASSERT_EQ(again.items_size(), 5);
  EXPECT_EQ(again.items(0).submitted().job().id(), first.items(0).submitted().job().id());
  EXPECT_FALSE(again.items(0).submitted().created());
  EXPECT_EQ(again.items(4).submitted().job().id(), first.items(4).submitted().job().id());
  EXPECT_FALSE(again.items(4).submitted().created());
  const v1::SubmitJobResponse single = Submit(team_a_, JobYaml("x", "  requestId: r3\n"));
  EXPECT_FALSE(single.created());
  EXPECT_EQ(single.job().id(), first.items(4).submitted().job().id());
}

TEST_F(GrpcServerTest, ABatchOutsideItsBoundsIsInvalidArgumentNamingItems) {
  for (size_t n : {size_t{0}, server::kMaxSubmitBatchItems + 1}) {
    v1::SubmitJobsRequest request;
    for (size_t i = 0; i < n; ++i) request.add_items()->set_document(JobYaml("j"));
    v1::SubmitJobsResponse response;
    auto context = Context(team_a_);
    const grpc::Status status = stub_->SubmitJobs(context.get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << n;
    EXPECT_EQ(Trailer(*context, "field"), "items") << n;
  }
  v1::ListJobsResponse listed;
  ASSERT_TRUE(stub_->ListJobs(Context(team_a_).get(), {}, &listed).ok());
  EXPECT_EQ(listed.jobs_size(), 0);
}

TEST_F(GrpcServerTest, NameInUseIsAlreadyExists) {
  Submit(team_a_, JobYaml("dup"));
  v1::SubmitJobRequest request;
  request.set_document(JobYaml("dup"));
  v1::SubmitJobResponse response;
  EXPECT_EQ(stub_->SubmitJob(Context(team_a_).get(), request, &response).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(GrpcServerTest, JsonDocumentsAreAcceptedToo) {
  v1::SubmitJobRequest request;
  request.set_format(v1::DOCUMENT_FORMAT_JSON);
  request.set_document(
      R"({"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "j"},
          "spec": {"tasks": [{"name": "main", "command": ["true"]}]}})");
  v1::SubmitJobResponse response;
  ASSERT_TRUE(stub_->SubmitJob(Context(team_a_).get(), request, &response).ok());
  EXPECT_EQ(response.job().name(), "j");

  request.set_document(JobYaml("yaml-is-not-json"));
  const grpc::Status status = stub_->SubmitJob(Context(team_a_).get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(GrpcServerTest, InvalidDocumentNamesTheFieldInATrailer) {
  v1::SubmitJobRequest request;
  request.set_document(
      "apiVersion: tessera/v1\nkind: Job\nspec:\n  tasks:\n  - name: a\n"
      "    resources: {gpu: -1}\n");
  v1::SubmitJobResponse response;
  auto context = Context(team_a_);
  const grpc::Status status = stub_->SubmitJob(context.get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("spec.tasks[0].resources.gpu: must be >= 0"));
  EXPECT_EQ(Trailer(*context, "field"), "spec.tasks[0].resources.gpu");
}

TEST_F(GrpcServerTest, InvalidRequestFieldsAreInvalidArgumentWithTheField) {
  {
    auto context = Context(team_a_);
    v1::Job job;
    const grpc::Status status = stub_->GetJob(context.get(), v1::GetJobRequest(), &job);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(Trailer(*context, "field"), "job_id");
  }
  {
    auto context = Context(team_a_);
    v1::ListJobsRequest request;
    request.set_limit(5000);
    v1::ListJobsResponse response;
    const grpc::Status status = stub_->ListJobs(context.get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(Trailer(*context, "field"), "limit");
  }
}

TEST_F(GrpcServerTest, OversizedDocumentsAreResourceExhausted) {
  for (const size_t size : {size_t{1} << 20, size_t{5} << 20}) {  // document limit, then gRPC's
    v1::SubmitJobRequest request;
    request.set_document(JobYaml("big") + "# " + std::string(size, 'x') + "\n");
    v1::SubmitJobResponse response;
    EXPECT_EQ(stub_->SubmitJob(Context(team_a_).get(), request, &response).error_code(),
              grpc::StatusCode::RESOURCE_EXHAUSTED)
        << size;
  }
}

TEST_F(GrpcServerTest, MissingOrBadTokensAreUnauthenticated) {
  const std::vector<std::string> kHeaders = {"", "Basic dXNlcjpwdw==", "Bearer",
                                             "Bearer tsr_unknown", "Bearer " + team_a_ + "x"};
  for (const std::string& header : kHeaders) {
    SCOPED_TRACE(header);
    grpc::ClientContext context;
    if (!header.empty()) context.AddMetadata("authorization", header);
    v1::ListQueuesResponse response;
    EXPECT_EQ(stub_->ListQueues(&context, {}, &response).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  grpc::ClientContext lower_case_scheme;
  lower_case_scheme.AddMetadata("authorization", "bearer " + team_a_);
  v1::ListQueuesResponse response;
  EXPECT_TRUE(stub_->ListQueues(&lower_case_scheme, {}, &response).ok());
}

TEST_F(GrpcServerTest, AnotherTenantsJobIsNotFound) {
  const std::string id = Submit(team_a_, JobYaml("private")).job().id();

  v1::Job job;
  EXPECT_EQ(Get(team_b_, id, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Get(team_b_, "999", &job).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::CancelJobRequest cancel;
  cancel.set_job_id(id);
  EXPECT_EQ(stub_->CancelJob(Context(team_b_).get(), cancel, &job).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::ListJobEventsRequest events;
  events.set_job_id(id);
  v1::ListJobEventsResponse events_response;
  EXPECT_EQ(stub_->ListJobEvents(Context(team_b_).get(), events, &events_response).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::ListJobsResponse listed;
  ASSERT_TRUE(stub_->ListJobs(Context(team_b_).get(), {}, &listed).ok());
  EXPECT_EQ(listed.jobs_size(), 0);

  ASSERT_TRUE(Get(admin_, id, &job).ok());
  EXPECT_EQ(job.tenant(), "team-a");
  EXPECT_EQ(job.phase(), v1::JOB_PHASE_PENDING);  // team-b's cancel did nothing
}

TEST_F(GrpcServerTest, RateLimitIsResourceExhaustedWithRetryAfter) {
  ManualClock limiter_clock;
  server::RateLimiter limiter({.rate_per_second = 2, .burst = 1}, &limiter_clock);
  StartServer(&limiter);

  v1::ListQueuesResponse response;
  EXPECT_TRUE(stub_->ListQueues(Context(team_a_).get(), {}, &response).ok());
  auto refused = Context(team_a_);
  const grpc::Status status = stub_->ListQueues(refused.get(), {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(Trailer(*refused, "retry-after-ms"), "500");
  // Buckets are per tenant: team-b is not held back by team-a.
  EXPECT_TRUE(stub_->ListQueues(Context(team_b_).get(), {}, &response).ok());

  limiter_clock.Set(limiter_clock.Now() + std::chrono::milliseconds(500));
  EXPECT_TRUE(stub_->ListQueues(Context(team_a_).get(), {}, &response).ok());
}

TEST_F(GrpcServerTest, ExplainCarriesRejections) {
  const std::string id = Submit(team_a_, JobYaml("waiting")).job().id();
  ASSERT_TRUE(
      service_
          .SetExplanation(id,
                          server::JobExplanation{
                              .phase = JobPhase::kPending,
                              .reason = "InsufficientResources",
                              .message = "0/4 nodes: 3 insufficient gpu",
                              .total_nodes = 4,
                              .rejections = {{"insufficient gpu", 3}, {"untolerated taint", 1}},
                              .estimated_start_time = TimePoint(Duration(90'000)),
                              .estimate = server::StartEstimateView{
                                  .start = TimePoint(Duration(90'000)),
                                  .blocker = "Capacity",
                                  .message = "job 7 ends at its time limit",
                                  .position = 3}})
          .ok());
  v1::ExplainJobRequest request;
  request.set_job_id(id);
  v1::Explanation explanation;
  ASSERT_TRUE(stub_->ExplainJob(Context(team_a_).get(), request, &explanation).ok());
  EXPECT_EQ(explanation.phase(), v1::JOB_PHASE_PENDING);
  EXPECT_EQ(explanation.reason(), "InsufficientResources");
  EXPECT_EQ(explanation.total_nodes(), 4);
  ASSERT_EQ(explanation.rejections_size(), 2);
  EXPECT_EQ(explanation.rejections(0).reason(), "insufficient gpu");
  EXPECT_EQ(explanation.rejections(0).nodes(), 3);
  EXPECT_EQ(explanation.estimated_start_time().seconds(), 90);
  EXPECT_EQ(explanation.estimate().start_time().seconds(), 90);
  EXPECT_EQ(explanation.estimate().blocker(), "Capacity");
  EXPECT_EQ(explanation.estimate().position(), 3);
}

TEST_F(GrpcServerTest, QueueChangesAreForAdmins) {
  service_.SetQueues({server::QueueView{.spec = {.name = "default"}}});
  v1::ApplyQueuesRequest apply;
  apply.set_document("queues: [{name: org, children: [{name: team-a, guaranteed: {gpu: 2}}]}]");
  v1::ListQueuesResponse tree;
  EXPECT_EQ(stub_->ApplyQueues(Context(team_a_).get(), apply, &tree).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(stub_->ApplyQueues(Context(admin_).get(), apply, &tree).ok());
  ASSERT_EQ(tree.queues_size(), 2);
  EXPECT_EQ(tree.queues(1).parent(), "org");
  EXPECT_EQ(tree.queues(1).guaranteed().at("gpu"), 2000);

  v1::ApplyQueuesRequest bad;
  bad.set_document("queues: [{name: org, weight: 0}]");
  std::unique_ptr<grpc::ClientContext> context = Context(admin_);
  EXPECT_EQ(stub_->ApplyQueues(context.get(), bad, &tree).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Trailer(*context, "field"), "queues[0].weight");

  v1::ApplyQueueRequest one;
  one.set_name("team-b");
  one.set_document(R"({"parent": "org", "ordering": "strictFifo"})");
  v1::Queue queue;
  ASSERT_TRUE(stub_->ApplyQueue(Context(admin_).get(), one, &queue).ok());
  EXPECT_EQ(queue.ordering(), v1::QUEUE_ORDERING_STRICT_FIFO);

  v1::DeleteQueueRequest remove;
  remove.set_name("org");
  EXPECT_EQ(stub_->DeleteQueue(Context(admin_).get(), remove, &tree).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  remove.set_name("team-b");
  ASSERT_TRUE(stub_->DeleteQueue(Context(admin_).get(), remove, &tree).ok());
  EXPECT_EQ(tree.queues_size(), 2);
}

TEST_F(GrpcServerTest, LogsAreReadInChunks) {
  const std::string id = Submit(team_a_, JobYaml("chatty")).job().id();
  ASSERT_TRUE(service_.SetLog(id, "main-0", LogStream::kStdout, "hello world", true).ok());

  v1::GetJobLogsRequest request;
  request.set_job_id(id);
  request.set_limit(5);
  v1::LogChunk chunk;
  ASSERT_TRUE(stub_->GetJobLogs(Context(team_a_).get(), request, &chunk).ok());
  EXPECT_EQ(chunk.data(), "hello");
  EXPECT_EQ(chunk.next_offset(), 5);
  EXPECT_FALSE(chunk.end());

  request.set_offset(chunk.next_offset());
  request.set_limit(0);  // the default: 1 MiB
  ASSERT_TRUE(stub_->GetJobLogs(Context(team_a_).get(), request, &chunk).ok());
  EXPECT_EQ(chunk.data(), " world");
  EXPECT_EQ(chunk.next_offset(), 11);
  EXPECT_TRUE(chunk.end());

  request.set_stream(v1::LOG_STREAM_STDERR);
  EXPECT_EQ(stub_->GetJobLogs(Context(team_a_).get(), request, &chunk).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(GrpcServerTest, QueuesNodesAndClustersInBaseUnits) {
  service_.SetQueues({server::QueueView{
      .spec = {.name = "default", .guaranteed = {{"gpu", 2000}}, .ordering = QueueOrdering::kStrictFifo},
      .usage = {{"cpu", 1500}},
      .pending_jobs = 2,
      .running_jobs = 1}});
  server::NodeView node{.name = "n1", .cluster = "local"};
  node.capacity = Resources{.cpu = 8000, .memory = int64_t{32} << 30, .gpu = 2000};
  service_.SetNodes({node});
  service_.SetClusters({server::ClusterView{.name = "local",
                                            .backend = "local",
                                            .nodes = 1,
                                            .ready_nodes = 1,
                                            .capacity = node.capacity}});

  v1::ListQueuesResponse queues;
  ASSERT_TRUE(stub_->ListQueues(Context(team_a_).get(), {}, &queues).ok());
  ASSERT_EQ(queues.queues_size(), 1);
  EXPECT_EQ(queues.queues(0).pending_jobs(), 2);
  EXPECT_EQ(queues.queues(0).usage().at("cpu"), 1500);
  EXPECT_EQ(queues.queues(0).guaranteed().at("gpu"), 2000);
  EXPECT_EQ(queues.queues(0).ordering(), v1::QUEUE_ORDERING_STRICT_FIFO);

  v1::ListNodesResponse nodes;
  ASSERT_TRUE(stub_->ListNodes(Context(team_a_).get(), {}, &nodes).ok());
  ASSERT_EQ(nodes.nodes_size(), 1);
  EXPECT_EQ(nodes.nodes(0).capacity().memory_bytes(), int64_t{32} << 30);
  EXPECT_EQ(nodes.nodes(0).capacity().gpu_milli(), 2000);

  v1::ListClustersResponse clusters;
  ASSERT_TRUE(stub_->ListClusters(Context(team_a_).get(), {}, &clusters).ok());
  ASSERT_EQ(clusters.clusters_size(), 1);
  EXPECT_EQ(clusters.clusters(0).backend(), "local");
  EXPECT_EQ(clusters.clusters(0).capacity().cpu_millicores(), 8000);

  v1::DeleteClusterRequest remove;
  EXPECT_EQ(stub_->DeleteCluster(Context(admin_).get(), remove, &clusters).error_code(),
            grpc::INVALID_ARGUMENT);
  remove.set_name("local");
  EXPECT_EQ(stub_->DeleteCluster(Context(team_a_).get(), remove, &clusters).error_code(),
            grpc::PERMISSION_DENIED);
  ASSERT_TRUE(stub_->DeleteCluster(Context(admin_).get(), remove, &clusters).ok());
  EXPECT_EQ(clusters.clusters_size(), 0);
  EXPECT_EQ(stub_->DeleteCluster(Context(admin_).get(), remove, &clusters).error_code(),
            grpc::NOT_FOUND);
}

TEST_F(GrpcServerTest, NodesAreCordonedDrainedAndUncordonedByAdmins) {
  service_.SetNodes({server::NodeView{.name = "gpu-1", .cluster = "east"}});
  v1::ChangeNodeRequest request;
  request.set_cluster("east");
  request.set_node("gpu-1");
  request.set_reason("replace GPU 3");
  request.set_grace_period("5m");
  v1::Node node;
  EXPECT_EQ(stub_->DrainNode(Context(team_a_).get(), request, &node).error_code(),
            grpc::PERMISSION_DENIED);
  ASSERT_TRUE(stub_->DrainNode(Context(admin_).get(), request, &node).ok());
  EXPECT_EQ(node.state(), v1::NODE_STATE_DRAINED);
  EXPECT_EQ(node.state_reason(), "replace GPU 3");
  EXPECT_TRUE(node.unschedulable());
  EXPECT_TRUE(node.has_state_since());

  request.set_grace_period("");
  ASSERT_TRUE(stub_->UncordonNode(Context(admin_).get(), request, &node).ok());
  EXPECT_EQ(node.state(), v1::NODE_STATE_READY);
  ASSERT_TRUE(stub_->CordonNode(Context(admin_).get(), request, &node).ok());
  EXPECT_EQ(node.state(), v1::NODE_STATE_CORDONED);

  request.set_grace_period("soon");
  auto bad_grace = Context(admin_);
  EXPECT_EQ(stub_->DrainNode(bad_grace.get(), request, &node).error_code(),
            grpc::INVALID_ARGUMENT);
  EXPECT_EQ(Trailer(*bad_grace, "field"), "grace_period");
  request.set_grace_period("1m");
  auto cordon_grace = Context(admin_);
  EXPECT_EQ(stub_->CordonNode(cordon_grace.get(), request, &node).error_code(),
            grpc::INVALID_ARGUMENT);
  EXPECT_EQ(Trailer(*cordon_grace, "field"), "grace_period");
  request.set_grace_period("");
  request.set_node("gpu-9");
  auto unknown = Context(admin_);
  EXPECT_EQ(stub_->DrainNode(unknown.get(), request, &node).error_code(), grpc::NOT_FOUND);
  EXPECT_EQ(Trailer(*unknown, "field"), "node");
}

TEST_F(GrpcServerTest, WatchReceivesEventsUntilTheClientCancels) {
  const std::string id = Submit(team_a_, JobYaml("watched")).job().id();
  auto context = Context(team_a_);
  v1::WatchJobEventsRequest request;
  request.set_job_id(id);
  request.set_after_sequence(0);  // replay from the start
  auto reader = stub_->WatchJobEvents(context.get(), request);
  reader->WaitForInitialMetadata();  // the watch is registered from here on

  v1::JobEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), "Submitted");
  EXPECT_EQ(event.sequence(), 1);

  ASSERT_TRUE(service_.AppendEvent(id, "Running", JobPhase::kRunning, "", "started").ok());
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.job_id(), id);
  EXPECT_EQ(event.type(), "Running");
  EXPECT_EQ(event.phase(), v1::JOB_PHASE_RUNNING);
  EXPECT_EQ(event.message(), "started");
  EXPECT_EQ(event.sequence(), 2);

  context->TryCancel();
  while (reader->Read(&event)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(GrpcServerTest, WatchOfAnotherTenantsJobIsNotFound) {
  const std::string id = Submit(team_a_, JobYaml("private")).job().id();
  auto context = Context(team_b_);
  v1::WatchJobEventsRequest request;
  request.set_job_id(id);
  auto reader = stub_->WatchJobEvents(context.get(), request);
  v1::JobEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, StopEndsOpenWatchesAndIsIdempotent) {
  auto context = Context(team_a_);
  auto reader = stub_->WatchJobEvents(context.get(), v1::WatchJobEventsRequest());
  reader->WaitForInitialMetadata();

  server_->Stop();
  v1::JobEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  server_->Stop();
  EXPECT_EQ(server_->Start("127.0.0.1:0").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(GrpcServerTest, ServiceShutdownEndsWatchesWithItsStatus) {
  auto context = Context(team_a_);
  auto reader = stub_->WatchJobEvents(context.get(), v1::WatchJobEventsRequest());
  reader->WaitForInitialMetadata();
  service_.Shutdown();
  v1::JobEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

// Records nothing: the agent sessions below never get as far as tasks or nodes.
class IgnoringObserver final : public TaskObserver, public InventoryObserver {
 public:
  void OnTaskStarted(std::string_view, TimePoint) override {}
  void OnTaskEnded(const TaskEnd&) override {}
  void OnNodesChanged(const Cluster&, std::vector<Node>) override {}
};

TEST_F(GrpcServerTest, AgentServiceStopEndsOpenSessionsAndRefusesNewOnes) {
  server::NodeNames names;
  IgnoringObserver observer;
  server::AgentClusters clusters(server::AgentClustersOptions{
      .clock = &clock_,
      .store = store_.get(),
      .node_names = &names,
      .task_observer = &observer,
      .inventory_observer = &observer,
      .attach = [](Cluster*) {}});
  ASSERT_TRUE(clusters.Load().ok());
  AgentService agents({.clusters = &clusters, .auth = auth_.get()});
  server_ = std::make_unique<GrpcServer>(GrpcServer::Options{
      .service = &service_, .auth = auth_.get(), .more_services = {&agents}});
  ASSERT_TRUE(server_->Start("127.0.0.1:0").ok());
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                     grpc::InsecureChannelCredentials());
  std::unique_ptr<agent::v1::AgentService::Stub> stub = agent::v1::AgentService::NewStub(channel);
  const auto connect = [&](grpc::ClientContext& context) {
    auto stream = stub->Connect(&context);
    agent::v1::AgentMessage hello;
    hello.mutable_register_()->set_cluster("edge");
    hello.mutable_register_()->set_backend("sim");
    stream->Write(hello);
    return stream;
  };

  const std::unique_ptr<grpc::ClientContext> open = Context(admin_);
  auto session = connect(*open);
  agent::v1::ServerMessage reply;
  ASSERT_TRUE(session->Read(&reply));
  ASSERT_TRUE(reply.has_registered());

  // Without Stop the session stays open until its agent leaves (or the 1 min deadline).
  agents.Stop();
  while (session->Read(&reply)) {
  }
  EXPECT_EQ(session->Finish().error_code(), grpc::StatusCode::CANCELLED);

  const std::unique_ptr<grpc::ClientContext> late = Context(admin_);
  auto refused = connect(*late);
  while (refused->Read(&reply)) {
  }
  const grpc::Status status = refused->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "the server is stopping");
  server_->Stop();
}

TEST(GrpcServerStartTest, RefusesMissingOptionsAndUnusableAddresses) {
  GrpcServer missing(GrpcServer::Options{});
  EXPECT_EQ(missing.Start("127.0.0.1:0").code(), absl::StatusCode::kInvalidArgument);

  ManualClock clock;
  server::testing::InMemoryJobService service(&clock);
  TempDir dir;
  absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
      store::SqliteStore::Open({.data_dir = dir.path() + "/data"});
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::unique_ptr<server::Authenticator>> auth =
      server::Authenticator::Create(store->get());
  ASSERT_TRUE(auth.ok()) << auth.status();
  GrpcServer bad_address(GrpcServer::Options{.service = &service, .auth = auth->get()});
  EXPECT_EQ(bad_address.Start("256.1.1.1:1").code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tessera::api
