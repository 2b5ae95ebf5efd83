#include "api/rest/rest_server.h"

#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"
#include "server/testing/in_memory_job_service.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;

constexpr char kJob[] = R"({"apiVersion": "tessera/v1", "kind": "Job",
  "metadata": {"name": "train"},
  "spec": {"tasks": [{"name": "main", "resources": {"cpu": "1"}, "command": ["true"]}]}})";

std::string NamedJob(std::string_view name, std::string_view request_id = "") {
  Json job = Json::parse(kJob);
  job["metadata"]["name"] = name;
  if (!request_id.empty()) job["metadata"]["requestId"] = request_id;
  return job.dump();
}

Json Body(const httplib::Result& res) { return Json::parse(res->body, nullptr, false); }

// The error body's code and field ("" when absent).
std::string Code(const httplib::Result& res) { return Body(res)["error"].value("code", ""); }
std::string Field(const httplib::Result& res) { return Body(res)["error"].value("field", ""); }

class RestServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = std::filesystem::temp_directory_path() / "tessera-rest-XXXXXX";
    dir_ = mkdtemp(pattern.data());
    auto store = store::SqliteStore::Open({.data_dir = dir_});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto auth = server::Authenticator::Create(store_.get());
    ASSERT_TRUE(auth.ok()) << auth.status();
    auth_ = *std::move(auth);
    a_ = auth_->IssueToken("team-a", server::Role::kTenant)->token;
    b_ = auth_->IssueToken("team-b", server::Role::kTenant)->token;
    admin_ = auth_->IssueToken("ops", server::Role::kAdmin)->token;
    StartServer({.rate_per_second = 1, .burst = 10'000});
  }

  void TearDown() override {
    client_.reset();
    server_.reset();
    service_.Shutdown();
    auth_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartServer(server::RateLimit limit) {
    client_.reset();
    server_.reset();
    limiter_ = std::make_unique<server::RateLimiter>(limit, &clock_);
    server_ = std::make_unique<RestServer>(RestServer::Options{.service = &service_,
                                                               .auth = auth_.get(),
                                                               .rate_limiter = limiter_.get(),
                                                               .metrics = &registry_,
                                                               .threads = 8,
                                                               .max_watch_streams = 2});
    ASSERT_TRUE(server_->Start("127.0.0.1", 0).ok());
    ASSERT_GT(server_->port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  static httplib::Headers Auth(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }
  httplib::Result Get(const std::string& path, const std::string& token) {
    return client_->Get(path.c_str(), Auth(token));
  }
  httplib::Result Post(const std::string& path, const std::string& token, const std::string& body,
                       const char* content_type = "application/json") {
    return client_->Post(path.c_str(), Auth(token), body, content_type);
  }
  httplib::Result Put(const std::string& path, const std::string& body, const std::string& token,
                      const char* content_type = "application/json") {
    return client_->Put(path.c_str(), Auth(token), body, content_type);
  }
  httplib::Result Delete(const std::string& path, const std::string& token) {
    return client_->Delete(path.c_str(), Auth(token));
  }
  // Submits kJob named `name` as `token` and returns its id.
  std::string Submit(const std::string& token, std::string_view name) {
    httplib::Result res = Post("/api/v1/jobs", token, NamedJob(name));
    EXPECT_TRUE(res && res->status == 201) << (res ? res->body : "no answer");
    return res ? Body(res)["metadata"].value("id", "") : "";
  }

  std::string dir_;
  ManualClock clock_{TimePoint{std::chrono::seconds{1'795'946'400}}};  // 2026-11-29T10:00:00Z
  server::testing::InMemoryJobService service_{&clock_};
  prometheus::Registry registry_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<server::Authenticator> auth_;
  std::unique_ptr<server::RateLimiter> limiter_;
  std::unique_ptr<RestServer> server_;
  std::unique_ptr<httplib::Client> client_;
  std::string a_, b_, admin_;
};

TEST_F(RestServerTest, HealthReadinessAndMetricsNeedNoToken) {
  httplib::Result res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok\n");
  EXPECT_EQ(client_->Get("/readyz")->status, 200);
  service_.SetReady(false);
  res = client_->Get("/readyz");
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(Code(res), "UNAVAILABLE");

  ASSERT_EQ(Get("/api/v1/queues", a_)->status, 200);
  res = client_->Get("/metrics");
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), StartsWith("text/plain"));
  EXPECT_THAT(res->body, HasSubstr("# TYPE tessera_http_requests_total counter"));
  EXPECT_THAT(res->body, HasSubstr(R"(route="/api/v1/queues")"));
  EXPECT_THAT(res->body, HasSubstr(R"(code="200")"));
  // Text answers (/healthz above) count as what was sent, 200.
  EXPECT_THAT(res->body, HasSubstr(R"(code="200",method="GET",route="/healthz")"));
  EXPECT_THAT(res->body, ::testing::Not(HasSubstr(R"(code="-1")")));
}

TEST_F(RestServerTest, MissingOrBadTokenIsUnauthenticated) {
  for (const httplib::Headers& headers :
       std::vector<httplib::Headers>{{},
                                     {{"Authorization", "Bearer tsr_nope"}},
                                     {{"Authorization", "Bearer tsr_" + std::string(64, '0')}},
                                     {{"Authorization", "Basic " + a_}},
                                     {{"Authorization", "Bearer"}}}) {
    httplib::Result res = client_->Get("/api/v1/jobs", headers);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401);
    EXPECT_EQ(Code(res), "UNAUTHENTICATED");
    EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer");
  }
  EXPECT_EQ(client_->Get("/api/v1/jobs", {{"Authorization", "bearer  " + a_}})->status, 200);
}

TEST_F(RestServerTest, SubmitGetAndIdempotentRetry) {
  httplib::Result res = Post("/api/v1/jobs", a_, NamedJob("train", "req-1"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const Json job = Body(res);
  const std::string id = job["metadata"]["id"];
  EXPECT_EQ(res->get_header_value("Location"), "/api/v1/jobs/" + id);
  EXPECT_EQ(job["metadata"]["tenant"], "team-a");
  EXPECT_EQ(job["metadata"]["name"], "train");
  EXPECT_EQ(job["status"]["phase"], "Pending");
  EXPECT_EQ(job["spec"]["tasks"][0]["resources"]["cpu"], "1");

  res = Post("/api/v1/jobs", a_, NamedJob("ignored", "req-1"));
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(Body(res)["metadata"]["id"], id);

  res = Get("/api/v1/jobs/" + id, a_);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(Body(res), job);

  res = Post("/api/v1/jobs", a_, NamedJob("train"));
  EXPECT_EQ(res->status, 409);
  EXPECT_EQ(Code(res), "ALREADY_EXISTS");
}

TEST_F(RestServerTest, SubmitAcceptsYaml) {
  const std::string yaml =
      "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: y}\nspec:\n  tasks:\n"
      "    - name: main\n      resources: {cpu: 500m}\n      command: [\"true\"]\n";
  httplib::Result res = Post("/api/v1/jobs", a_, yaml, "application/yaml");
  ASSERT_EQ(res->status, 201) << res->body;
  EXPECT_EQ(Body(res)["spec"]["tasks"][0]["resources"]["cpu"], "500m");
  // JSON is forced by the content type: the same YAML is then a syntax error.
  res = Post("/api/v1/jobs", a_, yaml, "application/json; charset=utf-8");
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Code(res), "INVALID_ARGUMENT");
}

TEST_F(RestServerTest, BadSpecNamesTheField) {
  Json job = Json::parse(kJob);
  job["spec"]["tasks"][0]["resources"]["gpuu"] = 1;
  httplib::Result res = Post("/api/v1/jobs", a_, job.dump());
  ASSERT_EQ(res->status, 400);
  EXPECT_EQ(Code(res), "INVALID_ARGUMENT");
  EXPECT_EQ(Field(res), "spec.tasks[0].resources.gpuu");
  EXPECT_THAT(Body(res)["error"]["message"].get<std::string>(), StartsWith("request:"));
}

TEST_F(RestServerTest, BatchAnswersEachItemInOrderNamingTheItemsField) {
  Json bad_gpu = Json::parse(kJob);
  bad_gpu["spec"]["tasks"][0]["resources"]["gpu"] = -1;
  const Json batch = {{"items",
                       {Json::parse(NamedJob("one", "r1")), bad_gpu, Json::parse(NamedJob("one")),
                        Json::parse(NamedJob("two", "r1")), "not a job",
                        Json::parse(NamedJob("three", "r3"))}}};
  httplib::Result res = Post("/api/v1/jobs:batch", a_, batch.dump());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const Json items = Body(res)["items"];
  ASSERT_EQ(items.size(), 6u) << res->body;
  const std::string first = items[0]["job"]["metadata"]["id"];
  EXPECT_EQ(items[0]["created"], true);
  EXPECT_EQ(items[0]["job"]["metadata"]["tenant"], "team-a");
  EXPECT_EQ(items[1]["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(items[1]["error"]["field"], "items[1].spec.tasks[0].resources.gpu");
  EXPECT_THAT(items[1]["error"]["message"].get<std::string>(),
              StartsWith("items[1].spec.tasks[0].resources.gpu: "));
  EXPECT_EQ(items[2]["error"]["code"], "ALREADY_EXISTS");  // "one" is taken by item 0
  EXPECT_EQ(items[2]["error"]["field"], "items[2]");
  // A request id repeated within the batch answers the job of its first use.
  EXPECT_EQ(items[3]["job"]["metadata"]["id"], first);
  EXPECT_EQ(items[3]["created"], false);
  EXPECT_EQ(items[4]["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_THAT(items[4]["error"]["field"].get<std::string>(), StartsWith("items[4]"));
  EXPECT_EQ(items[5]["created"], true);

  // The same batch again: the request ids answer the same jobs, nothing new is created.
  res = Post("/api/v1/jobs:batch", a_, batch.dump());
  ASSERT_EQ(res->status, 200) << res->body;
  const Json again = Body(res)["items"];
  EXPECT_EQ(again[0]["job"]["metadata"]["id"], first);
  EXPECT_EQ(again[0]["created"], false);
  EXPECT_EQ(again[5]["job"]["metadata"]["id"], items[5]["job"]["metadata"]["id"]);
  EXPECT_EQ(again[5]["created"], false);
  // Across the single and the batch route alike.
  res = Post("/api/v1/jobs", a_, NamedJob("ignored", "r3"));
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(Body(res)["metadata"]["id"], items[5]["job"]["metadata"]["id"]);
  res = Get("/api/v1/jobs", a_);
  EXPECT_EQ(Body(res)["items"].size(), 2u) << res->body;
}

TEST_F(RestServerTest, ABatchRequestThatIsNotOneIsRefusedWhole) {
  Json over = {{"items", Json::array()}};
  for (size_t i = 0; i <= server::kMaxSubmitBatchItems; ++i) over["items"].push_back("x");
  httplib::Result res = Post("/api/v1/jobs:batch", a_, over.dump());
  ASSERT_EQ(res->status, 400) << res->body;
  EXPECT_EQ(Field(res), "items");
  EXPECT_THAT(Body(res)["error"]["message"].get<std::string>(), HasSubstr("1001"));

  for (const char* body : {R"({"items": []})", R"({"items": {}})", R"({})", "[]", "items"}) {
    res = Post("/api/v1/jobs:batch", a_, body);
    EXPECT_EQ(res->status, 400) << body;
    EXPECT_EQ(Code(res), "INVALID_ARGUMENT") << body;
  }
  res = Post("/api/v1/jobs:batch", a_, R"({"items": [], "jobs": []})");
  EXPECT_EQ(Field(res), "jobs");
  res = Post("/api/v1/jobs:batch", "", R"({"items": []})");
  EXPECT_EQ(res->status, 401);
  res = Get("/api/v1/jobs", a_);
  EXPECT_TRUE(Body(res)["items"].empty()) << res->body;
}

TEST_F(RestServerTest, OversizedBodyIs413) {
  const std::string body(RestServer::Options{}.max_body_bytes + 1, ' ');
  httplib::Result res = Post("/api/v1/jobs", a_, body);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(Code(res), "RESOURCE_EXHAUSTED");
}

TEST_F(RestServerTest, TenantsAreIsolated) {
  const std::string id = Submit(a_, "mine");
  Submit(b_, "theirs");
  for (const std::string& path :
       {"/api/v1/jobs/" + id, "/api/v1/jobs/" + id + "/events", "/api/v1/jobs/" + id + "/explain",
        "/api/v1/jobs/" + id + "/logs"}) {
    httplib::Result res = Get(path, b_);
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_EQ(Code(res), "NOT_FOUND") << path;
  }
  EXPECT_EQ(Post("/api/v1/jobs/" + id + "/cancel", b_, "")->status, 404);
  EXPECT_EQ(client_->Delete(("/api/v1/jobs/" + id).c_str(), Auth(b_))->status, 404);

  Json list = Body(Get("/api/v1/jobs", b_));
  ASSERT_EQ(list["items"].size(), 1);
  EXPECT_EQ(list["items"][0]["metadata"]["tenant"], "team-b");
  EXPECT_EQ(Body(Get("/api/v1/jobs", admin_))["items"].size(), 2);
  EXPECT_EQ(Body(Get("/api/v1/jobs?tenant=team-a", admin_))["items"].size(), 1);
  EXPECT_EQ(Get("/api/v1/jobs?tenant=team-a", b_)->status, 403);
  EXPECT_EQ(Get("/api/v1/jobs/" + id, admin_)->status, 200);
}

TEST_F(RestServerTest, ListFiltersAndPages) {
  for (int i = 0; i < 5; ++i) Submit(a_, "job" + std::to_string(i));
  ASSERT_EQ(Post("/api/v1/jobs/2/cancel", a_, "")->status, 200);

  Json page = Body(Get("/api/v1/jobs?limit=2", a_));
  ASSERT_EQ(page["items"].size(), 2);
  EXPECT_EQ(page["nextPageToken"], "2");
  page = Body(Get("/api/v1/jobs?limit=2&pageToken=4", a_));
  ASSERT_EQ(page["items"].size(), 1);
  EXPECT_EQ(page["items"][0]["metadata"]["id"], "5");
  EXPECT_EQ(page["nextPageToken"], "");
  page = Body(Get("/api/v1/jobs?phase=Cancelled", a_));
  ASSERT_EQ(page["items"].size(), 1);
  EXPECT_EQ(page["items"][0]["metadata"]["id"], "2");
  EXPECT_EQ(Body(Get("/api/v1/jobs?name=job3", a_))["items"].size(), 1);
  EXPECT_EQ(Body(Get("/api/v1/jobs?queue=other", a_))["items"].size(), 0);
}

std::vector<std::string> Ids(const Json& page) {
  std::vector<std::string> ids;
  for (const Json& job : page["items"]) ids.push_back(job["metadata"]["id"].get<std::string>());
  return ids;
}

TEST_F(RestServerTest, ListSaysHowManyMoreMatch) {
  for (int i = 0; i < 5; ++i) Submit(a_, "job" + std::to_string(i));
  Json page = Body(Get("/api/v1/jobs?limit=2", a_));
  EXPECT_EQ(page["remainingItemCount"], 3);
  const std::string next = page["nextPageToken"].get<std::string>();
  page = Body(Get("/api/v1/jobs?limit=2&pageToken=" + next, a_));
  EXPECT_EQ(page["remainingItemCount"], 1);
  page = Body(Get("/api/v1/jobs?limit=2&pageToken=4", a_));
  EXPECT_EQ(page["remainingItemCount"], 0);
  EXPECT_EQ(page["nextPageToken"], "");
  EXPECT_EQ(Body(Get("/api/v1/jobs?limit=5", a_))["remainingItemCount"], 0);
}

TEST_F(RestServerTest, ListNewestFirstAndByState) {
  for (int i = 0; i < 5; ++i) Submit(a_, "job" + std::to_string(i));
  ASSERT_EQ(Post("/api/v1/jobs/2/cancel", a_, "")->status, 200);
  ASSERT_EQ(Post("/api/v1/jobs/5/cancel", a_, "")->status, 200);

  // Without the new parameters: every phase, oldest first, as before.
  EXPECT_THAT(Ids(Body(Get("/api/v1/jobs", a_))), ElementsAre("1", "2", "3", "4", "5"));
  EXPECT_THAT(Ids(Body(Get("/api/v1/jobs?state=all&order=oldest", a_))),
              ElementsAre("1", "2", "3", "4", "5"));

  Json page = Body(Get("/api/v1/jobs?order=newest&state=active&limit=2", a_));
  EXPECT_THAT(Ids(page), ElementsAre("4", "3"));
  EXPECT_EQ(page["nextPageToken"], "3");
  EXPECT_EQ(page["remainingItemCount"], 1);
  page = Body(Get("/api/v1/jobs?order=newest&state=active&limit=2&pageToken=3", a_));
  EXPECT_THAT(Ids(page), ElementsAre("1"));
  EXPECT_EQ(page["nextPageToken"], "");
  EXPECT_EQ(page["remainingItemCount"], 0);

  EXPECT_THAT(Ids(Body(Get("/api/v1/jobs?state=terminal&order=newest", a_))),
              ElementsAre("5", "2"));
  EXPECT_THAT(Ids(Body(Get("/api/v1/jobs?state=terminal&phase=Pending", a_))), ElementsAre());
}

TEST_F(RestServerTest, HostileQueryParametersAre400NamingTheParameter) {
  const std::string id = Submit(a_, "x");
  ASSERT_TRUE(service_.SetLog(id, "main-0", LogStream::kStdout, "log", false).ok());
  const std::string logs = "/api/v1/jobs/" + id + "/logs";
  struct Case {
    std::string path;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {"/api/v1/jobs?limit=abc", "limit"},
           {"/api/v1/jobs?limit=", "limit"},
           {"/api/v1/jobs?limit=0", "limit"},
           {"/api/v1/jobs?limit=1001", "limit"},
           {"/api/v1/jobs?limit=-1", "limit"},
           {"/api/v1/jobs?limit=1.5", "limit"},
           {"/api/v1/jobs?limit=99999999999999999999999", "limit"},
           {"/api/v1/jobs?phase=running", "phase"},
           {"/api/v1/jobs?state=finished", "state"},
           {"/api/v1/jobs?state=", "state"},
           {"/api/v1/jobs?order=desc", "order"},
           {logs + "?offset=-1", "offset"},
           {logs + "?offset=abc", "offset"},
           {logs + "?offset=99999999999999999999999", "offset"},
           {logs + "?limit=0", "limit"},
           {logs + "?limit=1048577", "limit"},
           {logs + "?stream=stdin", "stream"},
           {"/api/v1/watch?afterSequence=-2", "afterSequence"},
           {"/api/v1/watch?afterSequence=x", "afterSequence"},
       }) {
    httplib::Result res = Get(c.path, a_);
    ASSERT_TRUE(res) << c.path;
    EXPECT_EQ(res->status, 400) << c.path;
    EXPECT_EQ(Code(res), "INVALID_ARGUMENT") << c.path;
    EXPECT_EQ(Field(res), c.field) << c.path;
  }
  EXPECT_EQ(Get("/api/v1/jobs?pageToken=zzz", a_)->status, 400);
}

TEST_F(RestServerTest, CancelAndEvents) {
  const std::string id = Submit(a_, "x");
  httplib::Result res = Post("/api/v1/jobs/" + id + "/cancel", a_, "");
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(Body(res)["status"]["phase"], "Cancelled");
  const std::string other = Submit(a_, "y");
  res = client_->Delete(("/api/v1/jobs/" + other).c_str(), Auth(a_));
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(Body(res)["status"]["phase"], "Cancelled");

  Json events = Body(Get("/api/v1/jobs/" + id + "/events", a_))["items"];
  ASSERT_EQ(events.size(), 2);
  EXPECT_EQ(events[0]["jobId"], id);
  EXPECT_EQ(events[0]["sequence"], 1);
  EXPECT_EQ(events[0]["type"], "Submitted");
  EXPECT_EQ(events[0]["phase"], "Pending");
  EXPECT_EQ(events[0]["time"], "2026-11-29T10:00:00Z");
  EXPECT_EQ(events[1]["type"], "Cancelled");
  EXPECT_EQ(events[1]["phase"], "Cancelled");
}

TEST_F(RestServerTest, Explain) {
  const std::string id = Submit(a_, "x");
  Json explanation = Body(Get("/api/v1/jobs/" + id + "/explain", a_));
  EXPECT_EQ(explanation["phase"], "Pending");
  EXPECT_TRUE(explanation["estimatedStartTime"].is_null());
  ASSERT_TRUE(service_
                  .SetExplanation(id, {.reason = "InsufficientResources",
                                       .message = "0/4 nodes: 3 insufficient gpu",
                                       .total_nodes = 4,
                                       .rejections = {{"insufficient gpu", 3}},
                                       .estimated_start_time = clock_.Now()})
                  .ok());
  explanation = Body(Get("/api/v1/jobs/" + id + "/explain", a_));
  EXPECT_EQ(explanation["reason"], "InsufficientResources");
  EXPECT_EQ(explanation["totalNodes"], 4);
  EXPECT_EQ(explanation["rejections"], Json::parse(R"([{"reason":"insufficient gpu","nodes":3}])"));
  EXPECT_EQ(explanation["estimatedStartTime"], "2026-11-29T10:00:00Z");
}

TEST_F(RestServerTest, LogsWithOffsetAndHeaders) {
  const std::string id = Submit(a_, "x");
  const std::string logs = "/api/v1/jobs/" + id + "/logs";
  httplib::Result res = Get(logs, a_);
  EXPECT_EQ(res->status, 409);
  EXPECT_EQ(Code(res), "FAILED_PRECONDITION");
  ASSERT_TRUE(
      service_.SetLog(id, "main-0", LogStream::kStdout, "hello\nworld\n", true).ok());
  ASSERT_TRUE(service_.SetLog(id, "main-0", LogStream::kStderr, "oops\n", false).ok());

  res = Get(logs + "?limit=6", a_);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "hello\n");
  EXPECT_THAT(res->get_header_value("Content-Type"), StartsWith("text/plain"));
  EXPECT_EQ(res->get_header_value("X-Tessera-Next-Offset"), "6");
  EXPECT_EQ(res->get_header_value("X-Tessera-Log-End"), "false");
  res = Get(logs + "?task=main-0&offset=6", a_);
  EXPECT_EQ(res->body, "world\n");
  EXPECT_EQ(res->get_header_value("X-Tessera-Next-Offset"), "12");
  EXPECT_EQ(res->get_header_value("X-Tessera-Log-End"), "true");
  res = Get(logs + "?stream=stderr", a_);
  EXPECT_EQ(res->body, "oops\n");
  EXPECT_EQ(res->get_header_value("X-Tessera-Log-End"), "false");
  EXPECT_EQ(Get(logs + "?task=nope", a_)->status, 404);
}

TEST_F(RestServerTest, WatchReplaysAfterSequence) {
  const std::string id = Submit(a_, "x");
  std::string received;
  httplib::Result res = client_->Get(("/api/v1/watch?job=" + id + "&afterSequence=0").c_str(),
                                     Auth(a_), [&](const char* data, size_t size) {
                                       received.append(data, size);
                                       return received.find('\n') == std::string::npos;
                                     });
  ASSERT_EQ(received.find('\n') != std::string::npos, true) << received;
  Json event = Json::parse(received.substr(0, received.find('\n')));
  EXPECT_EQ(event["jobId"], id);
  EXPECT_EQ(event["type"], "Submitted");
}

TEST_F(RestServerTest, WatchStreamsNewEvents) {
  const std::string id = Submit(a_, "x");
  std::promise<int> started;
  std::string received;
  std::string content_type;
  std::thread reader([&] {
    httplib::Client client("127.0.0.1", server_->port());
    client.Get(
        "/api/v1/watch", Auth(a_),
        [&](const httplib::Response& res) {
          content_type = res.get_header_value("Content-Type");
          started.set_value(res.status);
          return true;
        },
        [&](const char* data, size_t size) {
          received.append(data, size);
          return received.find('\n') == std::string::npos;
        });
  });
  ASSERT_EQ(started.get_future().get(), 200);
  ASSERT_TRUE(service_.AppendEvent(id, "Running", JobPhase::kRunning).ok());
  reader.join();
  EXPECT_EQ(content_type, "application/x-ndjson");
  ASSERT_NE(received.find('\n'), std::string::npos);
  Json event = Json::parse(received.substr(0, received.find('\n')));
  EXPECT_EQ(event["type"], "Running");
  EXPECT_EQ(event["phase"], "Running");
  EXPECT_EQ(event["sequence"], 2);
}

TEST_F(RestServerTest, WatchOfAnotherTenantsJobIsNotFound) {
  const std::string id = Submit(a_, "x");
  httplib::Result res = Get("/api/v1/watch?job=" + id + "&afterSequence=0", b_);
  EXPECT_EQ(res->status, 404);
}

TEST_F(RestServerTest, StopEndsOpenWatchStreams) {
  std::promise<void> started;
  std::thread reader([&] {
    httplib::Client client("127.0.0.1", server_->port());
    client.Get(
        "/api/v1/watch", Auth(a_),
        [&](const httplib::Response&) {
          started.set_value();
          return true;
        },
        [](const char*, size_t) { return true; });
  });
  started.get_future().wait();
  server_->Stop();
  server_->Stop();
  reader.join();
}

TEST_F(RestServerTest, WatchStreamsAreBounded) {
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {  // the fixture's max_watch_streams
    std::promise<void> started;
    std::future<void> ready = started.get_future();
    readers.emplace_back([this, started = std::move(started)]() mutable {
      httplib::Client client("127.0.0.1", server_->port());
      client.Get(
          "/api/v1/watch", Auth(a_),
          [&](const httplib::Response&) {
            started.set_value();
            return true;
          },
          [](const char*, size_t) { return true; });
    });
    ready.wait();
  }
  httplib::Result res = Get("/api/v1/watch", b_);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(Code(res), "UNAVAILABLE");
  server_->Stop();
  for (std::thread& reader : readers) reader.join();
}

TEST_F(RestServerTest, StreamsOfClientsThatLeftAreReleased) {
  // Each watch is dropped by its client right after the headers; with two streams allowed, the
  // later ones are served only if the server noticed that the earlier clients left.
  for (int i = 0; i < 5; ++i) {
    int status = 0;
    for (int attempt = 0; attempt < 500 && status != 200; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      httplib::Client client("127.0.0.1", server_->port());
      client.Get(
          "/api/v1/watch", Auth(a_),
          [&](const httplib::Response& r) {
            status = r.status;
            return false;
          },
          [](const char*, size_t) { return false; });
    }
    ASSERT_EQ(status, 200) << "watch " << i;
  }
}

TEST_F(RestServerTest, TextThatIsNotUtf8IsWrittenWithReplacementCharacters) {
  service_.SetNodes({{.name = "n\xff"}});
  httplib::Result res = Get("/api/v1/nodes", a_);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(Body(res)["items"][0]["name"], "n\xEF\xBF\xBD");  // U+FFFD
}

TEST_F(RestServerTest, QueueChangesAreForAdminsAndNameTheField) {
  service_.SetQueues({{.spec = {.name = "default"}, .pending_jobs = 1}});
  const std::string tree = R"({"queues": [{"name": "org", "children": [
      {"name": "team-a", "guaranteed": {"gpu": 1}}]}, {"name": "default"}]})";

  httplib::Result tenant = Put("/api/v1/queues", tree, a_);
  EXPECT_EQ(tenant->status, 403) << tenant->body;
  EXPECT_EQ(Body(tenant)["error"]["code"], "PERMISSION_DENIED");

  httplib::Result bad = Put("/api/v1/queues", R"({"queues": [{"name": "x", "weight": 0}]})", admin_);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(Body(bad)["error"]["field"], "queues[0].weight");

  httplib::Result yaml = Put("/api/v1/queues", "queues: [{name: default, weight: nine}]", admin_,
                             "application/yaml");
  EXPECT_EQ(yaml->status, 400);
  EXPECT_EQ(Body(yaml)["error"]["field"], "queues[0].weight");

  httplib::Result applied = Put("/api/v1/queues", tree, admin_);
  ASSERT_EQ(applied->status, 200) << applied->body;
  Json items = Body(applied)["items"];
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[1]["name"], "team-a");
  EXPECT_EQ(items[1]["parent"], "org");
  EXPECT_EQ(items[1]["guaranteed"]["gpu"], 1);

  // "default" has a pending job: it may not become a parent.
  httplib::Result conflict =
      Put("/api/v1/queues/sub", R"({"parent": "default"})", admin_);
  EXPECT_EQ(conflict->status, 409) << conflict->body;

  httplib::Result one = Put("/api/v1/queues/team-b", R"({"parent": "org", "weight": 2})", admin_);
  ASSERT_EQ(one->status, 200) << one->body;
  EXPECT_EQ(Body(one)["weight"], 2);
  httplib::Result unknown_parent = Put("/api/v1/queues/team-c", R"({"parent": "nope"})", admin_);
  EXPECT_EQ(unknown_parent->status, 400);
  EXPECT_EQ(Body(unknown_parent)["error"]["field"], "parent");

  EXPECT_EQ(Delete("/api/v1/queues/team-b", a_)->status, 403);
  EXPECT_EQ(Delete("/api/v1/queues/org", admin_)->status, 409);
  EXPECT_EQ(Delete("/api/v1/queues/nope", admin_)->status, 404);
  httplib::Result deleted = Delete("/api/v1/queues/team-b", admin_);
  ASSERT_EQ(deleted->status, 200) << deleted->body;
  EXPECT_EQ(Body(deleted)["items"].size(), 3u);
}

TEST_F(RestServerTest, QueuesNodesAndClusters) {
  Resources capacity{.cpu = 64'000, .memory = int64_t{512} << 30, .gpu = 8000};
  service_.SetQueues({{.spec = {.name = "default", .guaranteed = {{"gpu", 2000}}},
                       .usage = {{"cpu", 500}, {"gpu", 500}},
                       .share = 0.25,
                       .pending_jobs = 2,
                       .running_jobs = 1}});
  service_.SetNodes(
      {{.name = "n1",
        .cluster = "local",
        .labels = {{"rack", "r1"}},
        .taints = {{.key = "k", .value = "v", .effect = TaintEffect::kNoExecute}},
        .capacity = capacity,
        .gpus = {{.index = 0, .model = "H100", .memory = int64_t{80} << 30, .milli_used = 500}},
        .tasks = 1}});
  service_.SetClusters(
      {{.name = "local", .backend = "local", .nodes = 1, .ready_nodes = 1, .capacity = capacity}});

  Json queues = Body(Get("/api/v1/queues", a_));
  EXPECT_EQ(queues, Json::parse(R"({"items": [{"name": "default", "parent": "",
      "guaranteed": {"gpu": 2}, "weight": 1, "priority": 0, "ordering": "bestEffortFifo",
      "usage": {"cpu": "500m", "gpu": 0.5}, "borrowing": false, "share": 0.25,
      "pendingJobs": 2, "admittedJobs": 0, "runningJobs": 1}]})"));
  Json nodes = Body(Get("/api/v1/nodes", a_));
  EXPECT_EQ(nodes, Json::parse(R"({"items": [{"name": "n1", "cluster": "local",
      "labels": {"rack": "r1"}, "taints": [{"key": "k", "value": "v", "effect": "NoExecute"}],
      "ready": true, "unschedulable": false, "state": "Ready", "stateReason": "", "stateBy": "",
      "stateSince": null,
      "capacity": {"cpu": "64", "memory": "512Gi", "gpu": 8},
      "allocated": {"cpu": "0", "memory": "0", "gpu": 0},
      "gpus": [{"index": 0, "model": "H100", "memory": "80Gi", "milliUsed": 500, "healthy": true}],
      "tasks": 1}]})"));
  Json clusters = Body(Get("/api/v1/clusters", a_));
  EXPECT_EQ(clusters, Json::parse(R"({"items": [{"name": "local", "backend": "local",
      "reachable": true, "labels": {}, "nodes": 1, "readyNodes": 1,
      "capacity": {"cpu": "64", "memory": "512Gi", "gpu": 8},
      "allocated": {"cpu": "0", "memory": "0", "gpu": 0}}]})"));

  EXPECT_EQ(Delete("/api/v1/clusters/local", a_)->status, 403);
  EXPECT_EQ(Delete("/api/v1/clusters/elsewhere", admin_)->status, 404);
  httplib::Result deleted = Delete("/api/v1/clusters/local", admin_);
  ASSERT_EQ(deleted->status, 200) << deleted->body;
  EXPECT_EQ(Body(deleted), Json::parse(R"({"items": []})"));
}

TEST_F(RestServerTest, NodesAreCordonedDrainedAndUncordonedByAdminsNamingBadFields) {
  service_.SetNodes({{.name = "gpu-1", .cluster = "east"}});
  const std::string drain = "/api/v1/clusters/east/nodes/gpu-1:drain";
  EXPECT_EQ(Post(drain, a_, "{}")->status, 403);

  httplib::Result drained =
      Post(drain, admin_, R"({"reason": "replace GPU 3", "gracePeriod": "90s"})");
  ASSERT_EQ(drained->status, 200) << drained->body;
  EXPECT_EQ(Body(drained)["state"], "Drained");
  EXPECT_EQ(Body(drained)["stateReason"], "replace GPU 3");
  EXPECT_EQ(Body(drained)["stateBy"], "ops");
  EXPECT_EQ(Body(drained)["stateSince"], "2026-11-29T10:00:00Z");
  EXPECT_EQ(Body(drained)["unschedulable"], true);
  httplib::Result ready = Post("/api/v1/clusters/east/nodes/gpu-1:uncordon", admin_, "");
  ASSERT_EQ(ready->status, 200) << ready->body;
  EXPECT_EQ(Body(ready)["state"], "Ready");
  httplib::Result cordoned = Post("/api/v1/clusters/east/nodes/gpu-1:cordon", admin_, "");
  EXPECT_EQ(Body(cordoned)["state"], "Cordoned");

  httplib::Result grace = Post(drain, admin_, R"({"gracePeriod": "soon"})");
  EXPECT_EQ(grace->status, 400);
  EXPECT_EQ(Field(grace), "gracePeriod");
  grace = Post(drain, admin_, R"({"gracePeriod": "-5s"})");
  EXPECT_EQ(Field(grace), "gracePeriod");
  grace = Post("/api/v1/clusters/east/nodes/gpu-1:cordon", admin_, R"({"gracePeriod": 30})");
  EXPECT_EQ(Field(grace), "gracePeriod");
  EXPECT_EQ(Field(Post(drain, admin_, R"({"reason": 7})")), "reason");
  EXPECT_EQ(Field(Post(drain, admin_, R"({"force": true})")), "force");
  EXPECT_EQ(Post(drain, admin_, "[1]")->status, 400);

  httplib::Result cluster = Post("/api/v1/clusters/west/nodes/gpu-1:drain", admin_, "{}");
  EXPECT_EQ(cluster->status, 404);
  EXPECT_EQ(Field(cluster), "cluster");
  httplib::Result node = Post("/api/v1/clusters/east/nodes/gpu-9:drain", admin_, "{}");
  EXPECT_EQ(node->status, 404);
  EXPECT_EQ(Field(node), "node");
  EXPECT_EQ(Post("/api/v1/clusters/east/nodes/gpu-1:reboot", admin_, "{}")->status, 404);
}

TEST_F(RestServerTest, AdminsIssueTokens) {
  httplib::Result res = Post("/api/v1/tokens", admin_, R"({"tenant": "team-c", "role": "tenant"})");
  ASSERT_EQ(res->status, 201) << res->body;
  const Json issued = Body(res);
  EXPECT_EQ(issued["tenant"], "team-c");
  EXPECT_EQ(issued["role"], "tenant");
  const std::string token = issued["token"];
  EXPECT_THAT(token, StartsWith("tsr_"));
  Submit(token, "c");
  EXPECT_EQ(Body(Get("/api/v1/jobs", token))["items"][0]["metadata"]["tenant"], "team-c");

  res = Post("/api/v1/tokens", a_, R"({"tenant": "team-a", "role": "admin"})");
  EXPECT_EQ(res->status, 403);
  EXPECT_EQ(Code(res), "PERMISSION_DENIED");
  struct Case {
    std::string body;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{{R"({"tenant": "Team C"})", "tenant"},
                                         {R"({"role": "tenant"})", "tenant"},
                                         {R"({"tenant": 3})", "tenant"},
                                         {R"({"tenant": "t", "role": "root"})", "role"},
                                         {R"({"tenant": "t", "extra": 1})", "extra"},
                                         {"[1]", ""},
                                         {"{", ""}}) {
    res = Post("/api/v1/tokens", admin_, c.body);
    EXPECT_EQ(res->status, 400) << c.body;
    EXPECT_EQ(Field(res), c.field) << c.body;
  }
}

TEST_F(RestServerTest, RateLimitAnswers429WithRetryAfter) {
  StartServer({.rate_per_second = 0.5, .burst = 2});
  EXPECT_EQ(Get("/api/v1/jobs", a_)->status, 200);
  EXPECT_EQ(Get("/api/v1/jobs", a_)->status, 200);
  httplib::Result res = Get("/api/v1/jobs", a_);
  ASSERT_EQ(res->status, 429);
  EXPECT_EQ(Code(res), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(res->get_header_value("Retry-After"), "2");
  EXPECT_EQ(Get("/api/v1/jobs", b_)->status, 200);  // another tenant's bucket
  clock_.Set(clock_.Now() + std::chrono::seconds{2});
  EXPECT_EQ(Get("/api/v1/jobs", a_)->status, 200);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);  // not limited
}

TEST_F(RestServerTest, UnknownRouteIsJson404) {
  httplib::Result res = Get("/api/v1/nothing", a_);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(Code(res), "NOT_FOUND");
}

TEST_F(RestServerTest, StartFailsWhenThePortIsTaken) {
  RestServer other({.service = &service_, .auth = auth_.get()});
  absl::Status status = other.Start("127.0.0.1", server_->port());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("in use"));
  EXPECT_EQ(server_->Start("127.0.0.1", 0).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tessera::api
