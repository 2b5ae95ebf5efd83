#include "agent/local/free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>

#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

TEST(FreePortsTest, DistinctPortsThatCanBeBound) {
  absl::StatusOr<std::vector<int32_t>> ports = PickFreePorts(8);
  ASSERT_TRUE(ports.ok()) << ports.status();
  ASSERT_EQ(ports->size(), 8u);
  EXPECT_EQ(std::set<int32_t>(ports->begin(), ports->end()).size(), 8u);
  for (int32_t port : *ports) {
    EXPECT_GT(port, 0);
    EXPECT_LE(port, 65535);
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{.sin_family = AF_INET, .sin_port = htons(static_cast<uint16_t>(ports->front()))};
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
}

TEST(FreePortsTest, BadArguments) {
  EXPECT_EQ(PickFreePorts(-1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PickFreePorts(1, "localhost").status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<int32_t>> none = PickFreePorts(0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace tessera::agent
