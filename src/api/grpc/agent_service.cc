#include "api/grpc/agent_service.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "api/grpc/grpc_status.h"
#include "fmt/format.h"

namespace tessera::api {
namespace {

namespace v1 = agent::v1;
using Stream = grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>;

}  // namespace

// One agent session: the writer thread and the status that ends it.
class AgentService::Session final : public server::AgentChannel {
 public:
  explicit Session(Stream* stream) : stream_(stream), writer_([this] { WriterMain(); }) {}
  ~Session() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    writer_.join();
  }

  void Send(v1::ServerMessage message) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!closed_.ok() || stopping_) return;
      outbox_.push_back(std::move(message));
    }
    wake_.notify_all();
  }

  void Close(absl::Status status) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_.ok()) closed_ = std::move(status);
  }

  // The status Close gave; OK while the session is open.
  absl::Status closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

 private:
  void WriterMain() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      wake_.wait(lock, [this] { return stopping_ || !outbox_.empty(); });
      if (outbox_.empty()) return;  // stopping, everything sent
      v1::ServerMessage message = std::move(outbox_.front());
      outbox_.pop_front();
      lock.unlock();
      const bool written = stream_->Write(message);
      lock.lock();
      if (!written) {
        outbox_.clear();
        if (stopping_) return;
      }
    }
  }

  Stream* const stream_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<v1::ServerMessage> outbox_;
  absl::Status closed_;
  bool stopping_ = false;
  std::thread writer_;
};

AgentService::AgentService(Options options) : options_(options) {
  if (options_.metrics == nullptr) return;
  heartbeat_seconds_ = &prometheus::BuildHistogram()
                            .Name("tessera_agent_heartbeat_seconds")
                            .Help("Time to apply one agent heartbeat (every node usage in it)")
                            .Register(*options_.metrics)
                            .Add({}, prometheus::Histogram::BucketBoundaries{
                                         0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
                                         0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1});
  node_updates_ = &prometheus::BuildCounter()
                       .Name("tessera_agent_node_updates_total")
                       .Help("Node usages applied from agent heartbeats")
                       .Register(*options_.metrics)
                       .Add({});
}

void AgentService::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  for (grpc::ServerContext* context : open_) context->TryCancel();
}

bool AgentService::Open(grpc::ServerContext* context) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return false;
  open_.insert(context);
  return true;
}

void AgentService::Closed(grpc::ServerContext* context) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.erase(context);
}

absl::Status AgentService::OnHeartbeat(server::RemoteCluster& cluster, uint64_t epoch,
                                       const v1::Heartbeat& heartbeat) {
  if (heartbeat_seconds_ == nullptr) return cluster.OnHeartbeat(epoch, heartbeat);
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = cluster.OnHeartbeat(epoch, heartbeat);
  heartbeat_seconds_->Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (status.ok()) node_updates_->Increment(heartbeat.node_id_size());
  return status;
}

absl::Status AgentService::Authorize(const grpc::ServerContext& context) const {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  if (found == metadata.end()) {
    return absl::UnauthenticatedError("missing \"authorization\" metadata: want \"Bearer <token>\"");
  }
  absl::StatusOr<std::string_view> token =
      BearerToken(std::string_view(found->second.data(), found->second.size()));
  if (!token.ok()) return token.status();
  absl::StatusOr<server::Caller> caller = options_.auth->Authenticate(*token);
  if (!caller.ok()) return caller.status();
  if (!caller->admin) {
    return absl::PermissionDeniedError("agents must present an admin token");
  }
  return absl::OkStatus();
}

grpc::Status AgentService::Connect(grpc::ServerContext* context, Stream* stream) {
  if (absl::Status s = Authorize(*context); !s.ok()) return ToGrpcStatus(s, *context);
  if (!Open(context)) return grpc::Status(grpc::UNAVAILABLE, "the server is stopping");
  const absl::Cleanup closed = [this, context] { Closed(context); };
  v1::AgentMessage message;
  if (!stream->Read(&message)) return grpc::Status(grpc::CANCELLED, "the agent went away");
  if (!message.has_register_()) {
    return ToGrpcStatus(
        absl::InvalidArgumentError("register: the first message of a session must be register"),
        *context);
  }
  Session session(stream);
  absl::StatusOr<std::pair<server::RemoteCluster*, uint64_t>> attached =
      options_.clusters->Attach(&session, message.register_());
  if (!attached.ok()) return ToGrpcStatus(attached.status(), *context);
  auto [cluster, epoch] = *attached;
  v1::ServerMessage registered;
  registered.mutable_registered()->set_epoch(epoch);
  registered.mutable_registered()->set_heartbeat_interval_ms(
      options_.clusters->heartbeat_interval().count());
  session.Send(std::move(registered));

  absl::Status status;
  while (status.ok() && session.closed().ok() && stream->Read(&message)) {
    if (status = session.closed(); !status.ok()) break;  // fenced while waiting to read
    switch (message.body_case()) {
      case v1::AgentMessage::kInventory:
        status = cluster->OnInventory(epoch, message.inventory());
        break;
      case v1::AgentMessage::kHeartbeat:
        status = OnHeartbeat(*cluster, epoch, message.heartbeat());
        break;
      case v1::AgentMessage::kTask:
        status = cluster->OnTaskUpdate(epoch, message.task());
        break;
      case v1::AgentMessage::kResyncReport:
        status = cluster->OnResyncReport(epoch, message.resync_report());
        break;
      case v1::AgentMessage::kLogChunk:
        status = cluster->OnLogChunk(epoch, message.log_chunk());
        break;
      case v1::AgentMessage::kRegister:
        status = absl::InvalidArgumentError("register: the session is already registered");
        break;
      default:
        status = absl::InvalidArgumentError("message: empty or of an unknown kind");
        break;
    }
  }
  cluster->Detach(epoch);
  if (status.ok()) status = session.closed();
  if (status.ok()) return grpc::Status(grpc::CANCELLED, "the agent closed the session");
  return ToGrpcStatus(status, *context);
}

}  // namespace tessera::api
