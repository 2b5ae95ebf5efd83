// `tessera submit -f` with a file of several job documents: one POST /api/v1/jobs:batch, one
// line per job, the refused ones on stderr with exit status 1.
#include <fstream>

#include "cli/exit_status.h"
#include "cli/submit_command.h"
#include "cli/testing/fake_api_server.h"
#include "cli/testing/verb_harness.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::cli {
namespace {

using ::tessera::cli::testing::FakeApiServer;
using ::tessera::cli::testing::VerbHarness;
using ::testing::HasSubstr;

std::string Document(const std::string& name) {
  return "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  tasks:\n    - name: main\n      command: [sleep, '5']\n";
}

class SubmitBatchTest : public ::testing::Test {
 protected:
  SubmitBatchTest() {
    harness_.SetEnv("TESSERA_SERVER", server_.Url());
    path_ = ::testing::TempDir() + "/cli_jobs.yaml";
    std::ofstream(path_) << Document("a") << "---\n" << Document("b") << "---\n"
                         << Document("c");
  }

  FakeApiServer server_;
  VerbHarness harness_;
  std::string path_;
};

TEST_F(SubmitBatchTest, SeveralDocumentsGoInOneBatchRequest) {
  const nlohmann::json answer = {
      {"items",
       {{{"job", {{"metadata", {{"id", "7"}}}}}, {"created", true}},
        {{"error",
          {{"code", "INVALID_ARGUMENT"},
           {"message", "items[1].spec.queue: unknown queue \"x\""},
           {"field", "items[1].spec.queue"}}}},
        {{"job", {{"metadata", {{"id", "5"}}}}}, {"created", false}}}}};
  server_.On("POST", "/api/v1/jobs:batch", 200, answer.dump());
  EXPECT_EQ(harness_.Run(&RunSubmitCommand, {"submit", "-f", path_}), kExitServerError);
  EXPECT_EQ(harness_.out(),
            "submitted job 7\njob 5 was already submitted with this request id\n");
  EXPECT_EQ(harness_.err(),
            "error: document 2: items[1].spec.queue: unknown queue \"x\"\n");
  ASSERT_EQ(server_.Requests().size(), 1u);
  const nlohmann::json sent = nlohmann::json::parse(server_.Requests()[0].body);
  ASSERT_EQ(sent["items"].size(), 3u);
  EXPECT_EQ(sent["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(sent["items"][2]["metadata"]["name"], "c");

  EXPECT_EQ(harness_.Run(&RunSubmitCommand, {"submit", "-f", path_, "-q"}), kExitServerError);
  EXPECT_EQ(harness_.out(), "7\n5\n");
}

TEST_F(SubmitBatchTest, DryRunPrintsEveryDocumentAndABadOneSendsNothing) {
  ASSERT_EQ(harness_.Run(&RunSubmitCommand, {"submit", "-f", path_, "--dry-run"}), kExitOk)
      << harness_.err();
  EXPECT_THAT(harness_.out(), HasSubstr("name: a"));
  EXPECT_THAT(harness_.out(), HasSubstr("---\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("name: c"));

  std::ofstream(path_) << Document("a") << "---\n" << Document("b, bogus: 1");
  EXPECT_EQ(harness_.Run(&RunSubmitCommand, {"submit", "-f", path_}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr(path_ + ":11:"));
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(SubmitBatchTest, ARefusedBatchIsTheServersError) {
  server_.On("POST", "/api/v1/jobs:batch", 400,
             R"({"error": {"code": "INVALID_ARGUMENT", "message": "items: must hold 1..1000 jobs, not 1001", "field": "items"}})");
  EXPECT_EQ(harness_.Run(&RunSubmitCommand, {"submit", "-f", path_}), kExitServerError);
  EXPECT_THAT(harness_.err(), HasSubstr("items: must hold"));
  EXPECT_EQ(harness_.out(), "");
}

}  // namespace
}  // namespace tessera::cli
