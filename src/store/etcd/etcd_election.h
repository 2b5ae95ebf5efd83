// EtcdElection: leader election among the replicas of the control plane, over etcd leases, as
// etcd's own concurrency API does it (go.etcd.io/etcd/client/v3/concurrency: Session and
// Election).
//
// Each replica holds a lease of `lease_ttl` and puts one key under `prefix`, bound to the lease:
// `<prefix><lease id in hex>`, whose value is the replica's `candidate` text (its addresses).
// The key created first (the lowest create revision) leads; the others wait, in the order they
// joined, for the keys before theirs to go. A key goes when its replica resigns (the lease is
// revoked) or stops renewing its lease (it died, paused or lost etcd): etcd then deletes it when
// the lease expires, `lease_ttl` after the last renewal.
//
// Term and fencing. The leader's term is its key's create revision (store numbering, as the
// store's revisions: etcd's minus one). It is a fencing token: Fence() is the compare "this key
// still has this create revision", which a FencedStore (store/fenced_store.h) adds to every
// write, so that a replica deposed without knowing it (paused past its lease) cannot write
// over its successor. Terms only grow: each new key has a higher create revision.
//
// Renewal and loss. A thread renews the lease every lease_ttl / 3. The lease counts as lost,
// and `lost` is called once, when a renewal finds it gone or when none has succeeded for
// lease_ttl * 2 / 3 since the last good one was sent: etcd cannot expire the lease before
// lease_ttl after that sending, so a leader told of its loss still has lease_ttl / 3 to stop
// before another may be elected. A leader must stop scheduling and launching when told (the
// server exits, for its supervisor to start it again as a standby).
//
// Time is real (steady) time: the election paces itself by etcd's lease clock, which no
// injected clock could drive.
//
// Errors: Open: InvalidArgument naming the field (a lease_ttl below 2 s, etcd's minimum, or not
// whole seconds; an empty prefix), Unavailable when etcd cannot be reached. Campaign:
// Unavailable when the lease is lost or etcd fails while waiting, Cancelled when `stop` says so.
// Thread-safety: Campaign from one thread; Leader, Fence, term and Resign from any thread. The
// destructor resigns.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "etcd/etcdserverpb/rpc.grpc.pb.h"
#include "store/etcd/etcd_store_options.h"
#include "tessera/store/key_value.h"
#include "tessera/store/txn.h"

namespace tessera::store {

struct ElectionOptions {
  std::string prefix = "/tessera/leader/";
  std::string candidate;       // this replica's value (e.g. its addresses as JSON)
  Duration lease_ttl{3000};    // whole seconds, >= 2 s
  std::function<void()> lost;  // called once, on the renewal thread (see above)
};

// Who leads, as a candidate sees it.
struct Leadership {
  std::string key;
  std::string candidate;  // the leader's value
  Revision term = 0;      // its key's create revision
};

class EtcdElection {
 public:
  // Grants the lease, starts renewing it and puts this candidate's key.
  static absl::StatusOr<std::unique_ptr<EtcdElection>> Open(const EtcdStoreOptions& etcd,
                                                            ElectionOptions options);
  ~EtcdElection();
  EtcdElection(const EtcdElection&) = delete;
  EtcdElection& operator=(const EtcdElection&) = delete;

  // Waits until this candidate leads and returns its term. `stop` is asked about once a
  // second. `waiting` is told each leader seen while this candidate waits (nullopt: none).
  absl::StatusOr<Revision> Campaign(
      const std::function<bool()>& stop,
      const std::function<void(const std::optional<Leadership>&)>& waiting = nullptr);

  // The candidate that leads now (nullopt: none), read from etcd.
  absl::StatusOr<std::optional<Leadership>> Leader();

  // The compare that holds while this candidate leads in the term Campaign returned (before
  // that, one that never holds).
  Compare Fence() const;
  Revision term() const { return term_.load(); }
  // Whether the lease is lost (`lost` has been or is being called).
  bool Lost() const;
  const std::string& key() const { return key_; }

  // Revokes the lease: the key goes at once, and the next candidate leads. Idempotent.
  absl::Status Resign();

 private:
  EtcdElection(const EtcdStoreOptions& etcd, ElectionOptions options);
  absl::Status Grant();
  absl::Status PutKey();
  // One renewal: OK, or the error that kept it from succeeding (NotFound: the lease is gone).
  absl::Status Renew();
  void RenewLoop();
  void Lose(const absl::Status& why);
  // The candidates' keys, oldest first, and the revision of the read.
  absl::StatusOr<std::optional<Leadership>> Oldest(int64_t* etcd_revision);
  absl::Status WaitForDelete(int64_t from_etcd_revision, absl::Time deadline);

  EtcdStoreOptions etcd_;
  ElectionOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<etcdserverpb::KV::Stub> kv_;
  std::unique_ptr<etcdserverpb::Watch::Stub> watch_;
  std::unique_ptr<etcdserverpb::Lease::Stub> lease_;
  int64_t lease_id_ = 0;
  std::string key_;
  Revision created_ = 0;  // the key's create revision (store numbering)
  std::atomic<Revision> term_{0};

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool lost_ = false;
  bool resigned_ = false;
  std::thread renewer_;
};

}  // namespace tessera::store
