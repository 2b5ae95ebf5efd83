#include "store/etcd/etcd_election.h"

#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "store/etcd/etcd_channel.h"
#include "store/etcd/etcd_messages.h"
#include "store/etcd/etcd_watcher.h"

namespace tessera::store {
namespace {

using Steady = std::chrono::steady_clock;

void SetDeadline(grpc::ClientContext& context, Duration timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
}

}  // namespace

EtcdElection::EtcdElection(const EtcdStoreOptions& etcd, ElectionOptions options)
    : etcd_(etcd), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<EtcdElection>> EtcdElection::Open(const EtcdStoreOptions& etcd,
                                                                 ElectionOptions options) {
  if (options.prefix.empty()) return absl::InvalidArgumentError("prefix: must not be empty");
  if (options.lease_ttl < std::chrono::seconds(2) ||
      options.lease_ttl % std::chrono::seconds(1) != Duration::zero()) {
    return absl::InvalidArgumentError(
        absl::StrCat("leaseTtl: must be whole seconds, at least 2 s (etcd's minimum), not ",
                     options.lease_ttl.count(), " ms"));
  }
  std::unique_ptr<EtcdElection> election(new EtcdElection(etcd, std::move(options)));
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = etcd::OpenEtcdChannel(etcd);
  if (!channel.ok()) return channel.status();
  election->channel_ = *std::move(channel);
  election->kv_ = etcdserverpb::KV::NewStub(election->channel_);
  election->watch_ = etcdserverpb::Watch::NewStub(election->channel_);
  election->lease_ = etcdserverpb::Lease::NewStub(election->channel_);
  if (absl::Status s = election->Grant(); !s.ok()) return s;
  election->renewer_ = std::thread([e = election.get()] { e->RenewLoop(); });
  if (absl::Status s = election->PutKey(); !s.ok()) return s;
  return election;
}

EtcdElection::~EtcdElection() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  (void)Resign();
}

absl::Status EtcdElection::Grant() {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(std::chrono::duration_cast<std::chrono::seconds>(options_.lease_ttl).count());
  etcdserverpb::LeaseGrantResponse response;
  grpc::ClientContext context;
  SetDeadline(context, etcd_.request_timeout);
  if (absl::Status s = etcd::FromGrpc(lease_->LeaseGrant(&context, request, &response)); !s.ok()) {
    return s;
  }
  if (!response.error().empty()) {
    return absl::UnavailableError(absl::StrCat("etcd: lease not granted: ", response.error()));
  }
  lease_id_ = response.id();
  key_ = absl::StrCat(options_.prefix, absl::StrFormat("%016x", lease_id_));
  return absl::OkStatus();
}

absl::Status EtcdElection::PutKey() {
  etcdserverpb::TxnRequest request;
  etcdserverpb::Compare* absent = request.add_compare();
  absent->set_key(key_);
  absent->set_target(etcdserverpb::Compare::CREATE);
  absent->set_result(etcdserverpb::Compare::EQUAL);
  absent->set_create_revision(0);
  etcdserverpb::PutRequest* put = request.add_success()->mutable_request_put();
  put->set_key(key_);
  put->set_value(options_.candidate);
  put->set_lease(lease_id_);
  etcdserverpb::TxnResponse response;
  grpc::ClientContext context;
  SetDeadline(context, etcd_.request_timeout);
  if (absl::Status s = etcd::FromGrpc(kv_->Txn(&context, request, &response)); !s.ok()) {
    return s;
  }
  if (!response.succeeded()) {
    return absl::InternalError(absl::StrCat("election key ", key_, " exists already"));
  }
  created_ = etcd::FromEtcdRevision(response.header().revision());
  return absl::OkStatus();
}

absl::Status EtcdElection::Renew() {
  grpc::ClientContext context;
  SetDeadline(context, options_.lease_ttl / 3);
  // While the channel moves to another member, wait for it (within the deadline) rather than
  // fail at once.
  context.set_wait_for_ready(true);
  auto stream = lease_->LeaseKeepAlive(&context);
  etcdserverpb::LeaseKeepAliveRequest request;
  request.set_id(lease_id_);
  etcdserverpb::LeaseKeepAliveResponse response;
  const bool answered = stream->Write(request) && stream->Read(&response);
  stream->WritesDone();
  absl::Status status = etcd::FromGrpc(stream->Finish());
  if (!answered) {
    return status.ok() ? absl::UnavailableError("etcd: lease renewal not answered") : status;
  }
  if (response.ttl() <= 0) return absl::NotFoundError("the lease has expired");
  return absl::OkStatus();
}

void EtcdElection::RenewLoop() {
  const Duration period = options_.lease_ttl / 3;
  const Duration deadline = options_.lease_ttl * 2 / 3;
  // Granting counts as a renewal sent just before Open started this thread.
  Steady::time_point last_good = Steady::now();
  Steady::time_point next = last_good + period;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (wake_.wait_until(lock, next, [this] { return stopping_ || resigned_; })) return;
    }
    const Steady::time_point sent = Steady::now();
    absl::Status renewed = Renew();
    if (renewed.ok()) {
      last_good = sent;
      next = sent + period;
    } else if (absl::IsNotFound(renewed)) {
      return Lose(renewed);
    } else {
      next = Steady::now() + period / 2;
    }
    if (Steady::now() - last_good >= deadline) {
      return Lose(absl::UnavailableError(absl::StrCat(
          "no lease renewal for ", deadline.count(), " ms (last error: ", renewed.message(), ")")));
    }
  }
}

void EtcdElection::Lose(const absl::Status& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lost_ || resigned_) return;
    lost_ = true;
  }
  wake_.notify_all();
  std::fprintf(stderr, "tessera: the leader election lease of %s is lost: %s\n", key_.c_str(),
               std::string(why.message()).c_str());
  if (options_.lost) options_.lost();
}

absl::StatusOr<std::optional<Leadership>> EtcdElection::Oldest(int64_t* etcd_revision) {
  etcdserverpb::RangeResponse response;
  grpc::ClientContext context;
  SetDeadline(context, etcd_.request_timeout);
  if (absl::Status s = etcd::FromGrpc(
          kv_->Range(&context, etcd::ToEtcd(RangeRequest{.prefix = options_.prefix}), &response));
      !s.ok()) {
    return s;
  }
  *etcd_revision = response.header().revision();
  std::optional<Leadership> oldest;
  for (const mvccpb::KeyValue& kv : response.kvs()) {
    const Revision created = etcd::FromEtcdRevision(kv.create_revision());
    if (!oldest || created < oldest->term) {
      oldest = Leadership{.key = kv.key(), .candidate = kv.value(), .term = created};
    }
  }
  return oldest;
}

absl::StatusOr<std::optional<Leadership>> EtcdElection::Leader() {
  int64_t revision = 0;
  return Oldest(&revision);
}

absl::Status EtcdElection::WaitForDelete(int64_t from_etcd_revision, absl::Time deadline) {
  absl::StatusOr<std::unique_ptr<etcd::EtcdWatcher>> watcher =
      etcd::EtcdWatcher::Start(*watch_, options_.prefix, from_etcd_revision, 64);
  if (!watcher.ok()) return watcher.status();
  while (true) {
    absl::StatusOr<std::vector<Event>> events = (*watcher)->Next(deadline);
    if (absl::IsDeadlineExceeded(events.status())) return absl::OkStatus();
    if (!events.ok()) return events.status();
    for (const Event& event : *events) {
      if (event.type == Event::Type::kDelete) return absl::OkStatus();
    }
  }
}

absl::StatusOr<Revision> EtcdElection::Campaign(
    const std::function<bool()>& stop,
    const std::function<void(const std::optional<Leadership>&)>& waiting) {
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (lost_ || resigned_) return absl::UnavailableError("the election lease is gone");
    }
    if (stop && stop()) return absl::CancelledError("the campaign was stopped");
    int64_t revision = 0;
    absl::StatusOr<std::optional<Leadership>> oldest = Oldest(&revision);
    if (!oldest.ok()) return oldest.status();
    if (*oldest && (*oldest)->key == key_) {
      term_ = created_;
      return created_;
    }
    if (waiting) waiting(*oldest);
    if (absl::Status s = WaitForDelete(revision + 1, absl::Now() + absl::Seconds(1)); !s.ok()) {
      return s;
    }
  }
}

Compare EtcdElection::Fence() const {
  // Before an election, a compare that never holds (a create revision is never negative).
  const Revision term = term_.load();
  return Compare{.key = key_,
                 .target = Compare::Target::kCreateRevision,
                 .relation = Compare::Relation::kEqual,
                 .number = term > 0 ? term : -1};
}

bool EtcdElection::Lost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_;
}

absl::Status EtcdElection::Resign() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (resigned_ || lease_id_ == 0) return absl::OkStatus();
    resigned_ = true;
  }
  wake_.notify_all();
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease_id_);
  etcdserverpb::LeaseRevokeResponse response;
  grpc::ClientContext context;
  SetDeadline(context, etcd_.request_timeout);
  return etcd::FromGrpc(lease_->LeaseRevoke(&context, request, &response));
}

}  // namespace tessera::store
