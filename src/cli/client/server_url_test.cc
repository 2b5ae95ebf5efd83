#include "cli/client/server_url.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::cli {
namespace {

using ::testing::HasSubstr;

struct GoodCase {
  std::string text;
  std::string host;
  int port;
  std::string prefix;
  std::string canonical;
};

class ServerUrlGoodTest : public ::testing::TestWithParam<GoodCase> {};

TEST_P(ServerUrlGoodTest, Parses) {
  const GoodCase& c = GetParam();
  absl::StatusOr<ServerUrl> url = ParseServerUrl(c.text, "--server");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, c.host);
  EXPECT_EQ(url->port, c.port);
  EXPECT_EQ(url->path_prefix, c.prefix);
  EXPECT_EQ(url->ToString(), c.canonical);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ServerUrlGoodTest,
    ::testing::Values(
        GoodCase{"http://127.0.0.1:8080", "127.0.0.1", 8080, "", "http://127.0.0.1:8080"},
        GoodCase{"http://example.org", "example.org", 80, "", "http://example.org:80"},
        GoodCase{"localhost:9000", "localhost", 9000, "", "http://localhost:9000"},
        GoodCase{"http://[::1]:8080/", "::1", 8080, "", "http://[::1]:8080"},
        GoodCase{"http://proxy:80/tessera/", "proxy", 80, "/tessera", "http://proxy:80/tessera"}));

struct BadCase {
  std::string text;
  std::string error;
};

class ServerUrlBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ServerUrlBadTest, IsRefusedWithAReason) {
  absl::StatusOr<ServerUrl> url = ParseServerUrl(GetParam().text, "TESSERA_SERVER");
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(url.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(url.status().message()), HasSubstr("TESSERA_SERVER: '"));
  EXPECT_THAT(std::string(url.status().message()), HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ServerUrlBadTest,
    ::testing::Values(BadCase{"https://h:443", "https is not supported"},
                      BadCase{"unix:///run/tessera.sock", "unsupported scheme 'unix'"},
                      BadCase{"http://", "no host"}, BadCase{"", "no host"},
                      BadCase{"http://h:0", "port must be a number in 1..65535"},
                      BadCase{"http://h:99999", "port must be a number in 1..65535"},
                      BadCase{"http://h:80x", "port must be a number"},
                      BadCase{"http://h:", "empty port"},
                      BadCase{"http://user:pw@h:80", "user info is not allowed"},
                      BadCase{"http://h:80/?a=b", "query or fragment"},
                      BadCase{"http://[::1:80", "unterminated '['"}));

TEST(ServerUrlsTest, ParsesACommaSeparatedListInOrder) {
  absl::StatusOr<std::vector<ServerUrl>> urls =
      ParseServerUrls("http://a:8080, b:8081,http://[::1]:8082/p", "--server");
  ASSERT_TRUE(urls.ok()) << urls.status();
  ASSERT_EQ(urls->size(), 3u);
  EXPECT_EQ((*urls)[0].ToString(), "http://a:8080");
  EXPECT_EQ((*urls)[1].ToString(), "http://b:8081");
  EXPECT_EQ((*urls)[2].ToString(), "http://[::1]:8082/p");
}

TEST(ServerUrlsTest, OneUrlIsAListOfOne) {
  absl::StatusOr<std::vector<ServerUrl>> urls = ParseServerUrls("h:1", "--server");
  ASSERT_TRUE(urls.ok());
  EXPECT_EQ(urls->size(), 1u);
}

TEST(ServerUrlsTest, RefusesAnEmptyOrBadEntryNamingTheFlag) {
  absl::StatusOr<std::vector<ServerUrl>> empty = ParseServerUrls("http://a:1,,b:2", "--server");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()),
              HasSubstr("--server: 'http://a:1,,b:2': an empty URL in the list"));
  absl::StatusOr<std::vector<ServerUrl>> bad = ParseServerUrls("a:1,https://b", "--server");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("--server: 'https://b': https is not supported"));
  EXPECT_THAT(std::string(ParseServerUrls("", "--server").status().message()),
              HasSubstr("no host"));
}

}  // namespace
}  // namespace tessera::cli
