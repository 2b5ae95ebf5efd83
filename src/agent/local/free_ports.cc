#include "agent/local/free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

// Closes every socket it holds.
class Sockets {
 public:
  ~Sockets() {
    for (int fd : fds_) ::close(fd);
  }
  void Add(int fd) { fds_.push_back(fd); }

 private:
  std::vector<int> fds_;
};

}  // namespace

absl::StatusOr<std::vector<int32_t>> PickFreePorts(int count, const std::string& address) {
  if (count < 0 || count > 4096) {
    return absl::InvalidArgumentError(fmt::format("count: {} is outside 0..4096", count));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        fmt::format("address: \"{}\" is not an IPv4 address", address));
  }
  Sockets sockets;
  std::vector<int32_t> ports;
  for (int i = 0; i < count; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::UnavailableError(fmt::format("socket: {}", std::strerror(errno)));
    sockets.Add(fd);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return absl::UnavailableError(
          fmt::format("cannot bind {}:0: {}", address, std::strerror(errno)));
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  return ports;
}

}  // namespace tessera::agent
