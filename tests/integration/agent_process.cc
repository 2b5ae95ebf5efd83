#include "agent_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "process_tools.h"
#include "server_process.h"

namespace tessera::integration {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll(25);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

AgentProcess::AgentProcess(AgentProcessOptions options) : options_(std::move(options)) {}

AgentProcess::~AgentProcess() {
  Kill();
  if (!options_.data_dir.empty()) KillProcessesMentioning(options_.data_dir);
}

std::string AgentProcess::Log() const { return ReadFile(log_path_); }

absl::Status AgentProcess::Start(std::chrono::seconds timeout) {
  if (running()) return absl::FailedPreconditionError("the agent is already running");
  const Clock::time_point deadline = Clock::now() + timeout;
  if (absl::Status s = Spawn(); !s.ok()) return s;
  const std::string registered = absl::StrCat("cluster ", options_.cluster, " registered with");
  while (true) {
    const std::string log = Log();
    if (absl::StrContains(log, registered)) return absl::OkStatus();
    if (Reaped()) {
      return absl::UnavailableError(absl::StrCat("tessera agent exited at start; log:\n", log));
    }
    if (Clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("tessera agent never registered; log:\n", log));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

absl::Status AgentProcess::Spawn() {
  static std::atomic<int> starts{0};
  log_path_ = absl::StrCat(options_.log_dir, "/agent-", options_.cluster, "-", ++starts, ".log");
  std::ofstream(log_path_, std::ios::trunc).flush();
  std::vector<std::string> args = {TesseraBinary(), "agent",   "--server",
                                   options_.server, "--cluster", options_.cluster,
                                   "--backend",     options_.backend, "--token",
                                   options_.token};
  if (!options_.data_dir.empty()) args.insert(args.end(), {"--data-dir", options_.data_dir});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  absl::StatusOr<pid_t> pid = SpawnLogged(std::move(args), log_path_);
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  wait_status_ = -1;
  return absl::OkStatus();
}

bool AgentProcess::Reaped() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    wait_status_ = status;
    return true;
  }
  return false;
}

int AgentProcess::AwaitExit(std::chrono::seconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pid_ <= 0) return wait_status_;
    if (Reaped()) return wait_status_;
    std::this_thread::sleep_for(kPoll);
  }
  return -1;
}

int AgentProcess::Stop(std::chrono::seconds grace) {
  if (!running()) return -1;
  ::kill(pid_, SIGTERM);
  AwaitExit(grace);
  Kill();  // no-op when it exited
  return wait_status_;
}

void AgentProcess::Kill() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  wait_status_ = status;
}

void WriteAgentServerConfig(const std::string& path, std::string_view agents_extra,
                            std::string_view lost_grace) {
  std::ofstream(path, std::ios::trunc) << "clusters: []\n"
                                       << "requeueBackoff: 500ms\n"
                                       << "agents:\n"
                                       << "  heartbeatInterval: 200ms\n"
                                       << "  unreachableTimeout: 600ms\n"
                                       << "  lostGrace: " << lost_grace << "\n"
                                       << agents_extra;
}

Json ClusterItem(const RestApi& api, std::string_view name) {
  const HttpAnswer answer = api.Get("/api/v1/clusters");
  if (answer.status != 200 || !answer.body.contains("items")) return nullptr;
  for (const Json& item : answer.body["items"]) {
    if (item.value("name", "") == name) return item;
  }
  return nullptr;
}

std::vector<Json> ClusterNodes(const RestApi& api, std::string_view cluster) {
  std::vector<Json> nodes;
  const HttpAnswer answer = api.Get("/api/v1/nodes");
  if (answer.status != 200 || !answer.body.contains("items")) return nodes;
  for (const Json& item : answer.body["items"]) {
    if (item.value("cluster", "") == cluster) nodes.push_back(item);
  }
  return nodes;
}

bool ClusterIs(const RestApi& api, std::string_view name, bool reachable, int ready_nodes) {
  const Json cluster = ClusterItem(api, name);
  return cluster.is_object() && cluster.value("reachable", !reachable) == reachable &&
         cluster.value("readyNodes", -1) == ready_nodes;
}

bool NodeReady(const RestApi& api, std::string_view cluster, std::string_view node, bool ready) {
  for (const Json& item : ClusterNodes(api, cluster)) {
    if (item.value("name", "") == node) return item.value("ready", !ready) == ready;
  }
  return false;
}

Json ClusterGpuJob(std::string_view name, std::string_view cluster, int replicas, int gpus,
                   std::string_view script) {
  Json job = ShellJob(name, script);
  job["spec"]["clusterSelector"] = {{"tessera.io/cluster", cluster}};
  job["spec"]["tasks"][0]["replicas"] = replicas;
  job["spec"]["tasks"][0]["resources"] = {{"cpu", "1"}, {"memory", "1Gi"}, {"gpu", gpus}};
  return job;
}

Json SimGangJob(std::string_view name, std::string_view cluster, int replicas, int gpus,
                std::string_view duration) {
  Json job = {{"apiVersion", "tessera/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}}}};
  Json& spec = job["spec"];
  spec["tolerations"] = Json::array({{{"key", "tessera.io/simulated"},
                                      {"operator", "Exists"},
                                      {"effect", "NoSchedule"}}});
  spec["clusterSelector"] = {{"tessera.io/cluster", cluster}};
  if (!duration.empty()) spec["duration"] = duration;
  spec["tasks"] = Json::array({{{"name", "main"},
                                {"replicas", replicas},
                                {"command", Json::array({"train"})},
                                {"resources", {{"cpu", "1"}, {"gpu", gpus}}}}});
  return job;
}

}  // namespace tessera::integration
