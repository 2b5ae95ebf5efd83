#include "store/etcd/testing/etcd_process.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// Runs `command` with /bin/sh, its output appended to `log`.
absl::Status Run(const std::string& command, const std::string& log) {
  const std::string line = absl::StrCat(command, " >>", log, " 2>&1");
  if (std::system(line.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("'", command, "' failed; see ", log));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EtcdProcess::MakeCertificates() {
  if (access("/usr/bin/openssl", X_OK) != 0) {
    return absl::FailedPreconditionError("/usr/bin/openssl is not installed (Debian openssl)");
  }
  pki_dir_ = dir_ + "/pki";
  std::filesystem::create_directories(pki_dir_);
  const std::string log = pki_dir_ + "/openssl.log";
  const std::string in = "cd " + pki_dir_ + " && ";
  // EC keys: made in milliseconds, where RSA takes a noticeable part of a second.
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::ofstream(pki_dir_ + "/server.ext") << "subjectAltName=IP:127.0.0.1\n"
                                          << "extendedKeyUsage=serverAuth\n";
  std::ofstream(pki_dir_ + "/client.ext") << "extendedKeyUsage=clientAuth\n";
  for (const std::string& command :
       {absl::StrCat(in, "openssl req -x509 ", key,
                     " -keyout ca.key -out ca.crt -days 2 -subj /CN=tessera-test-ca"),
        absl::StrCat(in, "openssl req ", key,
                     " -keyout server.key -out server.csr -subj /CN=127.0.0.1"),
        absl::StrCat(in,
                     "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
                     "-days 2 -extfile server.ext -out server.crt"),
        absl::StrCat(in, "openssl req ", key,
                     " -keyout client.key -out client.csr -subj /CN=tessera-server"),
        absl::StrCat(in,
                     "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
                     "-days 2 -extfile client.ext -out client.crt")}) {
    if (absl::Status status = Run(command, log); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<EtcdProcess>> EtcdProcess::Start(int members, bool mutual_tls) {
  const std::string binary = EtcdBinary();
  if (access(binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(binary, " is not installed (Debian package etcd-server)"));
  }
  std::unique_ptr<EtcdProcess> etcd(new EtcdProcess());
  char dir[] = "/tmp/tessera-etcd-XXXXXX";
  if (mkdtemp(dir) == nullptr) return absl::InternalError("cannot make a temporary directory");
  etcd->dir_ = dir;
  if (mutual_tls) {
    if (absl::Status status = etcd->MakeCertificates(); !status.ok()) return status;
  }
  const std::string scheme = mutual_tls ? "https://" : "http://";
  std::vector<std::string> peer_urls;
  std::vector<std::string> initial_cluster;
  for (int m = 0; m < members; ++m) {
    peer_urls.push_back(absl::StrCat("http://127.0.0.1:", FreePort()));
    initial_cluster.push_back(absl::StrCat("m", m, "=", peer_urls.back()));
  }
  for (int m = 0; m < members; ++m) {
    const std::string client_url = absl::StrCat(scheme, "127.0.0.1:", FreePort());
    Member& member = etcd->members_.emplace_back();
    member.endpoint = client_url.substr(scheme.size());
    member.log = absl::StrCat(etcd->dir_, "/m", m, ".log");
    member.args = {binary,
                   absl::StrCat("--name=m", m),
                   absl::StrCat("--data-dir=", etcd->dir_, "/m", m),
                   "--listen-client-urls=" + client_url,
                   "--advertise-client-urls=" + client_url,
                   "--listen-peer-urls=" + peer_urls[m],
                   "--initial-advertise-peer-urls=" + peer_urls[m],
                   "--initial-cluster=" + absl::StrJoin(initial_cluster, ","),
                   "--initial-cluster-state=new",
                   "--log-level=error"};
    if (mutual_tls) {
      const std::string& pki = etcd->pki_dir_;
      member.args.insert(member.args.end(),
                         {"--client-cert-auth", absl::StrCat("--trusted-ca-file=", pki, "/ca.crt"),
                          absl::StrCat("--cert-file=", pki, "/server.crt"),
                          absl::StrCat("--key-file=", pki, "/server.key")});
    }
  }
  // Every member first: a member of several answers only once a quorum has formed.
  for (Member& member : etcd->members_) {
    if (absl::Status status = etcd->Spawn(member); !status.ok()) return status;
  }
  for (Member& member : etcd->members_) {
    if (absl::Status status = etcd->AwaitServing(member); !status.ok()) return status;
  }
  return etcd;
}

EtcdStoreOptions EtcdProcess::ClientOptions() const {
  EtcdStoreOptions options{.endpoints = endpoints()};
  if (!pki_dir_.empty()) {
    options.ca_file = pki_dir_ + "/ca.crt";
    options.cert_file = pki_dir_ + "/client.crt";
    options.key_file = pki_dir_ + "/client.key";
  }
  return options;
}

std::vector<std::string> EtcdProcess::endpoints() const {
  std::vector<std::string> out;
  for (const Member& member : members_) out.push_back(member.endpoint);
  return out;
}

absl::Status EtcdProcess::Spawn(Member& member) {
  member.pid = fork();
  if (member.pid < 0) return absl::InternalError("fork failed");
  if (member.pid == 0) {
    std::vector<char*> argv;
    for (std::string& arg : member.args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (freopen(member.log.c_str(), "a", stdout) == nullptr || dup2(fileno(stdout), 2) < 0) {
      _exit(126);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  return absl::OkStatus();
}

absl::Status EtcdProcess::AwaitServing(Member& member) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    EtcdStoreOptions options = ClientOptions();
    options.endpoints = {member.endpoint};
    options.request_timeout = std::chrono::milliseconds(500);
    absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(options);
    if (store.ok()) return absl::OkStatus();
    if (waitpid(member.pid, nullptr, WNOHANG) == member.pid) {
      member.pid = -1;
      return absl::UnavailableError(absl::StrCat("etcd exited at start; see ", member.log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::UnavailableError(absl::StrCat("etcd did not answer within 30 s; see ", member.log));
}

void EtcdProcess::Kill(int member) {
  Member& m = members_.at(member);
  if (m.pid <= 0) return;
  kill(m.pid, SIGKILL);
  waitpid(m.pid, nullptr, 0);
  m.pid = -1;
}

absl::Status EtcdProcess::Restart(int member) {
  Kill(member);
  Member& m = members_.at(member);
  if (absl::Status status = Spawn(m); !status.ok()) return status;
  return AwaitServing(m);
}

EtcdProcess::~EtcdProcess() {
  for (size_t m = 0; m < members_.size(); ++m) Kill(static_cast<int>(m));
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace tessera::store::testing
