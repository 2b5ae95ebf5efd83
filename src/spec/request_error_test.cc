#include "spec/request_error.h"

#include "gtest/gtest.h"
#include "spec/jobspec.h"

namespace tessera::spec {
namespace {

TEST(RequestErrorTest, FieldComesFromThePayloadOrTheJobSpecError) {
  const absl::Status limit = FieldError("limit", "must be between 1 and 1000");
  EXPECT_EQ(limit.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(limit.message(), "limit: must be between 1 and 1000");
  EXPECT_EQ(ErrorField(limit), "limit");

  EXPECT_EQ(ErrorField(WithField(absl::NotFoundError("x"), "job_id")), "job_id");
  EXPECT_EQ(ErrorField(absl::InvalidArgumentError("no field")), std::nullopt);

  absl::StatusOr<JobDocument> bad = ParseJobDocument(
      "apiVersion: tessera/v1\nkind: Job\nspec: {tasks: [{name: w, replicas: 0}]}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ErrorField(bad.status()), "spec.tasks[0].replicas");
}

TEST(RequestErrorTest, ItemErrorPutsTheFieldUnderTheItem) {
  absl::StatusOr<JobDocument> bad = ParseJobDocument(
      "apiVersion: tessera/v1\nkind: Job\nspec: {tasks: [{name: w, replicas: 0}]}\n",
      {.source = "request"});
  ASSERT_FALSE(bad.ok());
  const absl::Status parse = ItemError("items", 3, bad.status());
  EXPECT_EQ(parse.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorField(parse), "items[3].spec.tasks[0].replicas");
  EXPECT_TRUE(std::string(parse.message()).starts_with("items[3].spec.tasks[0].replicas: "))
      << parse;

  const absl::Status queue = ItemError("items", 0, FieldError("spec.queue", "unknown queue"));
  EXPECT_EQ(queue.message(), "items[0].spec.queue: unknown queue");
  EXPECT_EQ(ErrorField(queue), "items[0].spec.queue");

  const absl::Status exists = ItemError("items", 2, absl::AlreadyExistsError("name taken"));
  EXPECT_EQ(exists.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(exists.message(), "items[2]: name taken");
  EXPECT_EQ(ErrorField(exists), "items[2]");
}

}  // namespace
}  // namespace tessera::spec
