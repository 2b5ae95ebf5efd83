#include "cli/client/rest_client.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "cli/client/api_error.h"
#include "cli/testing/fake_api_server.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::cli {
namespace {

using ::tessera::cli::testing::ErrorBody;
using ::tessera::cli::testing::FakeApiServer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<RestClient> ClientFor(int port, std::string token = "") {
  RestClientOptions options;
  options.servers = {ServerUrl{"127.0.0.1", port, ""}};
  options.token = std::move(token);
  options.connect_timeout = std::chrono::seconds(2);
  return std::make_unique<RestClient>(std::move(options));
}

TEST(RestClientTest, GetsJsonWithTheBearerTokenAndEncodedQuery) {
  FakeApiServer server;
  server.On("GET", "/api/v1/jobs", 200,
            R"({"items": [{"metadata": {"id": "1"}}], "nextPageToken": ""})");
  auto client = ClientFor(server.Port(), "tsr_secret");
  absl::StatusOr<Json> answer =
      client->GetJson("/api/v1/jobs", {{"queue", "team a/b"}, {"limit", "5"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ((*answer)["items"][0]["metadata"]["id"], "1");
  std::vector<testing::RecordedRequest> seen = server.Requests("GET", "/api/v1/jobs");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].authorization, "Bearer tsr_secret");
  EXPECT_EQ(seen[0].Param("queue"), "team a/b");
  EXPECT_EQ(seen[0].Param("limit"), "5");
}

TEST(RestClientTest, KeepsTheServersKeyOrder) {
  FakeApiServer server;
  server.On("GET", "/x", 200, R"({"zeta": 1, "alpha": 2})");
  absl::StatusOr<Json> answer = ClientFor(server.Port())->GetJson("/x");
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->dump(), R"({"zeta":1,"alpha":2})");
}

TEST(RestClientTest, SendsNoAuthorizationWithoutAToken) {
  FakeApiServer server;
  server.On("GET", "/x", 200, "{}");
  ASSERT_TRUE(ClientFor(server.Port())->GetJson("/x").ok());
  EXPECT_EQ(server.Requests()[0].authorization, "");
}

TEST(RestClientTest, PostsJsonAndReportsTheStatus) {
  FakeApiServer server;
  server.On("POST", "/api/v1/jobs", 201, R"({"metadata": {"id": "7"}})");
  int status = 0;
  absl::StatusOr<Json> answer =
      ClientFor(server.Port())->PostJson("/api/v1/jobs", R"({"kind":"Job"})", &status);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(status, 201);
  const std::vector<testing::RecordedRequest> seen = server.Requests();
  EXPECT_EQ(seen[0].content_type, "application/json");
  EXPECT_EQ(seen[0].body, R"({"kind":"Job"})");
}

TEST(RestClientTest, ServerErrorsBecomeStatusesWithTheirMessageAndField) {
  FakeApiServer server;
  server.On("POST", "/api/v1/jobs", 400,
            ErrorBody("INVALID_ARGUMENT", "2:9: spec.tasks[0].resources.gpu: must be >= 0",
                      "spec.tasks[0].resources.gpu"));
  absl::StatusOr<Json> answer = ClientFor(server.Port())->PostJson("/api/v1/jobs", "{}");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(answer.status().message(), "2:9: spec.tasks[0].resources.gpu: must be >= 0");
  EXPECT_EQ(ErrorField(answer.status()), "spec.tasks[0].resources.gpu");
  EXPECT_FALSE(IsUnreachable(answer.status()));
}

TEST(RestClientTest, RateLimitCarriesRetryAfter) {
  FakeApiServer server;
  server.On("POST", "/api/v1/jobs", 429, ErrorBody("RESOURCE_EXHAUSTED", "rate limited"),
            {{"Retry-After", "3"}});
  absl::StatusOr<Json> answer = ClientFor(server.Port())->PostJson("/api/v1/jobs", "{}");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RetryAfter(answer.status()), std::chrono::seconds(3));
}

TEST(RestClientTest, AnswersWithoutAnErrorBodyKeepTheirHttpStatus) {
  FakeApiServer server;
  server.OnHandler("GET", "/x", [](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content("<html>Bad Gateway</html>\n", "text/html");
  });
  server.OnHandler("GET", "/ok-but-not-json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("hello", "text/plain");
  });
  auto client = ClientFor(server.Port());
  absl::StatusOr<Json> answer = client->GetJson("/x");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(answer.status().message(), "HTTP 502: <html>Bad Gateway</html>");
  answer = client->GetJson("/missing");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kNotFound);
  answer = client->GetJson("/ok-but-not-json");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(answer.status().message()), HasSubstr("not JSON"));
}

TEST(RestClientTest, NoServerIsUnreachableNamingTheAddress) {
  const int port = testing::UnusedPort();
  absl::StatusOr<Json> answer = ClientFor(port)->GetJson("/api/v1/jobs");
  ASSERT_FALSE(answer.ok());
  EXPECT_TRUE(IsUnreachable(answer.status()));
  EXPECT_THAT(std::string(answer.status().message()),
              HasSubstr("cannot connect to http://127.0.0.1:" + std::to_string(port)));
}

std::unique_ptr<RestClient> ClientForAll(const std::vector<int>& ports,
                                         Duration read_timeout = std::chrono::seconds(5)) {
  RestClientOptions options;
  for (int port : ports) options.servers.push_back(ServerUrl{"127.0.0.1", port, ""});
  options.connect_timeout = std::chrono::seconds(2);
  options.read_timeout = read_timeout;
  return std::make_unique<RestClient>(std::move(options));
}

TEST(RestClientFailoverTest, MovesOnFromAServerThatCannotBeReachedAndStaysThere) {
  FakeApiServer second;
  second.On("GET", "/x", 200, R"({"from": "second"})");
  auto client = ClientForAll({testing::UnusedPort(), second.Port()});
  absl::StatusOr<Json> answer = client->GetJson("/x");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ((*answer)["from"], "second");
  EXPECT_EQ(client->address(), second.Url());
  ASSERT_TRUE(client->GetJson("/x").ok());
  EXPECT_EQ(second.Requests("GET", "/x").size(), 2u);
}

TEST(RestClientFailoverTest, AStandbyWithoutALeaderSendsTheWriteToTheNextReplica) {
  FakeApiServer standby;
  standby.On("POST", "/api/v1/jobs", 503, ErrorBody("UNAVAILABLE", "no leader"),
             {{"Retry-After", "1"}, {"X-Tessera-Standby", "true"}});
  FakeApiServer leader;
  leader.On("POST", "/api/v1/jobs", 201, R"({"metadata": {"id": "3"}})");
  auto client = ClientForAll({standby.Port(), leader.Port()});
  absl::StatusOr<Json> answer = client->PostJson("/api/v1/jobs", R"({"a": 1})");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ((*answer)["metadata"]["id"], "3");
  ASSERT_EQ(leader.Requests("POST", "/api/v1/jobs").size(), 1u);
  EXPECT_EQ(leader.Requests("POST", "/api/v1/jobs")[0].body, R"({"a": 1})");
  ASSERT_TRUE(client->PostJson("/api/v1/jobs", "{}").ok());
  EXPECT_EQ(standby.Requests("POST", "/api/v1/jobs").size(), 1u);  // not asked again
}

TEST(RestClientFailoverTest, TheLeadersOwnUnavailableAnswerIsNotSentElsewhere) {
  FakeApiServer leader;
  leader.On("POST", "/api/v1/jobs", 503, ErrorBody("UNAVAILABLE", "the store is down"));
  FakeApiServer other;
  other.On("POST", "/api/v1/jobs", 201, "{}");
  absl::StatusOr<Json> answer =
      ClientForAll({leader.Port(), other.Port()})->PostJson("/api/v1/jobs", "{}");
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(std::string(answer.status().message()), HasSubstr("the store is down"));
  EXPECT_TRUE(other.Requests().empty());
}

TEST(RestClientFailoverTest, AWriteWhoseAnswerWasLostIsNotSentAgainButARead) {
  FakeApiServer slow;
  const auto stall = [](const httplib::Request&, httplib::Response& response) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    response.set_content("{}", "application/json");
  };
  slow.OnHandler("POST", "/x", stall);
  slow.OnHandler("GET", "/x", stall);
  FakeApiServer other;
  other.On("POST", "/x", 201, "{}");
  other.On("GET", "/x", 200, R"({"from": "other"})");
  absl::StatusOr<Json> write =
      ClientForAll({slow.Port(), other.Port()}, std::chrono::milliseconds(200))
          ->PostJson("/x", "{}");
  ASSERT_FALSE(write.ok());
  EXPECT_TRUE(IsUnreachable(write.status()));
  EXPECT_TRUE(other.Requests("POST", "/x").empty());
  absl::StatusOr<Json> read =
      ClientForAll({slow.Port(), other.Port()}, std::chrono::milliseconds(200))->GetJson("/x");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)["from"], "other");
}

TEST(RestClientFailoverTest, NoReplicaReachableNamesThemAll) {
  const int a = testing::UnusedPort();
  const int b = testing::UnusedPort();
  absl::StatusOr<Json> answer = ClientForAll({a, b})->GetJson("/api/v1/jobs");
  ASSERT_FALSE(answer.ok());
  EXPECT_TRUE(IsUnreachable(answer.status()));
  EXPECT_THAT(std::string(answer.status().message()),
              HasSubstr(fmt::format("cannot connect to any of http://127.0.0.1:{}, "
                                    "http://127.0.0.1:{}",
                                    a, b)));
}

TEST(RestClientTest, RawAnswersKeepHeaders) {
  FakeApiServer server;
  server.OnHandler("GET", "/logs", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("X-Tessera-Next-Offset", "5");
    res.set_content("hello", "text/plain");
  });
  absl::StatusOr<RawResponse> raw = ClientFor(server.Port())->GetRaw("/logs");
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(raw->body, "hello");
  EXPECT_EQ(raw->Header("x-tessera-next-offset"), "5");
  EXPECT_EQ(raw->Header("X-Tessera-Log-End"), "");
}

// Serves `chunks` as a chunked NDJSON answer.
void ServeStream(FakeApiServer& server, std::vector<std::string> chunks) {
  server.OnHandler("GET", "/api/v1/watch",
                   [chunks](const httplib::Request&, httplib::Response& res) {
                     res.set_chunked_content_provider("application/x-ndjson",
                                                      [chunks](size_t, httplib::DataSink& sink) {
                                                        for (const std::string& c : chunks)
                                                          sink.write(c.data(), c.size());
                                                        sink.done();
                                                        return true;
                                                      });
                   });
}

TEST(RestClientTest, StreamsJsonLinesAcrossChunksSkippingKeepAlives) {
  FakeApiServer server;
  ServeStream(server, {R"({"jobId": "1", "seq)", "uence\": 1}\n{}\n\n{\"jobId\": \"2\"}\r\n",
                       R"({"jobId": "3"})"});
  std::vector<std::string> ids;
  absl::Status streamed =
      ClientFor(server.Port())
          ->StreamJsonLines("/api/v1/watch", {{"job", "1"}}, [&](const Json& e) {
            ids.push_back(e.value("jobId", ""));
            return true;
          });
  ASSERT_TRUE(streamed.ok()) << streamed;
  EXPECT_THAT(ids, ElementsAre("1", "2", "3"));
  EXPECT_EQ(server.Requests()[0].Param("job"), "1");
}

TEST(RestClientTest, StreamStopsWhenTheReaderSaysSo) {
  FakeApiServer server;
  ServeStream(server, {"{\"jobId\": \"1\"}\n{\"jobId\": \"2\"}\n{\"jobId\": \"3\"}\n"});
  int seen = 0;
  absl::Status streamed =
      ClientFor(server.Port())->StreamJsonLines("/api/v1/watch", {}, [&](const Json&) {
        return ++seen < 2;
      });
  EXPECT_TRUE(streamed.ok()) << streamed;
  EXPECT_EQ(seen, 2);
}

TEST(RestClientTest, StreamErrorsAreReported) {
  FakeApiServer server;
  ServeStream(server, {"{\"jobId\": \"1\"}\nnot json\n"});
  absl::Status streamed =
      ClientFor(server.Port())->StreamJsonLines("/api/v1/watch", {}, [](const Json&) {
        return true;
      });
  EXPECT_EQ(streamed.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(streamed.message()), HasSubstr("not a JSON object: 'not json'"));

  server.On("GET", "/api/v1/watch", 401, ErrorBody("UNAUTHENTICATED", "missing bearer token"));
  streamed = ClientFor(server.Port())->StreamJsonLines("/api/v1/watch", {}, [](const Json&) {
    return true;
  });
  EXPECT_EQ(streamed.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(streamed.message(), "missing bearer token");
}

TEST(ApiErrorTest, KnowsTheCanonicalNames) {
  EXPECT_EQ(StatusCodeFromName("FAILED_PRECONDITION"), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(StatusCodeFromName("UNAUTHENTICATED"), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusCodeFromName("OK"), std::nullopt);
  EXPECT_EQ(StatusCodeFromName("nonsense"), std::nullopt);
}

TEST(ApiErrorTest, UnknownCodesFallBackToTheHttpStatus) {
  absl::Status s = ApiErrorFromResponse(409, ErrorBody("WHATEVER", "taken"), "");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "taken");
  EXPECT_FALSE(RetryAfter(s).has_value());
  EXPECT_FALSE(ErrorField(s).has_value());
  EXPECT_FALSE(RetryAfter(ApiErrorFromResponse(429, "", "soon")).has_value());
}

TEST(PercentEncodeTest, EscapesAllButUnreserved) {
  EXPECT_EQ(PercentEncode("Az09-_.~"), "Az09-_.~");
  EXPECT_EQ(PercentEncode("a b/c?&="), "a%20b%2Fc%3F%26%3D");
  EXPECT_EQ(PercentEncode("\xC3\xA9"), "%C3%A9");
}

}  // namespace
}  // namespace tessera::cli
