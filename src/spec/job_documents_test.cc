// ParseJobDocuments: the documents of a YAML stream, as `tessera submit -f` reads a file.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/jobspec.h"

namespace tessera::spec {
namespace {

using ::testing::HasSubstr;

constexpr char kStream[] = R"(# two jobs
---
apiVersion: tessera/v1
kind: Job
metadata: {name: a}
spec:
  tasks: [{name: main, command: ["true"]}]
--- # the second
apiVersion: tessera/v1
kind: Job
metadata: {name: b}
spec:
  tasks: [{name: main, command: ["true"]}]
---
# nothing here
)";

TEST(ParseJobDocumentsTest, ReadsEveryDocumentOfAStreamInOrder) {
  absl::StatusOr<std::vector<JobDocument>> jobs = ParseJobDocuments(kStream);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].spec.name, "a");
  EXPECT_EQ((*jobs)[1].spec.name, "b");

  absl::StatusOr<std::vector<JobDocument>> one = ParseJobDocuments(
      R"({"apiVersion": "tessera/v1", "kind": "Job", "spec": {"tasks": [{"name": "m", "command": ["x"]}]}})",
      {.format = DocumentFormat::kJson});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->size(), 1u);
}

TEST(ParseJobDocumentsTest, AnErrorCountsLinesInTheWholeText) {
  std::string stream = kStream;
  stream.replace(stream.find("name: b"), 7, "name: b, bogus: 1");
  absl::StatusOr<std::vector<JobDocument>> jobs = ParseJobDocuments(stream, {.source = "f.yaml"});
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.status().message(), HasSubstr("f.yaml:11:"));
  EXPECT_THAT(jobs.status().message(), HasSubstr("bogus"));
  EXPECT_FALSE(ParseJobDocuments("---\n# empty\n---\n").ok());
}

}  // namespace
}  // namespace tessera::spec
