#include "agent/runtime/agent_runner.h"

#include <deque>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "agent/protocol/agent_protocol.h"
#include "agent/runtime/connection_hint.h"
#include "fmt/format.h"
#include "grpcpp/grpcpp.h"
#include "tessera/agent/v1/agent.grpc.pb.h"

namespace tessera::agent {
namespace {

constexpr Duration kFirstBackoff{500};
constexpr Duration kMaxBackoff{10000};
// While the server cannot be reached, the channel tries to connect at least this often.
constexpr Duration kMaxConnectInterval{1000};
// How often a wait for the server looks whether Stop was called.
constexpr Duration kStopCheck{100};
constexpr char kVersion[] = "tessera-agent/1";
// HTTP/2 pings on an idle connection, so that a peer that vanished without closing it is noticed.
constexpr Duration kKeepalive{20000};
constexpr Duration kKeepaliveTimeout{10000};
// With several servers (HA replicas): a paused leader, whose kernel still holds the connection
// open, is left within about 4 s.
constexpr Duration kReplicaKeepalive{2000};
constexpr Duration kReplicaKeepaliveTimeout{2000};
// Nodes per inventory message: about 0.5 MB, well under gRPC's 4 MiB message limit.
constexpr int kNodesPerMessage = 2000;
// Log requests a session queues for its log reader; more at once are answered RESOURCE_EXHAUSTED.
constexpr size_t kMaxQueuedLogRequests = 16;

using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>;

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// Refusals for good: a bad token, bad input, or another agent's newer session of the cluster
// (FAILED_PRECONDITION: this one is fenced; two agents must not fight over one cluster).
bool Permanent(absl::StatusCode code) {
  return code == absl::StatusCode::kUnauthenticated ||
         code == absl::StatusCode::kPermissionDenied ||
         code == absl::StatusCode::kInvalidArgument ||
         code == absl::StatusCode::kFailedPrecondition;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> Credentials(const std::string& ca) {
  if (ca.empty()) return grpc::InsecureChannelCredentials();
  absl::StatusOr<std::string> pem = ReadTlsCa(ca);
  if (!pem.ok()) return pem.status();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = *std::move(pem);
  return grpc::SslCredentials(ssl);
}

// `message` (an inventory) as parts of at most kNodesPerMessage nodes: a full inventory's parts
// carry `more` on all but the last; a delta's parts are deltas themselves.
std::vector<v1::AgentMessage> SplitInventory(const v1::AgentMessage& message) {
  const v1::Inventory& whole = message.inventory();
  std::vector<v1::AgentMessage> parts;
  for (int begin = 0; begin == 0 || begin < whole.nodes_size(); begin += kNodesPerMessage) {
    v1::AgentMessage part;
    v1::Inventory* inventory = part.mutable_inventory();
    inventory->set_epoch(whole.epoch());
    inventory->set_full(whole.full());
    const int end = std::min(whole.nodes_size(), begin + kNodesPerMessage);
    for (int i = begin; i < end; ++i) *inventory->add_nodes() = whole.nodes(i);
    if (begin == 0) *inventory->mutable_removed() = whole.removed();
    parts.push_back(std::move(part));
  }
  if (whole.full()) {
    for (size_t i = 0; i + 1 < parts.size(); ++i) parts[i].mutable_inventory()->set_more(true);
  }
  return parts;
}

}  // namespace

// One connected session: the stream, its epoch, and what the server has been told.
class AgentRunner::Session {
 public:
  Session(Stream* stream, Cluster* backend, uint64_t epoch)
      : stream_(stream), backend_(backend), epoch_(epoch) {}
  ~Session() { StopLogs(); }

  uint64_t epoch() const { return epoch_; }

  bool Write(const v1::AgentMessage& message) {
    std::lock_guard<std::mutex> lock(write_mu_);
    return stream_->Write(message);
  }

  // An inventory, in parts small enough for one message each.
  bool WriteInventory(const v1::AgentMessage& message) {
    for (const v1::AgentMessage& part : SplitInventory(message)) {
      if (!Write(part)) return false;
    }
    return true;
  }

  // The backend's inventory as a message: full, or what changed since the last one (nullopt
  // when nothing did).
  std::optional<v1::AgentMessage> InventoryMessage(bool full) {
    v1::AgentMessage message;
    v1::Inventory* inventory = message.mutable_inventory();
    inventory->set_epoch(epoch_);
    inventory->set_full(full);
    std::set<std::string> present;
    for (const Node& node : backend_->Inventory()) {
      present.insert(node.name);
      auto [it, added] = ids_.try_emplace(node.name, next_id_);
      if (added) ++next_id_;
      v1::Node proto = NodeToProto(node, it->second);
      std::string serialized = proto.SerializeAsString();
      std::string& last = sent_[node.name];
      if (full || last != serialized) *inventory->add_nodes() = std::move(proto);
      last = std::move(serialized);
    }
    for (auto it = sent_.begin(); it != sent_.end();) {
      if (present.contains(it->first)) {
        ++it;
        continue;
      }
      if (!full) inventory->add_removed(ids_.at(it->first));
      ids_.erase(it->first);
      it = sent_.erase(it);
    }
    if (!full && inventory->nodes_size() == 0 && inventory->removed_size() == 0) {
      return std::nullopt;
    }
    return message;
  }

  v1::AgentMessage HeartbeatMessage(TimePoint now) {
    v1::AgentMessage message;
    v1::Heartbeat* heartbeat = message.mutable_heartbeat();
    heartbeat->set_epoch(epoch_);
    heartbeat->set_sequence(++sequence_);
    heartbeat->set_time_ms(ToMillis(now));
    std::vector<NodeUsage> usage = backend_->Usage();
    const auto all = [&](auto has) { return std::all_of(usage.begin(), usage.end(), has); };
    const bool cpu = all([](const NodeUsage& u) { return u.cpu.has_value(); });
    const bool memory = all([](const NodeUsage& u) { return u.memory.has_value(); });
    const bool gpu = all([](const NodeUsage& u) { return !u.gpu_utilization.empty(); });
    const bool power = all([](const NodeUsage& u) { return u.power_watts.has_value(); });
    for (const NodeUsage& u : usage) {
      auto id = ids_.find(u.node);
      if (id == ids_.end()) continue;
      heartbeat->add_node_id(id->second);
      if (cpu) heartbeat->add_cpu(*u.cpu);
      if (memory) heartbeat->add_memory(*u.memory);
      if (gpu) {
        double sum = 0;
        for (double v : u.gpu_utilization) sum += v;
        heartbeat->add_gpu_utilization(static_cast<float>(sum / u.gpu_utilization.size()));
      }
      if (power) heartbeat->add_power_watts(static_cast<float>(*u.power_watts));
    }
    return message;
  }

  // Queues a LogRequest for the log reader, a thread of its own started on the first one: a
  // backend's ReadLog may block (Slurm and Kubernetes read over the network), the stream's
  // reader must not. Called from the session's thread only.
  void RequestLog(v1::LogRequest request) {
    {
      std::lock_guard<std::mutex> lock(logs_mu_);
      if (log_requests_.size() < kMaxQueuedLogRequests) {
        log_requests_.push_back(std::move(request));
        if (!log_reader_.joinable()) log_reader_ = std::thread([this] { LogReaderMain(); });
        logs_wake_.notify_one();
        return;
      }
    }
    v1::AgentMessage message;
    *message.mutable_log_chunk() =
        LogChunkToProto(absl::ResourceExhaustedError(fmt::format(
                            "the agent already has {} log requests queued", kMaxQueuedLogRequests)),
                        request.request_id(), epoch_);
    Write(message);
  }

  // Drops the queued log requests and waits for the one being read (its answer, if written,
  // goes to the stream before it is finished). Called from the session's thread only.
  void StopLogs() {
    {
      std::lock_guard<std::mutex> lock(logs_mu_);
      logs_stopping_ = true;
      log_requests_.clear();
    }
    logs_wake_.notify_all();
    if (log_reader_.joinable()) log_reader_.join();
  }

 private:
  void LogReaderMain() {
    std::unique_lock<std::mutex> lock(logs_mu_);
    while (true) {
      logs_wake_.wait(lock, [this] { return logs_stopping_ || !log_requests_.empty(); });
      if (logs_stopping_) return;
      const v1::LogRequest request = std::move(log_requests_.front());
      log_requests_.pop_front();
      lock.unlock();
      const absl::Status valid = CheckLogRequest(request);
      const absl::StatusOr<LogChunk> result =
          valid.ok()
              ? backend_->ReadLog(request.launch_id(), LogStreamFromProto(request.stream()),
                                  request.offset(), std::min(request.limit(), kMaxLogChunkBytes))
              : absl::StatusOr<LogChunk>(valid);
      v1::AgentMessage message;
      *message.mutable_log_chunk() = LogChunkToProto(result, request.request_id(), epoch_);
      Write(message);
      lock.lock();
    }
  }

  Stream* const stream_;
  Cluster* const backend_;
  const uint64_t epoch_;
  std::mutex write_mu_;
  // Inventory state (the heartbeat thread, and the session thread before it starts).
  std::map<std::string, uint32_t, std::less<>> ids_;
  std::map<std::string, std::string, std::less<>> sent_;  // node → its last sent proto
  uint32_t next_id_ = 0;
  uint64_t sequence_ = 0;
  // The log reader's queue.
  std::mutex logs_mu_;
  std::condition_variable logs_wake_;
  std::deque<v1::LogRequest> log_requests_;
  bool logs_stopping_ = false;
  std::thread log_reader_;
};

absl::StatusOr<std::string> ReadTlsCa(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream pem;
  if (!(pem << file.rdbuf())) {
    return absl::InvalidArgumentError(fmt::format("--tls-ca: cannot read \"{}\"", path));
  }
  if (pem.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return absl::InvalidArgumentError(fmt::format(
        "--tls-ca: \"{}\" holds no PEM certificate (give the CA that signed the server's "
        "certificate)",
        path));
  }
  return pem.str();
}

AgentRunner::AgentRunner(AgentOptions options) : options_(std::move(options)) {}

AgentRunner::~AgentRunner() { Stop(); }

void AgentRunner::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
}

bool AgentRunner::Sleep(Duration delay) {
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait_for(lock, delay, [this] { return stopping_; });
  return !stopping_;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> AgentRunner::NewChannel(
    const std::string& server) const {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      Credentials(options_.tls_ca_file);
  if (!credentials.ok()) return credentials.status();
  grpc::ChannelArguments arguments;
  const bool replicas = options_.servers.size() > 1;
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, (replicas ? kReplicaKeepalive : kKeepalive).count());
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                   (replicas ? kReplicaKeepaliveTimeout : kKeepaliveTimeout).count());
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kFirstBackoff.count());
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxConnectInterval.count());
  // gRPC waits at least this long (20 s by default) before it connects again after a failed
  // attempt: a server that comes back (or a replica elected) would be joined that late.
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMaxConnectInterval.count());
  // Replicas: a channel of its own connections, so that a fresh one (Run) starts afresh rather
  // than inheriting the back-off of a shared connection to a closed port.
  if (replicas) arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(server, *credentials, arguments);
}

bool AgentRunner::WaitToReconnect(grpc::Channel& channel, Duration backoff) {
  if (!Sleep(kFirstBackoff)) return false;
  const auto deadline = std::chrono::steady_clock::now() + (backoff - kFirstBackoff);
  if (channel.GetState(/*try_to_connect=*/true) == GRPC_CHANNEL_READY) {
    return Sleep(std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now()));
  }
  while (std::chrono::steady_clock::now() < deadline) {
    const auto slice = std::min(deadline, std::chrono::steady_clock::now() + kStopCheck);
    const bool connected = channel.WaitForConnected(std::chrono::system_clock::now() +
                                                    (slice - std::chrono::steady_clock::now()));
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    if (connected) return true;
  }
  return true;
}

absl::Status AgentRunner::Run() {
  if (backend_ == nullptr) return absl::FailedPreconditionError("the agent has no backend");
  if (options_.servers.empty()) return absl::InvalidArgumentError("servers: at least one");
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (const std::string& server : options_.servers) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = NewChannel(server);
    if (!channel.ok()) return channel.status();
    channels.push_back(*std::move(channel));
  }
  size_t current = 0;
  size_t failed_in_round = 0;  // servers tried since the last session that registered
  Duration backoff = kFirstBackoff;
  while (true) {
    if (channels.size() > 1 && channels[current]->GetState(false) != GRPC_CHANNEL_READY) {
      // A replica that refused the agent may have been elected since: connect afresh now
      // instead of after gRPC's back-off.
      absl::StatusOr<std::shared_ptr<grpc::Channel>> fresh = NewChannel(options_.servers[current]);
      if (!fresh.ok()) return fresh.status();
      channels[current] = *std::move(fresh);
    }
    const TimePoint start = options_.clock->Now();
    const uint64_t epoch_before = previous_epoch_;
    absl::Status status = RunSession(channels[current], options_.servers[current]);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return absl::OkStatus();
    }
    if (Permanent(status.code())) return status;
    if (options_.clock->Now() - start > kMaxBackoff) backoff = kFirstBackoff;
    if (channels.size() > 1) {
      failed_in_round = previous_epoch_ != epoch_before ? 1 : failed_in_round + 1;
      const std::string& ended = options_.servers[current];
      current = (current + 1) % channels.size();
      if (failed_in_round < channels.size()) continue;  // the next replica at once
      failed_in_round = 0;
      fmt::print(stderr,
                 "tessera agent: no server accepted the agent (last, {}: {}{}); trying them "
                 "again in {} ms\n",
                 ended, status.ToString(), ConnectionHint(status, !options_.tls_ca_file.empty()),
                 std::min(backoff, kMaxConnectInterval).count());
      if (!Sleep(std::min(backoff, kMaxConnectInterval))) return absl::OkStatus();
      backoff = std::min(kMaxBackoff, backoff * 2);
      continue;
    }
    fmt::print(stderr,
               "tessera agent: session ended ({}{}); reconnecting in {} ms, or once the server "
               "can be reached again\n",
               status.ToString(), ConnectionHint(status, !options_.tls_ca_file.empty()),
               backoff.count());
    if (!WaitToReconnect(*channels[current], backoff)) return absl::OkStatus();
    backoff = std::min(kMaxBackoff, backoff * 2);
  }
}

absl::Status AgentRunner::RunSession(const std::shared_ptr<grpc::Channel>& channel,
                                     const std::string& server) {
  std::unique_ptr<v1::AgentService::Stub> stub = v1::AgentService::NewStub(channel);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + options_.token);
  std::unique_ptr<Stream> stream = stub->Connect(&context);

  v1::AgentMessage hello;
  v1::Register* request = hello.mutable_register_();
  request->set_cluster(options_.cluster);
  request->set_backend(options_.backend);
  for (const auto& [key, value] : options_.labels) (*request->mutable_labels())[key] = value;
  request->set_agent_version(kVersion);
  request->set_previous_epoch(previous_epoch_);
  v1::ServerMessage reply;
  if (!stream->Write(hello) || !stream->Read(&reply) || !reply.has_registered()) {
    stream->WritesDone();
    return FromGrpc(stream->Finish());
  }
  const uint64_t epoch = reply.registered().epoch();
  const Duration interval(std::max<int64_t>(10, reply.registered().heartbeat_interval_ms()));
  previous_epoch_ = epoch;
  epoch_ = epoch;
  fmt::print(stderr, "tessera agent: cluster {} registered with {} (epoch {})\n", options_.cluster,
             server, epoch);

  Session session(stream.get(), backend_, epoch);
  bool writable = session.WriteInventory(*session.InventoryMessage(/*full=*/true));
  {
    std::lock_guard<std::mutex> lock(mu_);
    session_ = &session;
  }
  std::atomic<bool> done{false};
  std::thread heartbeat([&] {
    while (!done.load() && Sleep(interval)) {
      if (done.load()) break;
      if (std::optional<v1::AgentMessage> delta = session.InventoryMessage(false)) {
        if (!session.WriteInventory(*delta)) break;
      }
      if (!session.Write(session.HeartbeatMessage(options_.clock->Now()))) break;
    }
  });
  while (writable && stream->Read(&reply)) {
    if (reply.has_resync()) {
      if (reply.resync().epoch() != epoch) continue;
      std::vector<KnownLaunch> known;
      std::set<std::string> unstarted;
      for (const v1::Bind& bind : reply.resync().launches()) {
        absl::StatusOr<TaskLaunchSpec> spec = LaunchFromBind(bind);
        if (!spec.ok()) continue;
        KnownLaunch launch{.spec = *std::move(spec)};
        if (bind.start_time_ms() > 0) {
          launch.start_time = FromMillis(bind.start_time_ms());
        } else {
          unstarted.insert(bind.launch_id());
        }
        known.push_back(std::move(launch));
      }
      v1::AgentMessage answer;
      answer.mutable_resync_report()->set_epoch(epoch);
      for (const std::string& id : backend_->Recover(known)) {
        answer.mutable_resync_report()->add_running(id);
      }
      writable = session.Write(answer);
      for (const std::string& id : answer.resync_report().running()) {
        if (!unstarted.contains(id)) continue;
        v1::AgentMessage started;
        *started.mutable_task() = StartedUpdate(id, options_.clock->Now(), epoch);
        writable = writable && session.Write(started);
      }
    } else if (reply.has_bind()) {
      if (reply.bind().epoch() != epoch) continue;  // a lease of another session
      absl::StatusOr<TaskLaunchSpec> spec = LaunchFromBind(reply.bind());
      if (!spec.ok()) {
        OnTaskEnded(TaskEnd{.launch_id = reply.bind().launch_id(),
                            .phase = TaskPhase::kFailed,
                            .reason = "StartFailed",
                            .message = std::string(spec.status().message()),
                            .time = options_.clock->Now()});
        continue;
      }
      backend_->Launch(*spec);
    } else if (reply.has_cancel()) {
      if (reply.cancel().epoch() != epoch) continue;
      backend_->Cancel(reply.cancel().launch_id(), Duration(reply.cancel().grace_ms()));
    } else if (reply.has_log_request()) {
      if (reply.log_request().epoch() != epoch) continue;
      session.RequestLog(reply.log_request());
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    session_ = nullptr;
  }
  epoch_ = 0;
  done = true;
  wake_.notify_all();
  // A write failed while the server may still hold the call open: end it. (When the read
  // ended, the server has finished the call, and its status must reach Finish unchanged.)
  if (!writable) context.TryCancel();
  session.StopLogs();
  heartbeat.join();
  return FromGrpc(stream->Finish());
}

void AgentRunner::OnTaskStarted(std::string_view launch_id, TimePoint time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ == nullptr) return;
  v1::AgentMessage message;
  *message.mutable_task() = StartedUpdate(launch_id, time, session_->epoch());
  session_->Write(message);
}

void AgentRunner::OnTaskEnded(const TaskEnd& end) {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ == nullptr) return;
  v1::AgentMessage message;
  *message.mutable_task() = EndedUpdate(end, session_->epoch());
  session_->Write(message);
}

}  // namespace tessera::agent
