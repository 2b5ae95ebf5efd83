#include "server_process.h"

#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "process_tools.h"

namespace tessera::integration {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll(25);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

std::string TesseraBinary() {
  if (const char* env = std::getenv("TESSERA_BINARY"); env != nullptr && *env != '\0') return env;
  return TESSERA_BINARY_PATH;
}

ServerProcess::ServerProcess(ServerOptions options) : options_(std::move(options)) {}

ServerProcess::~ServerProcess() {
  if (running()) Stop();
  KillProcessesMentioning(options_.data_dir);
}

std::string ServerProcess::grpc_target() const { return absl::StrCat(host_, ":", grpc_port_); }

std::string ServerProcess::Log() const { return ReadFile(log_path_); }

absl::Status ServerProcess::Start(std::chrono::seconds timeout) {
  if (running()) return absl::FailedPreconditionError("the server is already running");
  if (absl::Status s = Spawn(); !s.ok()) return s;
  return AwaitStarted(timeout);
}

absl::Status ServerProcess::AwaitStarted(std::chrono::seconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  if (absl::Status s = AwaitServing(deadline); !s.ok()) return s;
  if (absl::Status s = AwaitReady(deadline); !s.ok()) return s;
  std::ifstream in(options_.data_dir + "/admin.token");
  if (!std::getline(in, admin_token_) || admin_token_.empty()) {
    return absl::UnavailableError(
        absl::StrCat(options_.data_dir, "/admin.token: missing or empty; log:\n", Log()));
  }
  return absl::OkStatus();
}

absl::Status ServerProcess::Spawn() {
  if (running()) return absl::FailedPreconditionError("the server is already running");
  // One file per start of any server of this test process, made empty here: the serving line
  // read from it is this start's.
  static std::atomic<int> starts{0};
  log_path_ = absl::StrCat(options_.log_dir, "/server-", ++starts, ".log");
  std::ofstream(log_path_, std::ios::trunc).flush();
  std::vector<std::string> args = {TesseraBinary(), "server"};
  if (options_.config_path.empty()) {
    args.push_back("--dev");
  } else {
    args.insert(args.end(), {"--config", options_.config_path});
  }
  const int grpc_port = options_.grpc_port != 0   ? options_.grpc_port
                        : options_.keep_grpc_port ? first_grpc_port_
                                                  : 0;
  args.insert(args.end(), {"--data-dir", options_.data_dir, "--http-addr",
                           absl::StrCat("127.0.0.1:", options_.http_port), "--grpc-addr",
                           absl::StrCat("127.0.0.1:", grpc_port)});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  absl::StatusOr<pid_t> pid = SpawnLogged(std::move(args), log_path_);
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  http_port_ = grpc_port_ = 0;
  admin_token_.clear();
  return absl::OkStatus();
}

absl::Status ServerProcess::AwaitServing(Clock::time_point deadline) {
  // "tessera server: REST http://H:P/api/v1  metrics http://H:P/metrics  gRPC H:P"
  static const std::regex kServing(
      R"(REST http://([^/ ]+):([0-9]+)/api/v1 .* gRPC ([^ ]+):([0-9]+))");
  while (true) {
    const std::string log = Log();
    std::smatch match;
    if (std::regex_search(log, match, kServing)) {
      host_ = match[1];
      http_port_ = std::stoi(match[2]);
      grpc_port_ = std::stoi(match[4]);
      if (first_grpc_port_ == 0) first_grpc_port_ = grpc_port_;
      return absl::OkStatus();
    }
    if (Reaped()) {
      return absl::UnavailableError(absl::StrCat("tessera server exited at start; log:\n", log));
    }
    if (Clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("tessera server printed no serving line; log:\n", log));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

absl::Status ServerProcess::AwaitReady(Clock::time_point deadline) {
  httplib::Client client(host_, http_port_);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(10));
  std::string last;  // the last answer, for the error
  while (true) {
    httplib::Result res = client.Get("/readyz");
    if (res && res->status == 200) return absl::OkStatus();
    last = res ? absl::StrCat(res->status, " ", res->body) : httplib::to_string(res.error());
    if (Reaped()) {
      return absl::UnavailableError(
          absl::StrCat("tessera server exited before /readyz; log:\n", Log()));
    }
    if (Clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("tessera server never answered GET http://", host_, ":", http_port_,
                       "/readyz with 200 (last: ", last, "); log:\n", Log()));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

bool ServerProcess::Reaped() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    wait_status_ = status;
    return true;
  }
  return false;
}

bool ServerProcess::Exited(int* status) {
  const bool exited = Reaped();
  if (exited && status != nullptr) *status = wait_status_;
  return exited;
}

int ServerProcess::Stop(std::chrono::seconds grace) {
  if (!running()) return -1;
  ::kill(pid_, SIGTERM);
  const Clock::time_point deadline = Clock::now() + grace;
  int status = 0;
  while (Clock::now() < deadline) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return status;
    }
    std::this_thread::sleep_for(kPoll);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

void ServerProcess::Kill() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace tessera::integration
