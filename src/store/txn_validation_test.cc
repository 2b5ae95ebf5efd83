#include "store/txn_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace tessera::store {
namespace {

using ::testing::HasSubstr;

TEST(ValidateTxnTest, AcceptsWellFormedTransactions) {
  const Txn txns[] = {
      Txn{},
      Txn::Unconditional({Op::Put("/a", "1"), Op::Put("/b", ""), Op::Delete("/c")}),
      Txn{.compares = {Compare::Absent("/a")},
          .success = {Op::Put("/a", "1")},
          .failure = {Op::Put("/a", "2")}},
      // Deletes may overlap; a key put in one branch may be deleted in the other.
      Txn{.success = {Op::DeletePrefix("/x/"), Op::Delete("/x/1"), Op::Put("/y", "")},
          .failure = {Op::Delete("/y")}},
  };
  for (const Txn& txn : txns) EXPECT_TRUE(ValidateTxn(txn, TxnLimits{}).ok());
}

TEST(ValidateTxnTest, NamesTheOffendingField) {
  struct Case {
    Txn txn;
    std::string message;
  };
  const Case cases[] = {
      {Txn::Unconditional({Op::Put("", "v")}), "success[0].key: must not be empty"},
      {Txn{.compares = {Compare::Exists("")}}, "compares[0].key: must not be empty"},
      {Txn{.failure = {Op::Put("/a", "1"), Op::DeletePrefix("")}},
       "failure[1].key: must not be empty"},
      {Txn::Unconditional({Op::Put("/a", "1"), Op::Put("/a", "2")}),
       "success[1].key: \"/a\" is put more than once"},
      {Txn::Unconditional({Op::Delete("/a"), Op::Put("/a", "2")}),
       "success[1].key: \"/a\" is both put and deleted"},
      {Txn::Unconditional({Op::Put("/jobs/1", "2"), Op::DeletePrefix("/jobs/")}),
       "success[0].key: \"/jobs/1\" is both put and deleted"},
      {Txn::Unconditional({Op{.type = Op::Type::kDelete, .key = "/a", .value = "x"}}),
       "success[0].value: only a put carries a value"},
  };
  for (const Case& c : cases) {
    absl::Status status = ValidateTxn(c.txn, TxnLimits{});
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(status.message(), HasSubstr(c.message));
  }
}

TEST(ValidateTxnTest, EnforcesLimits) {
  TxnLimits limits{
      .max_key_bytes = 4, .max_value_bytes = 8, .max_entries = 3, .max_total_bytes = 19};
  struct Case {
    Txn txn;
    std::string message;
  };
  const Case cases[] = {
      {Txn::Unconditional({Op::Put("/abcd", "")}), "success[0].key: 5 bytes exceed the limit of 4"},
      {Txn::Unconditional({Op::Put("/a", "123456789")}),
       "success[0].value: 9 bytes exceed the limit of 8"},
      {Txn{.compares = {Compare::ValueIs("/a", "123456789")}},
       "compares[0].value: 9 bytes exceed the limit of 8"},
      {Txn::Unconditional({Op::Delete("/a"), Op::Delete("/b"), Op::Delete("/c"), Op::Delete("/d")}),
       "txn: 4 compares and ops exceed the limit of 3"},
      {Txn::Unconditional({Op::Put("/a", "12345678"), Op::Put("/b", "12345678")}), "txn: 20 bytes"},
  };
  for (const Case& c : cases) {
    absl::Status status = ValidateTxn(c.txn, limits);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(status.message(), HasSubstr(c.message));
  }
}

TEST(EvaluateCompareTest, FollowsEtcdSemantics) {
  const KeyValue kv{
      .key = "/k", .value = "b", .create_revision = 3, .mod_revision = 7, .version = 2};
  using T = Compare::Target;
  using R = Compare::Relation;
  struct Case {
    Compare compare;
    bool on_key;
    bool on_missing;
  };
  const Case cases[] = {
      {Compare::Exists("/k"), true, false},
      {Compare::Absent("/k"), false, true},
      {Compare::ModRevisionIs("/k", 7), true, false},
      {Compare::ModRevisionIs("/k", 0), false, true},
      {Compare::ValueIs("/k", "b"), true, false},
      {Compare::ValueIs("/k", ""), false, false},
      {{.key = "/k", .target = T::kValue, .relation = R::kNotEqual, .value = "x"}, true, false},
      {{.key = "/k", .target = T::kValue, .relation = R::kLess, .value = "c"}, true, false},
      {{.key = "/k", .target = T::kValue, .relation = R::kGreater, .value = "a"}, true, false},
      {{.key = "/k", .target = T::kCreateRevision, .relation = R::kEqual, .number = 3},
       true,
       false},
      {{.key = "/k", .target = T::kModRevision, .relation = R::kLess, .number = 8}, true, true},
      {{.key = "/k", .target = T::kModRevision, .relation = R::kGreater, .number = 6}, true, false},
      {{.key = "/k", .target = T::kVersion, .relation = R::kNotEqual, .number = 2}, false, true},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(EvaluateCompare(cases[i].compare, &kv), cases[i].on_key) << "case " << i;
    EXPECT_EQ(EvaluateCompare(cases[i].compare, nullptr), cases[i].on_missing) << "case " << i;
  }
}

TEST(EvaluateCompareTest, ComparesValuesAsUnsignedBytes) {
  const KeyValue kv{.key = "/k", .value = std::string("\x80"), .version = 1};
  Compare less{.key = "/k",
               .target = Compare::Target::kValue,
               .relation = Compare::Relation::kLess,
               .value = std::string("\x7f")};
  EXPECT_FALSE(EvaluateCompare(less, &kv));
}

}  // namespace
}  // namespace tessera::store
