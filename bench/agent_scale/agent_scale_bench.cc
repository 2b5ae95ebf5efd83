// The agent protocol at scale: N simulated agents of M nodes each, in this process, speak the
// protocol (proto/tessera/agent/v1/agent.proto) over real gRPC on loopback to a real `tessera
// server` process — register, full inventory, the resync answered, then heartbeats carrying the
// usage columns (cpu, memory, GPU utilisation, power) of every node at --rate-hz per agent —
// while a stream of jobs for simulated nodes is submitted over REST (the agents start the tasks
// they are bound and end them after their duration).
//
// Reported over the measured window (after a warm-up):
//   - server CPU: utime + stime of the server process (/proc/PID/stat), as cores busy;
//   - server RSS at the end (VmRSS) and its peak (VmHWM);
//   - node updates/s: sent (node usages in heartbeats the transport accepted; gRPC flow control
//     keeps the sender at most a few messages ahead of the server) and applied (the server's
//     tessera_agent_node_updates_total counter);
//   - heartbeat processing time on the server (tessera_agent_heartbeat_seconds: decoding is not
//     included, applying the message is): p50 / p99 / p999 interpolated within the histogram's
//     buckets, and the mean;
//   - whether every stream stayed healthy (no write failed, no stream ended);
//   - the benchmark's own CPU (the agents and the job stream share the machine with the server);
// then the loss detection time, twice: agent 0's stream is cancelled (an agent that exits or
// whose connection breaks: the server sees the stream end), and agent 1 stops heartbeating with
// its stream left open (a hung agent, or a network that drops packets: only the server's
// unreachableTimeout notices). GET /api/v1/clusters is polled (every 20 ms) until it shows the
// cluster unreachable — reported from the moment the agent went away and from its last
// heartbeat (the server's timeout counts from the latter).
//
// Usage:
//   agent_scale_bench [--agents 10] [--nodes-per-agent 1000] [--rate-hz 1] [--seconds 60]
//                     [--warmup 10] [--jobs-per-second 2] [--heartbeat-interval 1s]
//                     [--unreachable-timeout 3s]
//   agent_scale_bench --grpc HOST:PORT --http HOST:PORT --token T [--server-pid PID] ...
// Without --grpc it starts `tessera server --config` (clusters: [], agents: {heartbeatInterval,
// unreachableTimeout}) on loopback in a temporary directory; the binary is $TESSERA_BINARY or the
// one built next to this benchmark.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "fmt/format.h"
#include "grpcpp/grpcpp.h"
#include "rest_api.h"
#include "server_process.h"
#include "temp_dir.h"
#include "tessera/agent/v1/agent.grpc.pb.h"

namespace tessera::bench {
namespace {

namespace v1 = ::tessera::agent::v1;
using integration::Json;
using integration::RestApi;
using SteadyClock = std::chrono::steady_clock;
using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>;

struct Flags {
  int agents = 10;
  int nodes_per_agent = 1000;
  double rate_hz = 1;
  int seconds = 60;
  int warmup = 10;
  double jobs_per_second = 2;
  std::string heartbeat_interval = "1s";
  std::string unreachable_timeout = "3s";
  std::string grpc;  // an existing server
  std::string http;
  std::string token;
  int server_pid = 0;
};

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ClusterName(int agent) { return fmt::format("bench-{}", agent); }

// One simulated agent: its own channel (its own TCP connection) and Connect stream.
class SimAgent {
 public:
  SimAgent(int index, const Flags& flags, const std::string& target, const std::string& token)
      : index_(index), flags_(flags) {
    grpc::ChannelArguments args;
    args.SetInt("tessera.bench.agent", index);  // distinct arguments: a connection of its own
    stub_ = v1::AgentService::NewStub(
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
    context_.AddMetadata("authorization", "Bearer " + token);
  }

  ~SimAgent() { Stop(); }

  // Register, the full inventory, the resync answered. False (with a message) on failure.
  bool Connect(std::string& error) {
    stream_ = stub_->Connect(&context_);
    v1::AgentMessage hello;
    hello.mutable_register_()->set_cluster(ClusterName(index_));
    hello.mutable_register_()->set_backend("sim");
    hello.mutable_register_()->set_agent_version("agent-scale-bench");
    v1::ServerMessage reply;
    if (!stream_->Write(hello) || !stream_->Read(&reply) || !reply.has_registered()) {
      error = Finish();
      return false;
    }
    epoch_ = reply.registered().epoch();
    if (!stream_->Write(Inventory())) {
      error = Finish();
      return false;
    }
    if (!stream_->Read(&reply) || !reply.has_resync()) {
      error = Finish();
      return false;
    }
    v1::AgentMessage report;
    report.mutable_resync_report()->set_epoch(epoch_);  // nothing of the server's runs here
    if (!stream_->Write(report)) {
      error = Finish();
      return false;
    }
    BuildHeartbeat();
    return true;
  }

  void Start() {
    reader_ = std::thread([this] { ReaderMain(); });
    beater_ = std::thread([this] { HeartbeatMain(); });
  }

  // Cancels the stream: to the server, the agent is gone.
  void Cancel() {
    cancelled_ = true;
    context_.TryCancel();
  }

  // Stops heartbeating but keeps the stream open: an agent that hangs, or a network that
  // drops its packets without closing the connection.
  void Silence() {
    silenced_ = true;
    if (beater_.joinable()) beater_.join();  // its last heartbeat is then known
  }

  void Stop() {
    stopping_ = true;
    if (!cancelled_.exchange(true)) context_.TryCancel();
    if (beater_.joinable()) beater_.join();
    if (reader_.joinable()) reader_.join();
    if (stream_ != nullptr && end_status_.empty()) Finish();
  }

  uint64_t node_updates() const { return node_updates_.load(); }
  uint64_t heartbeats() const { return heartbeats_.load(); }
  uint64_t late_ticks() const { return late_ticks_.load(); }
  uint64_t binds() const { return binds_.load(); }
  // When the last heartbeat was written.
  SteadyClock::time_point last_heartbeat() const {
    return SteadyClock::time_point(SteadyClock::duration(last_heartbeat_.load()));
  }
  // Whether the stream broke (a failed write or an end) before Cancel or Stop.
  bool broken() const { return broken_.load(); }
  // The stream's status ("code message"), once stopped.
  const std::string& end_status() const { return end_status_; }

 private:
  v1::AgentMessage Inventory() const {
    v1::AgentMessage message;
    v1::Inventory* inventory = message.mutable_inventory();
    inventory->set_epoch(epoch_);
    inventory->set_full(true);
    for (int i = 0; i < flags_.nodes_per_agent; ++i) {
      v1::Node* node = inventory->add_nodes();
      node->set_id(static_cast<uint32_t>(i));
      node->set_name(fmt::format("{}-n{:05d}", ClusterName(index_), i));
      node->set_pool("H100");
      node->set_cpu(64000);
      node->set_memory(int64_t{512} << 30);
      node->set_allocatable_cpu(64000);
      node->set_allocatable_memory(int64_t{512} << 30);
      node->set_ready(true);
      v1::Taint* taint = node->add_taints();
      taint->set_key("tessera.io/simulated");
      taint->set_value("true");
      taint->set_effect("NoSchedule");
      for (int g = 0; g < 8; ++g) {
        v1::GpuDevice* gpu = node->add_gpus();
        gpu->set_index(g);
        gpu->set_model("H100");
        gpu->set_memory(int64_t{80} << 30);
        gpu->set_healthy(true);
      }
    }
    return message;
  }

  void BuildHeartbeat() {
    v1::Heartbeat* heartbeat = heartbeat_.mutable_heartbeat();
    heartbeat->set_epoch(epoch_);
    for (int i = 0; i < flags_.nodes_per_agent; ++i) {
      heartbeat->add_node_id(static_cast<uint32_t>(i));
      heartbeat->add_cpu(1000 + (i * 37) % 60000);
      heartbeat->add_memory((int64_t{1} << 30) * (1 + i % 400));
      heartbeat->add_gpu_utilization(static_cast<float>(i % 101));
      heartbeat->add_power_watts(300.0f + static_cast<float>(i % 400));
    }
  }

  bool Write(const v1::AgentMessage& message) {
    std::lock_guard<std::mutex> lock(write_mu_);
    return stream_->Write(message);
  }

  void MarkBroken() {
    if (!cancelled_.load()) broken_ = true;
  }

  v1::AgentMessage Update(const std::string& launch_id, v1::TaskUpdate::State state) const {
    v1::AgentMessage message;
    v1::TaskUpdate* update = message.mutable_task();
    update->set_epoch(epoch_);
    update->set_launch_id(launch_id);
    update->set_state(state);
    update->set_time_ms(NowMillis());
    if (state == v1::TaskUpdate::SUCCEEDED) {
      update->set_has_exit_code(true);
      update->set_exit_code(0);
    }
    return message;
  }

  void ReaderMain() {
    v1::ServerMessage message;
    while (stream_->Read(&message)) {
      if (message.has_bind() && message.bind().epoch() == epoch_) {
        ++binds_;
        const v1::Bind& bind = message.bind();
        if (!Write(Update(bind.launch_id(), v1::TaskUpdate::STARTED))) break;
        const int64_t duration = bind.duration_ms() > 0 ? bind.duration_ms() : 60'000;
        std::lock_guard<std::mutex> lock(tasks_mu_);
        ends_.emplace(SteadyClock::now() + std::chrono::milliseconds(duration), bind.launch_id());
      } else if (message.has_cancel() && message.cancel().epoch() == epoch_) {
        {
          std::lock_guard<std::mutex> lock(tasks_mu_);
          std::erase_if(ends_, [&](const auto& e) { return e.second == message.cancel().launch_id(); });
        }
        if (!Write(Update(message.cancel().launch_id(), v1::TaskUpdate::CANCELLED))) break;
      }
    }
    MarkBroken();
  }

  // Ends the tasks whose time has come; false when the stream broke.
  bool EndDueTasks() {
    std::vector<std::string> due;
    {
      std::lock_guard<std::mutex> lock(tasks_mu_);
      const auto now = SteadyClock::now();
      while (!ends_.empty() && ends_.begin()->first <= now) {
        due.push_back(ends_.begin()->second);
        ends_.erase(ends_.begin());
      }
    }
    for (const std::string& id : due) {
      if (!Write(Update(id, v1::TaskUpdate::SUCCEEDED))) return false;
    }
    return true;
  }

  void HeartbeatMain() {
    const auto period = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(1.0 / flags_.rate_hz));
    auto next = SteadyClock::now();
    uint64_t sequence = 0;
    while (!stopping_.load() && !cancelled_.load() && !silenced_.load()) {
      next += period;
      std::this_thread::sleep_until(next);
      const auto now = SteadyClock::now();
      if (now > next + period) {  // behind by more than a tick: skip, never burst
        late_ticks_ += static_cast<uint64_t>((now - next) / period);
        next = now;
      }
      if (stopping_.load() || cancelled_.load() || silenced_.load()) break;
      v1::Heartbeat* heartbeat = heartbeat_.mutable_heartbeat();
      heartbeat->set_sequence(++sequence);
      heartbeat->set_time_ms(NowMillis());
      if (!Write(heartbeat_) || !EndDueTasks()) {
        MarkBroken();
        break;
      }
      last_heartbeat_ = SteadyClock::now().time_since_epoch().count();
      ++heartbeats_;
      node_updates_ += static_cast<uint64_t>(flags_.nodes_per_agent);
    }
  }

  // The stream's status, read once ("code message"); kept in end_status_.
  std::string Finish() {
    if (end_status_.empty()) {
      const grpc::Status status = stream_->Finish();
      end_status_ =
          fmt::format("{} {}", static_cast<int>(status.error_code()), status.error_message());
    }
    return end_status_;
  }

  const int index_;
  const Flags& flags_;
  std::unique_ptr<v1::AgentService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<Stream> stream_;
  uint64_t epoch_ = 0;
  v1::AgentMessage heartbeat_;
  std::mutex write_mu_;
  std::mutex tasks_mu_;
  std::multimap<SteadyClock::time_point, std::string> ends_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> silenced_{false};
  std::atomic<bool> broken_{false};
  std::atomic<uint64_t> node_updates_{0};
  std::atomic<uint64_t> heartbeats_{0};
  std::atomic<uint64_t> late_ticks_{0};
  std::atomic<uint64_t> binds_{0};
  std::atomic<SteadyClock::rep> last_heartbeat_{0};
  std::string end_status_;
  std::thread reader_;
  std::thread beater_;
};

// What /proc says of the server process.
struct ProcSample {
  double cpu_seconds = 0;  // utime + stime
  int64_t rss_kib = 0;
  int64_t hwm_kib = 0;
};

ProcSample SampleProcess(int pid) {
  ProcSample sample;
  std::ifstream stat_file(fmt::format("/proc/{}/stat", pid));
  const std::string stat((std::istreambuf_iterator<char>(stat_file)),
                         std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close != std::string::npos) {
    std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
    // After the command: state is field 3 of the whole line, utime 14 and stime 15.
    if (fields.size() > 12) {
      const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
      sample.cpu_seconds = (std::stod(fields[11]) + std::stod(fields[12])) / ticks;
    }
  }
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    const auto value = [&] {
      int64_t kib = 0;
      std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (parts.size() >= 2) (void)absl::SimpleAtoi(parts[1], &kib);
      return kib;
    };
    if (line.rfind("VmRSS:", 0) == 0) sample.rss_kib = value();
    if (line.rfind("VmHWM:", 0) == 0) sample.hwm_kib = value();
  }
  return sample;
}

// The agent metrics of the server's /metrics text.
struct MetricsSample {
  double node_updates = 0;
  double heartbeat_count = 0;
  double heartbeat_sum = 0;
  std::map<double, double> buckets;  // upper bound → cumulative count
  bool present = false;
};

MetricsSample SampleMetrics(const RestApi& api) {
  MetricsSample sample;
  const integration::HttpAnswer answer = api.Get("/metrics");
  std::istringstream in(answer.text);
  std::string line;
  const auto number = [](std::string_view text) {
    const std::string_view value = text.substr(text.rfind(' ') + 1);
    double v = 0;
    (void)absl::SimpleAtod(absl::string_view(value.data(), value.size()), &v);
    return v;
  };
  while (std::getline(in, line)) {
    if (line.rfind("tessera_agent_node_updates_total ", 0) == 0) {
      sample.node_updates = number(line);
      sample.present = true;
    } else if (line.rfind("tessera_agent_heartbeat_seconds_count", 0) == 0) {
      sample.heartbeat_count = number(line);
    } else if (line.rfind("tessera_agent_heartbeat_seconds_sum", 0) == 0) {
      sample.heartbeat_sum = number(line);
    } else if (line.rfind("tessera_agent_heartbeat_seconds_bucket{le=\"", 0) == 0) {
      const size_t begin = line.find('"') + 1;
      const std::string le = line.substr(begin, line.find('"', begin) - begin);
      const double bound = le == "+Inf" ? INFINITY : std::stod(le);
      sample.buckets[bound] = number(line);
    }
  }
  return sample;
}

// The q-quantile of the observations between two samples, interpolated within its bucket.
double Quantile(const MetricsSample& before, const MetricsSample& after, double q) {
  const double total = after.heartbeat_count - before.heartbeat_count;
  if (total <= 0) return NAN;
  double lower = 0;
  double below = 0;
  for (const auto& [bound, cumulative] : after.buckets) {
    const auto was = before.buckets.find(bound);
    const double count = cumulative - (was == before.buckets.end() ? 0 : was->second);
    if (count >= q * total) {
      if (std::isinf(bound)) return lower;  // beyond the last bound: report the bound
      const double in_bucket = count - below;
      return in_bucket <= 0 ? bound : lower + (bound - lower) * (q * total - below) / in_bucket;
    }
    lower = bound;
    below = count;
  }
  return lower;
}

Json SimJob(int n) {
  const int gpus[] = {1, 2, 4, 8};
  Json job = {{"apiVersion", "tessera/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", fmt::format("bench-{}", n)}}}};
  job["spec"]["duration"] = fmt::format("{}s", 20 + n % 20);
  job["spec"]["tolerations"] = Json::array(
      {{{"key", "tessera.io/simulated"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  job["spec"]["tasks"] = Json::array({{{"name", "main"},
                                       {"replicas", n % 5 == 0 ? 2 : 1},
                                       {"command", Json::array({"train"})},
                                       {"resources", {{"cpu", "4"}, {"gpu", gpus[n % 4]}}}}});
  return job;
}

// Submits jobs at `rate` per second until stopped.
class JobStream {
 public:
  JobStream(RestApi api, double rate) : api_(std::move(api)), rate_(rate) {
    if (rate_ > 0) thread_ = std::thread([this] { Main(); });
  }
  ~JobStream() { Stop(); }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  int submitted() const { return submitted_.load(); }
  int refused() const { return refused_.load(); }

 private:
  void Main() {
    const auto period = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(1.0 / rate_));
    auto next = SteadyClock::now();
    for (int n = 0;; ++n) {
      next += period;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
      }
      const integration::HttpAnswer answer = api_.Submit(SimJob(n));
      (answer.status == 201 ? submitted_ : refused_)++;
    }
  }

  RestApi api_;
  const double rate_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<int> submitted_{0};
  std::atomic<int> refused_{0};
  std::thread thread_;
};

bool ClusterReachable(const RestApi& api, const std::string& name, bool* listed) {
  *listed = false;
  const integration::HttpAnswer answer = api.Get("/api/v1/clusters");
  if (answer.status != 200 || !answer.body.contains("items")) return true;
  for (const Json& item : answer.body["items"]) {
    if (item.value("name", "") != name) continue;
    *listed = true;
    return item.value("reachable", true);
  }
  return true;
}

// One loss: how long after the agent went away (and after its last heartbeat) the server showed
// its cluster unreachable.
struct LossSample {
  std::optional<double> detected;  // seconds after the agent went away; none within 60 s
  double silent_before = 0;        // seconds from its last heartbeat to going away
};

// Agent `agent` goes away — its stream cancelled, or (silence) its heartbeats stopped with the
// stream left open — and GET /api/v1/clusters is polled every 20 ms until `cluster` shows
// unreachable.
LossSample MeasureLoss(const RestApi& api, SimAgent& agent, const std::string& cluster,
                       bool silence) {
  if (silence) {
    agent.Silence();
  } else {
    agent.Cancel();
  }
  const auto gone_at = SteadyClock::now();
  LossSample sample;
  sample.silent_before = std::chrono::duration<double>(gone_at - agent.last_heartbeat()).count();
  const auto deadline = gone_at + std::chrono::seconds(60);
  while (SteadyClock::now() < deadline) {
    bool listed = false;
    if (!ClusterReachable(api, cluster, &listed) && listed) {
      sample.detected = std::chrono::duration<double>(SteadyClock::now() - gone_at).count();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return sample;
}

void PrintLoss(std::string_view how, const LossSample& sample, const std::string& timeout) {
  if (!sample.detected) {
    fmt::print("loss ({}) detected    not within 60 s\n", how);
    return;
  }
  fmt::print("loss ({}) detected    {:.2f} s after it, {:.2f} s after the last heartbeat "
             "(unreachableTimeout {})\n",
             how, *sample.detected, *sample.detected + sample.silent_before, timeout);
}

int ReadyNodes(const RestApi& api) {
  const integration::HttpAnswer answer = api.Get("/api/v1/clusters");
  if (answer.status != 200 || !answer.body.contains("items")) return -1;
  int ready = 0;
  for (const Json& item : answer.body["items"]) ready += item.value("readyNodes", 0);
  return ready;
}

std::string Micros(double seconds) {
  return std::isnan(seconds) ? "n/a" : fmt::format("{:.0f} µs", seconds * 1e6);
}

int Run(const Flags& flags) {
  // The server: started here, or given.
  std::unique_ptr<integration::TempDir> dir;
  std::unique_ptr<integration::ServerProcess> server;
  std::string grpc_target = flags.grpc;
  std::string http_host;
  int http_port = 0;
  std::string token = flags.token;
  int server_pid = flags.server_pid;
  if (grpc_target.empty()) {
    dir = std::make_unique<integration::TempDir>("tessera-agent-scale");
    std::ofstream(dir->Sub("server.yaml"))
        << "clusters: []\nrateLimit: {ratePerSecond: 0}\nagents:\n"
        << "  heartbeatInterval: " << flags.heartbeat_interval << "\n"
        << "  unreachableTimeout: " << flags.unreachable_timeout << "\n";
    server = std::make_unique<integration::ServerProcess>(
        integration::ServerOptions{.data_dir = dir->Sub("data"),
                                   .log_dir = dir->path(),
                                   .config_path = dir->Sub("server.yaml")});
    if (absl::Status s = server->Start(); !s.ok()) {
      fmt::print(stderr, "agent_scale_bench: {}\n", s.ToString());
      return 1;
    }
    grpc_target = server->grpc_target();
    http_host = server->host();
    http_port = server->http_port();
    token = server->admin_token();
    server_pid = server->pid();
  } else {
    const size_t colon = flags.http.rfind(':');
    if (colon == std::string::npos || token.empty()) {
      fmt::print(stderr, "agent_scale_bench: --grpc needs --http HOST:PORT and --token\n");
      return 2;
    }
    http_host = flags.http.substr(0, colon);
    http_port = std::stoi(flags.http.substr(colon + 1));
  }
  const RestApi api(http_host, http_port, token);
  fmt::print("server: gRPC {}  REST {}:{}  pid {}\n", grpc_target, http_host, http_port,
             server_pid);

  // The agents connect.
  const auto connect_start = SteadyClock::now();
  std::vector<std::unique_ptr<SimAgent>> agents;
  for (int i = 0; i < flags.agents; ++i) {
    agents.push_back(std::make_unique<SimAgent>(i, flags, grpc_target, token));
    std::string error;
    if (!agents.back()->Connect(error)) {
      fmt::print(stderr, "agent_scale_bench: agent {} could not connect: {}\n", i, error);
      return 1;
    }
    agents.back()->Start();
  }
  const int total_nodes = flags.agents * flags.nodes_per_agent;
  const bool all_ready = integration::WaitUntil([&] { return ReadyNodes(api) == total_nodes; },
                                                std::chrono::seconds(300));
  const double connect_seconds =
      std::chrono::duration<double>(SteadyClock::now() - connect_start).count();
  fmt::print("{} agents x {} nodes registered, inventories applied{} in {:.2f} s\n", flags.agents,
             flags.nodes_per_agent, all_ready ? "" : " (NOT all nodes ready)", connect_seconds);

  JobStream jobs(api, flags.jobs_per_second);
  std::this_thread::sleep_for(std::chrono::seconds(flags.warmup));

  // The measured window.
  const ProcSample proc_before = SampleProcess(server_pid);
  const ProcSample self_before = SampleProcess(::getpid());
  const MetricsSample metrics_before = SampleMetrics(api);
  uint64_t sent_before = 0;
  for (const auto& agent : agents) sent_before += agent->node_updates();
  const auto window_start = SteadyClock::now();
  std::this_thread::sleep_for(std::chrono::seconds(flags.seconds));
  const double window = std::chrono::duration<double>(SteadyClock::now() - window_start).count();
  uint64_t sent_after = 0;
  uint64_t late = 0;
  uint64_t binds = 0;
  for (const auto& agent : agents) {
    sent_after += agent->node_updates();
    late += agent->late_ticks();
    binds += agent->binds();
  }
  const ProcSample proc_after = SampleProcess(server_pid);
  const ProcSample self_after = SampleProcess(::getpid());
  const MetricsSample metrics_after = SampleMetrics(api);
  jobs.Stop();
  std::vector<int> broken_agents;
  for (int i = 0; i < flags.agents; ++i) {
    if (agents[i]->broken()) broken_agents.push_back(i);
  }
  const int broken = static_cast<int>(broken_agents.size());

  // Loss detection: agent 0's stream ends; agent 1 (when there is one) goes silent.
  const LossSample ended = MeasureLoss(api, *agents[0], ClusterName(0), /*silence=*/false);
  std::optional<LossSample> silent;
  if (flags.agents > 1) silent = MeasureLoss(api, *agents[1], ClusterName(1), /*silence=*/true);
  for (auto& agent : agents) agent->Stop();
  for (int i : broken_agents) {
    fmt::print(stderr, "agent {}: stream ended: {}\n", i, agents[i]->end_status());
  }

  const double target = flags.rate_hz * total_nodes;
  const double sent_rate = static_cast<double>(sent_after - sent_before) / window;
  const double cpu = (proc_after.cpu_seconds - proc_before.cpu_seconds) / window;
  fmt::print("\n== agents {}  nodes/agent {}  rate {} Hz  window {:.1f} s ==\n", flags.agents,
             flags.nodes_per_agent, flags.rate_hz, window);
  fmt::print("target node updates/s      {:.0f}\n", target);
  fmt::print("sent node updates/s        {:.0f}  (late heartbeat ticks skipped: {})\n", sent_rate,
             late);
  if (metrics_after.present) {
    fmt::print("applied node updates/s     {:.0f}  (tessera_agent_node_updates_total)\n",
               (metrics_after.node_updates - metrics_before.node_updates) / window);
    const double count = metrics_after.heartbeat_count - metrics_before.heartbeat_count;
    fmt::print("heartbeats processed/s     {:.0f}\n", count / window);
    fmt::print("heartbeat processing       p50 {}  p99 {}  p999 {}  mean {}\n",
               Micros(Quantile(metrics_before, metrics_after, 0.5)),
               Micros(Quantile(metrics_before, metrics_after, 0.99)),
               Micros(Quantile(metrics_before, metrics_after, 0.999)),
               Micros(count > 0 ? (metrics_after.heartbeat_sum - metrics_before.heartbeat_sum) /
                                      count
                                : NAN));
  } else {
    fmt::print("applied node updates/s     n/a (the server exposes no agent metrics)\n");
  }
  fmt::print("server CPU                 {:.2f} cores ({:.1f} s over the window)\n", cpu,
             proc_after.cpu_seconds - proc_before.cpu_seconds);
  fmt::print("bench CPU (agents, jobs)   {:.2f} cores\n",
             (self_after.cpu_seconds - self_before.cpu_seconds) / window);
  fmt::print("server RSS                 {:.0f} MiB (peak {:.0f} MiB)\n",
             proc_after.rss_kib / 1024.0, proc_after.hwm_kib / 1024.0);
  fmt::print("jobs submitted / refused   {} / {}; binds received {}\n", jobs.submitted(),
             jobs.refused(), binds);
  fmt::print("streams healthy            {}\n",
             broken == 0 ? "all" : fmt::format("{} of {} broke", broken, flags.agents));
  const std::string timeout = flags.grpc.empty() ? flags.unreachable_timeout : "of the server";
  PrintLoss("stream ended", ended, timeout);
  if (silent) PrintLoss("agent silent", *silent, timeout);
  const bool detected = ended.detected && (!silent || silent->detected);
  return broken == 0 && detected ? 0 : 1;
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) {
  CLI::App app{"agent_scale_bench: simulated agents against a real tessera server"};
  tessera::bench::Flags flags;
  app.add_option("--agents", flags.agents, "simulated agents (clusters)")->check(CLI::PositiveNumber);
  app.add_option("--nodes-per-agent", flags.nodes_per_agent, "nodes of each agent")
      ->check(CLI::PositiveNumber);
  app.add_option("--rate-hz", flags.rate_hz, "heartbeats per agent per second")
      ->check(CLI::PositiveNumber);
  app.add_option("--seconds", flags.seconds, "length of the measured window")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", flags.warmup, "seconds of heartbeats before the window");
  app.add_option("--jobs-per-second", flags.jobs_per_second, "job submissions over REST (0: none)");
  app.add_option("--heartbeat-interval", flags.heartbeat_interval,
                 "the server's agents.heartbeatInterval (a started server)");
  app.add_option("--unreachable-timeout", flags.unreachable_timeout,
                 "the server's agents.unreachableTimeout (a started server)");
  app.add_option("--grpc", flags.grpc, "an existing server's gRPC address, HOST:PORT");
  app.add_option("--http", flags.http, "its REST address, HOST:PORT");
  app.add_option("--token", flags.token, "its admin token");
  app.add_option("--server-pid", flags.server_pid, "its pid, for CPU and RSS");
  CLI11_PARSE(app, argc, argv);
  return tessera::bench::Run(flags);
}
