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

}  // namespace
}  // namespace tessera::spec
