#include "store/etcd/etcd_store.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/etcd/etcd_channel.h"
#include "store/etcd/etcd_messages.h"
#include "store/etcd/etcd_watcher.h"
#include "store/etcd/txn_batch.h"
#include "store/txn_validation.h"

namespace tessera::store {
namespace {

using etcd::EtcdWatcher;

// The Watcher handed out: shares the watcher with the store, which ends it at close.
class WatcherHandle final : public Watcher {
 public:
  WatcherHandle(std::shared_ptr<EtcdWatcher> watcher, std::shared_ptr<grpc::Channel> channel)
      : watcher_(std::move(watcher)), channel_(std::move(channel)) {}
  absl::StatusOr<std::vector<Event>> Next(absl::Time deadline) override {
    return watcher_->Next(deadline);
  }
  void Cancel() override { watcher_->Cancel(); }

 private:
  std::shared_ptr<EtcdWatcher> watcher_;
  std::shared_ptr<grpc::Channel> channel_;  // the stream's, kept while it lives
};

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdStore>> EtcdStore::Open(EtcdStoreOptions options) {
  std::unique_ptr<EtcdStore> store(new EtcdStore(std::move(options)));
  if (absl::Status status = store->Connect(); !status.ok()) return status;
  store->committer_ = std::thread([s = store.get()] { s->CommitLoop(); });
  return store;
}

absl::Status EtcdStore::Connect() {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = etcd::OpenEtcdChannel(options_);
  if (!channel.ok()) return channel.status();
  channel_ = *std::move(channel);
  kv_ = etcdserverpb::KV::NewStub(channel_);
  watch_ = etcdserverpb::Watch::NewStub(channel_);
  return Range({.limit = 1}).status();
}

EtcdStore::~EtcdStore() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  queued_.notify_all();
  if (committer_.joinable()) committer_.join();
  std::vector<std::shared_ptr<EtcdWatcher>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::weak_ptr<EtcdWatcher>& w : watchers_) {
      if (std::shared_ptr<EtcdWatcher> watcher = w.lock()) live.push_back(std::move(watcher));
    }
  }
  for (const std::shared_ptr<EtcdWatcher>& watcher : live) watcher->Close();
}

void EtcdStore::SetDeadline(grpc::ClientContext& context) const {
  context.set_deadline(std::chrono::system_clock::now() + options_.request_timeout);
}

absl::StatusOr<std::optional<KeyValue>> EtcdStore::Get(std::string_view key) {
  if (key.empty()) return absl::InvalidArgumentError("key: must not be empty");
  etcdserverpb::RangeRequest request;
  request.set_key(std::string(key));
  etcdserverpb::RangeResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  if (absl::Status s = etcd::FromGrpc(kv_->Range(&context, request, &response)); !s.ok()) {
    return s;
  }
  if (response.kvs().empty()) return std::nullopt;
  return etcd::FromEtcd(response.kvs(0));
}

absl::StatusOr<RangeResult> EtcdStore::Range(const RangeRequest& request) {
  if (request.limit < 0) return absl::InvalidArgumentError("limit: must be >= 0");
  etcdserverpb::RangeResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  if (absl::Status s = etcd::FromGrpc(kv_->Range(&context, etcd::ToEtcd(request), &response));
      !s.ok()) {
    return s;
  }
  RangeResult result{.more = response.more(),
                     .revision = etcd::FromEtcdRevision(response.header().revision())};
  result.kvs.reserve(response.kvs_size());
  for (const mvccpb::KeyValue& kv : response.kvs()) result.kvs.push_back(etcd::FromEtcd(kv));
  return result;
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdStore::SendTxn(const Txn& txn) {
  etcdserverpb::TxnResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  if (absl::Status s = etcd::FromGrpc(kv_->Txn(&context, etcd::ToEtcd(txn), &response)); !s.ok()) {
    return s;
  }
  return response;
}

absl::StatusOr<TxnResult> EtcdStore::Send(const Txn& txn) {
  absl::StatusOr<etcdserverpb::TxnResponse> response = SendTxn(txn);
  if (!response.ok()) return response.status();
  return etcd::FromEtcd(*response);
}

absl::StatusOr<TxnResult> EtcdStore::Commit(Txn txn) {
  if (absl::Status s = ValidateTxn(txn, options_.limits); !s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return absl::UnavailableError("the store is closed");
  }
  return Send(txn);
}

absl::Status EtcdStore::CommitAsync(Txn txn, TxnCallback done) {
  if (absl::Status s = ValidateTxn(txn, options_.limits); !s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return absl::UnavailableError("the store is closed");
    if (queue_.size() >= options_.max_queued_txns) {
      return absl::ResourceExhaustedError(absl::StrCat("the store's write queue is full (",
                                                       options_.max_queued_txns, " transactions)"));
    }
    queue_.push_back({std::move(txn), std::move(done)});
  }
  queued_.notify_one();
  return absl::OkStatus();
}

void EtcdStore::CommitLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    queued_.wait(lock, [this] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return;  // closing, and everything admitted is committed
    std::vector<Queued> taken;
    etcd::TxnBatch batch(options_.limits);
    while (!queue_.empty() && batch.Add(queue_.front().txn)) {
      taken.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lock.unlock();
    CommitBatch(batch, taken);
    lock.lock();
  }
}

void EtcdStore::CommitBatch(const etcd::TxnBatch& batch, std::vector<Queued>& taken) {
  if (taken.size() == 1) {
    taken.front().done(Send(taken.front().txn));
    return;
  }
  absl::StatusOr<etcdserverpb::TxnResponse> response = SendTxn(batch.merged());
  if (response.ok() && response->succeeded()) {
    std::vector<TxnResult> results = batch.Split(*response);
    for (size_t i = 0; i < taken.size(); ++i) taken[i].done(results[i]);
    return;
  }
  // Nothing of the batch was applied: a compare did not hold, or etcd refused the merged Txn
  // (a rule of its own the batch did not foresee). One by one, in order, each gets its own
  // answer. Any other error leaves the outcome unknown for all of them alike.
  if (response.ok() || absl::IsInvalidArgument(response.status())) {
    for (Queued& queued : taken) queued.done(Send(queued.txn));
    return;
  }
  for (Queued& queued : taken) queued.done(response.status());
}

absl::StatusOr<std::unique_ptr<Watcher>> EtcdStore::Watch(std::string_view prefix,
                                                          Revision from_revision) {
  if (from_revision < 0) return absl::InvalidArgumentError("from_revision: must be >= 0");
  const int64_t start = from_revision == 0 ? 0 : etcd::ToEtcdRevision(from_revision);
  if (absl::Status s = CheckNotCompacted(std::string(prefix), start); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<EtcdWatcher>> watcher =
      EtcdWatcher::Start(*watch_, std::string(prefix), start, options_.watch_buffer_events);
  if (!watcher.ok()) return watcher.status();
  std::shared_ptr<EtcdWatcher> shared = *std::move(watcher);
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(watchers_, [](const std::weak_ptr<EtcdWatcher>& w) { return w.expired(); });
    watchers_.push_back(shared);
  }
  return std::make_unique<WatcherHandle>(std::move(shared), channel_);
}

absl::Status EtcdStore::CheckNotCompacted(const std::string& prefix, int64_t start) {
  if (start == 0) return absl::OkStatus();
  etcdserverpb::RangeRequest request = etcd::ToEtcd(RangeRequest{.prefix = prefix, .limit = 1});
  request.set_revision(start);
  request.set_count_only(true);
  etcdserverpb::RangeResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  absl::Status status = etcd::FromGrpc(kv_->Range(&context, request, &response));
  // A future revision is fine: the watch waits for it.
  if (absl::IsOutOfRange(status) && status.message().find("future") != std::string_view::npos) {
    return absl::OkStatus();
  }
  if (absl::IsOutOfRange(status)) {
    return absl::OutOfRangeError(absl::StrCat("revision ", etcd::FromEtcdRevision(start),
                                              " is compacted: list again and watch from there"));
  }
  return status;
}

absl::Status EtcdStore::Compact(Revision revision) {
  if (revision < 0) return absl::InvalidArgumentError("revision: must be >= 0");
  etcdserverpb::CompactionRequest request;
  request.set_revision(etcd::ToEtcdRevision(revision));
  request.set_physical(true);
  etcdserverpb::CompactionResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  return etcd::FromGrpc(kv_->Compact(&context, request, &response));
}

}  // namespace tessera::store
