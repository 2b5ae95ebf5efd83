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

}  // namespace
}  // namespace tessera::cli
