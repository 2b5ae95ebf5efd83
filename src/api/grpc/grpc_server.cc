#include "api/grpc/grpc_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/grpc/grpc_status.h"
#include "api/grpc/proto_convert.h"
#include "api/grpc/tls_key_pair.h"
#include "core/duration.h"
#include "fmt/format.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_context.h"
#include "spec/jobspec.h"
#include "spec/queue_document.h"
#include "tessera/v1/jobs.grpc.pb.h"

namespace tessera::api {
namespace {

namespace v1 = ::tessera::v1;

// Largest job document accepted, as the REST API's body limit.
constexpr size_t kMaxDocumentBytes = size_t{1} << 20;
// How often an open watch looks at its call's cancellation and at Stop.
constexpr std::chrono::milliseconds kWatchPoll{100};
// How long Stop lets unary calls in flight finish before cancelling them.
constexpr std::chrono::seconds kStopGrace{5};

// The contents of a PEM file; InvalidArgument naming `field` when it cannot be read.
absl::StatusOr<std::string> ReadPem(const std::string& path, std::string_view field) {
  std::ifstream file(path);
  std::ostringstream text;
  if (path.empty() || !(text << file.rdbuf())) {
    return absl::InvalidArgumentError(fmt::format("{}: cannot read \"{}\"", field, path));
  }
  return text.str();
}

absl::Status RequireJobId(const std::string& id) {
  return id.empty() ? spec::FieldError("job_id", "required") : absl::OkStatus();
}

absl::Status CheckDocumentSize(const std::string& document) {
  if (document.size() <= kMaxDocumentBytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "document is ", document.size(), " bytes; at most ", kMaxDocumentBytes, " are accepted"));
}

// One item of a SubmitJobs request as a job document, or the decoder's error for it.
absl::StatusOr<spec::JobDocument> ParseItem(const v1::SubmitJobRequest& item) {
  if (absl::Status s = CheckDocumentSize(item.document()); !s.ok()) return s;
  absl::StatusOr<spec::DocumentFormat> format = FromProto(item.format());
  if (!format.ok()) return format.status();
  return spec::ParseJobDocument(item.document(), {.format = *format});
}

}  // namespace

class GrpcServer::Service final : public v1::JobService::Service {
 public:
  explicit Service(const Options& options) : options_(options) {}

  // Makes open watches return and new ones refuse to start.
  void BeginStop() { stopping_.store(true); }

  grpc::Status SubmitJob(grpc::ServerContext* context, const v1::SubmitJobRequest* request,
                         v1::SubmitJobResponse* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (request->document().size() > kMaxDocumentBytes) {
        return absl::ResourceExhaustedError(
            absl::StrCat("job document is ", request->document().size(), " bytes; at most ",
                         kMaxDocumentBytes, " are accepted"));
      }
      absl::StatusOr<spec::DocumentFormat> format = FromProto(request->format());
      if (!format.ok()) return format.status();
      absl::StatusOr<spec::JobDocument> document =
          spec::ParseJobDocument(request->document(), {.format = *format});
      if (!document.ok()) return document.status();
      absl::StatusOr<server::SubmitResult> result =
          options_.service->Submit(caller, *std::move(document));
      if (!result.ok()) return result.status();
      *response->mutable_job() = ToProto(result->job);
      response->set_created(result->created);
      return absl::OkStatus();
    });
  }

  grpc::Status SubmitJobs(grpc::ServerContext* context, const v1::SubmitJobsRequest* request,
                          v1::SubmitJobsResponse* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (absl::Status s = server::CheckSubmitBatchSize(request->items_size()); !s.ok()) {
        return s;
      }
      std::vector<absl::StatusOr<spec::JobDocument>> items;
      std::vector<spec::JobDocument> documents;
      for (const v1::SubmitJobRequest& item : request->items()) {
        items.push_back(ParseItem(item));
        if (items.back().ok()) documents.push_back(*items.back());
      }
      absl::StatusOr<server::SubmitBatchResult> submitted =
          documents.empty() ? server::SubmitBatchResult{}
                            : options_.service->SubmitBatch(caller, std::move(documents));
      if (!submitted.ok()) return submitted.status();
      size_t next = 0;  // the next result of `submitted`
      for (size_t i = 0; i < items.size(); ++i) {
        const absl::StatusOr<server::SubmitResult> result =
            items[i].ok() ? std::move((*submitted)[next++])
                          : absl::StatusOr<server::SubmitResult>(items[i].status());
        v1::SubmitJobsItem* answer = response->add_items();
        if (result.ok()) {
          *answer->mutable_submitted()->mutable_job() = ToProto(result->job);
          answer->mutable_submitted()->set_created(result->created);
          continue;
        }
        const absl::Status error = spec::ItemError("items", i, result.status());
        answer->mutable_error()->set_code(static_cast<int32_t>(error.code()));
        answer->mutable_error()->set_message(std::string(error.message()));
        answer->mutable_error()->set_field(spec::ErrorField(error).value_or(""));
      }
      return absl::OkStatus();
    });
  }

  grpc::Status GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                      v1::Job* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (absl::Status status = RequireJobId(request->job_id()); !status.ok()) return status;
      absl::StatusOr<server::JobView> job = options_.service->Get(caller, request->job_id());
      if (!job.ok()) return job.status();
      *response = ToProto(*job);
      return absl::OkStatus();
    });
  }

  grpc::Status ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      absl::StatusOr<server::ListJobsRequest> list = FromProto(*request);
      if (!list.ok()) return list.status();
      absl::StatusOr<server::ListJobsResult> result = options_.service->List(caller, *list);
      if (!result.ok()) return result.status();
      for (const server::JobView& job : result->jobs) *response->add_jobs() = ToProto(job);
      response->set_next_page_token(result->next_page_token);
      response->set_remaining_item_count(result->remaining);
      return absl::OkStatus();
    });
  }

  grpc::Status CancelJob(grpc::ServerContext* context, const v1::CancelJobRequest* request,
                         v1::Job* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (absl::Status status = RequireJobId(request->job_id()); !status.ok()) return status;
      absl::StatusOr<server::JobView> job = options_.service->Cancel(caller, request->job_id());
      if (!job.ok()) return job.status();
      *response = ToProto(*job);
      return absl::OkStatus();
    });
  }

  grpc::Status ListJobEvents(grpc::ServerContext* context, const v1::ListJobEventsRequest* request,
                             v1::ListJobEventsResponse* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (absl::Status status = RequireJobId(request->job_id()); !status.ok()) return status;
      absl::StatusOr<std::vector<server::JobEvent>> events =
          options_.service->Events(caller, request->job_id());
      if (!events.ok()) return events.status();
      for (const server::JobEvent& event : *events) *response->add_events() = ToProto(event);
      return absl::OkStatus();
    });
  }

  grpc::Status ExplainJob(grpc::ServerContext* context, const v1::ExplainJobRequest* request,
                          v1::Explanation* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (absl::Status status = RequireJobId(request->job_id()); !status.ok()) return status;
      absl::StatusOr<server::JobExplanation> explanation =
          options_.service->Explain(caller, request->job_id());
      if (!explanation.ok()) return explanation.status();
      *response = ToProto(*explanation);
      return absl::OkStatus();
    });
  }

  grpc::Status GetJobLogs(grpc::ServerContext* context, const v1::GetJobLogsRequest* request,
                          v1::LogChunk* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (absl::Status status = RequireJobId(request->job_id()); !status.ok()) return status;
      absl::StatusOr<server::LogRequest> logs = FromProto(*request);
      if (!logs.ok()) return logs.status();
      absl::StatusOr<LogChunk> chunk =
          options_.service->Logs(caller, request->job_id(), *logs);
      if (!chunk.ok()) return chunk.status();
      *response = ToProto(*chunk);
      return absl::OkStatus();
    });
  }

  grpc::Status WatchJobEvents(grpc::ServerContext* context,
                              const v1::WatchJobEventsRequest* request,
                              grpc::ServerWriter<v1::JobEvent>* writer) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (stopping_.load()) return StoppingError();
      absl::StatusOr<std::unique_ptr<server::EventStream>> stream =
          options_.service->Watch(caller, FromProto(*request));
      if (!stream.ok()) return stream.status();
      // The watch is registered: tell the client, so that it may rely on seeing every event
      // from here on.
      writer->SendInitialMetadata();
      return Pump(*context, **stream, *writer);
    });
  }

  grpc::Status ListQueues(grpc::ServerContext* context, const v1::ListQueuesRequest*,
                          v1::ListQueuesResponse* response) override {
    return Serve(*context, [&](const server::Caller&) {
      for (const server::QueueView& queue : options_.service->Queues()) {
        *response->add_queues() = ToProto(queue);
      }
      return absl::OkStatus();
    });
  }

  grpc::Status ApplyQueues(grpc::ServerContext* context, const v1::ApplyQueuesRequest* request,
                           v1::ListQueuesResponse* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (absl::Status s = CheckDocumentSize(request->document()); !s.ok()) return s;
      absl::StatusOr<std::vector<QueueSpec>> tree = spec::ParseQueueDocument(request->document());
      if (!tree.ok()) return tree.status();
      absl::StatusOr<std::vector<server::QueueView>> queues =
          options_.service->ApplyQueues(caller, *std::move(tree));
      if (!queues.ok()) return queues.status();
      for (const server::QueueView& queue : *queues) *response->add_queues() = ToProto(queue);
      return absl::OkStatus();
    });
  }

  grpc::Status ApplyQueue(grpc::ServerContext* context, const v1::ApplyQueueRequest* request,
                          v1::Queue* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (absl::Status s = CheckDocumentSize(request->document()); !s.ok()) return s;
      absl::StatusOr<QueueSpec> queue =
          spec::ParseQueueObject(request->document(), request->name());
      if (!queue.ok()) return queue.status();
      absl::StatusOr<server::QueueView> view =
          options_.service->ApplyQueue(caller, *std::move(queue));
      if (!view.ok()) return view.status();
      *response = ToProto(*view);
      return absl::OkStatus();
    });
  }

  grpc::Status DeleteQueue(grpc::ServerContext* context, const v1::DeleteQueueRequest* request,
                           v1::ListQueuesResponse* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (request->name().empty()) return spec::FieldError("name", "required");
      if (absl::Status s = options_.service->DeleteQueue(caller, request->name()); !s.ok()) {
        return s;
      }
      for (const server::QueueView& queue : options_.service->Queues()) {
        *response->add_queues() = ToProto(queue);
      }
      return absl::OkStatus();
    });
  }

  grpc::Status ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest*,
                         v1::ListNodesResponse* response) override {
    return Serve(*context, [&](const server::Caller&) {
      for (const server::NodeView& node : options_.service->Nodes()) {
        *response->add_nodes() = ToProto(node);
      }
      return absl::OkStatus();
    });
  }

  grpc::Status CordonNode(grpc::ServerContext* context, const v1::ChangeNodeRequest* request,
                          v1::Node* response) override {
    return ChangeNode(*context, server::NodeAction::kCordon, *request, *response);
  }
  grpc::Status UncordonNode(grpc::ServerContext* context, const v1::ChangeNodeRequest* request,
                            v1::Node* response) override {
    return ChangeNode(*context, server::NodeAction::kUncordon, *request, *response);
  }
  grpc::Status DrainNode(grpc::ServerContext* context, const v1::ChangeNodeRequest* request,
                         v1::Node* response) override {
    return ChangeNode(*context, server::NodeAction::kDrain, *request, *response);
  }

  grpc::Status ListClusters(grpc::ServerContext* context, const v1::ListClustersRequest*,
                            v1::ListClustersResponse* response) override {
    return Serve(*context, [&](const server::Caller&) {
      for (const server::ClusterView& cluster : options_.service->Clusters()) {
        *response->add_clusters() = ToProto(cluster);
      }
      return absl::OkStatus();
    });
  }

  grpc::Status DeleteCluster(grpc::ServerContext* context,
                             const v1::DeleteClusterRequest* request,
                             v1::ListClustersResponse* response) override {
    return Serve(*context, [&](const server::Caller& caller) -> absl::Status {
      if (request->name().empty()) return spec::FieldError("name", "required");
      if (absl::Status s = options_.service->DeleteCluster(caller, request->name()); !s.ok()) {
        return s;
      }
      for (const server::ClusterView& cluster : options_.service->Clusters()) {
        *response->add_clusters() = ToProto(cluster);
      }
      return absl::OkStatus();
    });
  }

 private:
  grpc::Status ChangeNode(grpc::ServerContext& context, server::NodeAction action,
                          const v1::ChangeNodeRequest& request, v1::Node& response) {
    return Serve(context, [&](const server::Caller& caller) -> absl::Status {
      if (request.cluster().empty()) return spec::FieldError("cluster", "required");
      if (request.node().empty()) return spec::FieldError("node", "required");
      server::NodeChange change{.cluster = request.cluster(),
                                .node = request.node(),
                                .action = action,
                                .reason = request.reason()};
      if (!request.grace_period().empty()) {
        absl::StatusOr<Duration> grace = ParseDuration(request.grace_period(), "grace_period");
        if (!grace.ok()) return spec::WithField(grace.status(), "grace_period");
        change.grace = *grace;
      }
      absl::StatusOr<server::NodeView> node = options_.service->ChangeNode(caller, change);
      if (!node.ok()) {
        // The service names the REST field; the gRPC message's is grace_period.
        if (spec::ErrorField(node.status()) == "gracePeriod") {
          return spec::WithField(node.status(), "grace_period");
        }
        return node.status();
      }
      response = ToProto(*node);
      return absl::OkStatus();
    });
  }

  static absl::Status StoppingError() {
    return absl::UnavailableError("the server is stopping; reconnect");
  }

  // Authenticates and admits the call, runs `handler` with its caller, and maps the outcome.
  template <typename Handler>
  grpc::Status Serve(grpc::ServerContext& context, Handler&& handler) {
    absl::StatusOr<server::Caller> caller = Admit(context);
    if (!caller.ok()) return ToGrpcStatus(caller.status(), context);
    return ToGrpcStatus(std::forward<Handler>(handler)(*caller), context);
  }

  // The caller of the bearer token in the "authorization" metadata, within its rate limit.
  // Adds the "retry-after-ms" trailer when the limit refuses the call.
  absl::StatusOr<server::Caller> Admit(grpc::ServerContext& context) {
    const auto& metadata = context.client_metadata();
    const auto found = metadata.find("authorization");
    if (found == metadata.end()) {
      return absl::UnauthenticatedError(
          "missing \"authorization\" metadata: want \"Bearer <token>\"");
    }
    absl::StatusOr<std::string_view> token =
        BearerToken(std::string_view(found->second.data(), found->second.size()));
    if (!token.ok()) return token.status();
    absl::StatusOr<server::Caller> caller = options_.auth->Authenticate(*token);
    if (!caller.ok() || options_.rate_limiter == nullptr) return caller;
    Duration retry_after{0};
    if (absl::Status admitted = options_.rate_limiter->Admit(caller->tenant, &retry_after);
        !admitted.ok()) {
      if (admitted.code() == absl::StatusCode::kResourceExhausted) {
        context.AddTrailingMetadata(kRetryAfterTrailer,
                                    absl::StrCat(std::max<int64_t>(retry_after.count(), 0)));
      }
      return admitted;
    }
    return caller;
  }

  // Writes the stream's events until the client goes away, the stream fails or Stop.
  absl::Status Pump(grpc::ServerContext& context, server::EventStream& stream,
                    grpc::ServerWriter<v1::JobEvent>& writer) {
    while (true) {
      if (context.IsCancelled()) return absl::CancelledError("the client cancelled the watch");
      if (stopping_.load()) return StoppingError();
      absl::StatusOr<std::optional<server::JobEvent>> next = stream.Next(kWatchPoll);
      if (!next.ok()) return next.status();
      if (!next->has_value()) continue;
      if (!writer.Write(ToProto(**next))) {
        return absl::CancelledError("the watch's client went away");
      }
    }
  }

  const Options options_;
  std::atomic<bool> stopping_{false};
};

GrpcServer::GrpcServer(Options options)
    : options_(options), service_(std::make_unique<Service>(options_)) {}

GrpcServer::~GrpcServer() { Stop(); }

absl::Status GrpcServer::Start(const std::string& address) {
  if (options_.service == nullptr || options_.auth == nullptr) {
    return absl::InvalidArgumentError("GrpcServer needs Options::service and Options::auth");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return absl::FailedPreconditionError("the gRPC server was already started");
  started_ = true;
  int bound_port = 0;
  grpc::ServerBuilder builder;
  // Without SO_REUSEPORT: a second server on a port already in use fails instead of sharing it.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Pings idle connections (agent streams wait on them), and lets clients ping as often.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Agents of an HA control plane ping every 2 s (agent_runner.h).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = Credentials();
  if (!credentials.ok()) return credentials.status();
  builder.AddListeningPort(address, *credentials, &bound_port);
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  builder.RegisterService(service_.get());
  for (grpc::Service* service : options_.more_services) builder.RegisterService(service);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || bound_port == 0) {
    server_.reset();
    return absl::UnavailableError(absl::StrCat("cannot serve gRPC on \"", address, "\""));
  }
  port_.store(bound_port);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> GrpcServer::Credentials() const {
  if (options_.tls_cert_file.empty() && options_.tls_key_file.empty()) {
    return grpc::InsecureServerCredentials();
  }
  absl::StatusOr<std::string> cert = ReadPem(options_.tls_cert_file, "grpcTls.certFile");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(options_.tls_key_file, "grpcTls.keyFile");
  if (!key.ok()) return key.status();
  if (absl::Status pair = CheckTlsKeyPair(*cert, *key); !pair.ok()) return pair;
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({.private_key = *key, .cert_chain = *cert});
  return grpc::SslServerCredentials(ssl);
}

void GrpcServer::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  started_ = true;  // a stopped server does not start again
  if (server_ == nullptr) return;
  service_->BeginStop();
  server_->Shutdown(std::chrono::system_clock::now() + kStopGrace);
  server_->Wait();
  server_.reset();
}

}  // namespace tessera::api
