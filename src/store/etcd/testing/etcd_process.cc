#include "store/etcd/testing/etcd_process.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "store/etcd/etcd_store.h"

namespace tessera::store::testing {
namespace {

// A port no one listens on now (the kernel's choice for port 0).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

std::string EtcdBinary() {
  const char* configured = std::getenv("TESSERA_ETCD");
  return configured != nullptr ? configured : "/usr/bin/etcd";
}

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdProcess>> EtcdProcess::Start() {
  const std::string binary = EtcdBinary();
  if (access(binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(binary, " is not installed (Debian package etcd-server)"));
  }
  std::unique_ptr<EtcdProcess> etcd(new EtcdProcess());
  char dir[] = "/tmp/tessera-etcd-XXXXXX";
  if (mkdtemp(dir) == nullptr) return absl::InternalError("cannot make a temporary directory");
  etcd->data_dir_ = dir;
  const int client = FreePort();
  const int peer = FreePort();
  etcd->endpoint_ = absl::StrCat("127.0.0.1:", client);
  const std::string client_url = absl::StrCat("http://127.0.0.1:", client);
  const std::string peer_url = absl::StrCat("http://127.0.0.1:", peer);
  etcd->args_ = {binary,
                 "--name=default",
                 "--data-dir=" + etcd->data_dir_ + "/data",
                 "--listen-client-urls=" + client_url,
                 "--advertise-client-urls=" + client_url,
                 "--listen-peer-urls=" + peer_url,
                 "--initial-advertise-peer-urls=" + peer_url,
                 "--initial-cluster=default=" + peer_url,
                 "--log-level=error"};
  if (absl::Status status = etcd->Run(); !status.ok()) return status;
  return etcd;
}

absl::Status EtcdProcess::Run() {
  const std::string log = data_dir_ + "/etcd.log";
  pid_ = fork();
  if (pid_ < 0) return absl::InternalError("fork failed");
  if (pid_ == 0) {
    std::vector<char*> argv;
    for (std::string& arg : args_) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (freopen(log.c_str(), "a", stdout) == nullptr || dup2(fileno(stdout), 2) < 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(
        {.endpoints = {endpoint_}, .request_timeout = std::chrono::milliseconds(500)});
    if (store.ok()) return absl::OkStatus();
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::UnavailableError(absl::StrCat("etcd exited at start; see ", log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::UnavailableError(absl::StrCat("etcd did not answer within 30 s; see ", log));
}

void EtcdProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

absl::Status EtcdProcess::Restart() {
  Kill();
  return Run();
}

EtcdProcess::~EtcdProcess() {
  Kill();
  std::error_code ignored;
  std::filesystem::remove_all(data_dir_, ignored);
}

}  // namespace tessera::store::testing
