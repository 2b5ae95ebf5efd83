#include "store/etcd/etcd_messages.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "store/key_range.h"

namespace tessera::store::etcd {
namespace {

etcdserverpb::Compare::CompareResult ToEtcd(Compare::Relation relation) {
  switch (relation) {
    case Compare::Relation::kEqual:
      return etcdserverpb::Compare::EQUAL;
    case Compare::Relation::kNotEqual:
      return etcdserverpb::Compare::NOT_EQUAL;
    case Compare::Relation::kLess:
      return etcdserverpb::Compare::LESS;
    case Compare::Relation::kGreater:
      return etcdserverpb::Compare::GREATER;
  }
  return etcdserverpb::Compare::EQUAL;
}

void ToEtcd(const Compare& compare, etcdserverpb::Compare& out) {
  out.set_key(compare.key);
  out.set_result(ToEtcd(compare.relation));
  switch (compare.target) {
    case Compare::Target::kVersion:
      out.set_target(etcdserverpb::Compare::VERSION);
      out.set_version(compare.number);
      break;
    case Compare::Target::kCreateRevision:
      out.set_target(etcdserverpb::Compare::CREATE);
      // A missing key's create revision is 0 in both counts.
      out.set_create_revision(compare.number > 0 ? ToEtcdRevision(compare.number)
                                                 : compare.number);
      break;
    case Compare::Target::kModRevision:
      out.set_target(etcdserverpb::Compare::MOD);
      out.set_mod_revision(compare.number > 0 ? ToEtcdRevision(compare.number) : compare.number);
      break;
    case Compare::Target::kValue:
      out.set_target(etcdserverpb::Compare::VALUE);
      out.set_value(compare.value);
      break;
  }
}

void ToEtcd(const Op& op, etcdserverpb::RequestOp& out) {
  switch (op.type) {
    case Op::Type::kPut: {
      etcdserverpb::PutRequest* put = out.mutable_request_put();
      put->set_key(op.key);
      put->set_value(op.value);
      break;
    }
    case Op::Type::kDelete:
      out.mutable_request_delete_range()->set_key(op.key);
      break;
    case Op::Type::kDeletePrefix: {
      etcdserverpb::DeleteRangeRequest* del = out.mutable_request_delete_range();
      del->set_key(op.key);
      del->set_range_end(RangeEnd(op.key));
      break;
    }
  }
}

}  // namespace

KeyValue FromEtcd(const mvccpb::KeyValue& kv) {
  return KeyValue{.key = kv.key(),
                  .value = kv.value(),
                  .create_revision = FromEtcdRevision(kv.create_revision()),
                  .mod_revision = FromEtcdRevision(kv.mod_revision()),
                  .version = kv.version()};
}

Event FromEtcd(const mvccpb::Event& event) {
  return Event{.type = event.type() == mvccpb::Event::DELETE ? Event::Type::kDelete
                                                              : Event::Type::kPut,
               .kv = FromEtcd(event.kv())};
}

etcdserverpb::TxnRequest ToEtcd(const Txn& txn) {
  etcdserverpb::TxnRequest request;
  for (const Compare& compare : txn.compares) ToEtcd(compare, *request.add_compare());
  for (const Op& op : txn.success) ToEtcd(op, *request.add_success());
  for (const Op& op : txn.failure) ToEtcd(op, *request.add_failure());
  return request;
}

TxnResult FromEtcd(const etcdserverpb::TxnResponse& response) {
  TxnResult result{.succeeded = response.succeeded(),
                   .revision = FromEtcdRevision(response.header().revision())};
  for (const etcdserverpb::ResponseOp& op : response.responses()) {
    if (op.has_response_delete_range()) result.deleted += op.response_delete_range().deleted();
  }
  return result;
}

etcdserverpb::RangeRequest ToEtcd(const RangeRequest& request) {
  etcdserverpb::RangeRequest out;
  std::string start = request.prefix.empty() ? std::string(1, '\0') : request.prefix;
  if (!request.after.empty()) {
    std::string next = request.after + '\0';  // the smallest key after `after`
    if (next > start) start = std::move(next);
  }
  out.set_key(start);
  out.set_range_end(RangeEnd(request.prefix));
  out.set_limit(request.limit);
  return out;
}

std::string RangeEnd(const std::string& prefix) {
  std::optional<std::string> end = PrefixEnd(prefix);
  return end ? *end : std::string(1, '\0');
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const std::string message = absl::StrCat("etcd: ", status.error_message());
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::UnavailableError(message);
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
}

}  // namespace tessera::store::etcd
