#include "agent/slurm/slurm_submit.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::agent {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TaskLaunchSpec Spec() {
  TaskLaunchSpec spec;
  spec.launch_id = "j1-w-0-a1";
  spec.job_id = "j1";
  spec.placement.node = "node3";
  spec.placement.gpus = {1, 4};
  spec.placement.gpu_milli = 1000;
  spec.command = {"/bin/sh", "-c"};
  spec.args = {"echo 'hi' $HOME"};
  spec.env = {{"A", "1"}, {"PATH", "/opt/bin"}};
  spec.time_limit = Duration(90'000);
  spec.cpu = 1500;
  spec.memory = (int64_t{3} << 30) + 1;
  return spec;
}

SlurmSubmitOptions Options() {
  return {.partition = "gpu",
          .log_dir = "/shared/logs/",
          .working_dir = "/tmp",
          .base_env = {{"PATH", "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}}};
}

// Runs the script's exec line through a real /bin/sh with `echo` instead of the program: the
// words must come back exactly.
std::string ShellEcho(const std::string& words) {
  FILE* pipe = popen(("/bin/sh -c 'printf \"[%s]\" \"$@\"' sh " + words).c_str(), "r");
  std::string out;
  char buffer[256];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  pclose(pipe);
  return out;
}

TEST(SlurmSubmitTest, QuotedWordsSurviveTheShell) {
  const std::vector<std::string> words = {"plain", "two words", "it's", "$HOME", "`id`",
                                          "\"q\"", "a\\b",      "",     "\n",    "*"};
  std::string line;
  std::string expected;
  for (const std::string& word : words) {
    line += " " + ShellQuote(word);
    expected += "[" + word + "]";
  }
  EXPECT_EQ(ShellEcho(line), expected);
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

TEST(SlurmSubmitTest, Script) {
  absl::StatusOr<std::string> script = BatchScript(Spec());
  ASSERT_TRUE(script.ok()) << script.status();
  EXPECT_EQ(*script,
            "#!/bin/sh\n# Tessera task j1-w-0-a1\nexec '/bin/sh' '-c' 'echo '\\''hi'\\'' $HOME'\n");
}

TEST(SlurmSubmitTest, Body) {
  absl::StatusOr<std::string> text =
      SubmitBody(Spec(), Options(), {{"TESSERA_TASK_ID", "j1-w-0-a1"}, {"A", "2"}});
  ASSERT_TRUE(text.ok()) << text.status();
  const json body = json::parse(*text);
  const json& job = body["job"];
  EXPECT_EQ(job["name"], "j1-w-0-a1");
  EXPECT_EQ(job["comment"], "tessera:j1-w-0-a1");
  EXPECT_EQ(job["nodelist"], "node3");
  EXPECT_EQ(job["nodes"], 1);
  EXPECT_EQ(job["partition"], "gpu");
  EXPECT_EQ(job["gres"], "gpu:2");
  EXPECT_EQ(job["time_limit"], 2);
  EXPECT_EQ(job["cpus_per_task"], 2);
  EXPECT_EQ(job["memory_per_node"], 3 * 1024 + 1);
  EXPECT_EQ(job["current_working_directory"], "/tmp");
  EXPECT_EQ(job["standard_output"], "/shared/logs/tessera-j1-w-0-a1.stdout.log");
  EXPECT_EQ(job["standard_error"], "/shared/logs/tessera-j1-w-0-a1.stderr.log");
  EXPECT_EQ(job["requeue"], false);
  EXPECT_EQ(job["environment"], (json{{"A", "2"},
                                      {"LANG", "C.UTF-8"},
                                      {"PATH", "/opt/bin"},
                                      {"TESSERA_TASK_ID", "j1-w-0-a1"}}));
  EXPECT_EQ(body["script"], *BatchScript(Spec()));
}

TEST(SlurmSubmitTest, OptionalFields) {
  TaskLaunchSpec spec = Spec();
  spec.placement.gpus.clear();
  spec.time_limit.reset();
  spec.cpu = 0;
  spec.memory = 0;
  spec.working_dir = "/work";
  SlurmSubmitOptions options = Options();
  options.partition = "";
  const json job = json::parse(*SubmitBody(spec, options, {}))["job"];
  EXPECT_FALSE(job.contains("gres"));
  EXPECT_FALSE(job.contains("time_limit"));
  EXPECT_FALSE(job.contains("partition"));
  EXPECT_FALSE(job.contains("cpus_per_task"));
  EXPECT_FALSE(job.contains("memory_per_node"));
  EXPECT_EQ(job["current_working_directory"], "/work");

  spec.placement.gpus = {3};
  spec.placement.gpu_milli = 250;  // a share of one device: Slurm gives a whole one
  EXPECT_EQ(json::parse(*SubmitBody(spec, options, {}))["job"]["gres"], "gpu:1");
}

TEST(SlurmSubmitTest, BodyOfLaterVersions) {
  const json flagged2 = {{"set", true}, {"infinite", false}, {"number", 2}};
  for (SlurmApiVersion version : SupportedSlurmApiVersions()) {
    if (version == SlurmApiVersion::kV38) continue;
    SCOPED_TRACE(SlurmApiVersionName(version));
    SlurmSubmitOptions options = Options();
    options.api_version = version;
    absl::StatusOr<std::string> text =
        SubmitBody(Spec(), options, {{"TESSERA_TASK_ID", "j1-w-0-a1"}, {"A", "2"}});
    ASSERT_TRUE(text.ok()) << text.status();
    const json body = json::parse(*text);
    EXPECT_FALSE(body.contains("script"));  // deprecated at the top level from v0.0.39
    const json& job = body["job"];
    EXPECT_EQ(job["script"], *BatchScript(Spec()));
    EXPECT_EQ(job["name"], "j1-w-0-a1");
    EXPECT_EQ(job["comment"], "tessera:j1-w-0-a1");
    EXPECT_EQ(job["required_nodes"], json::array({"node3"}));
    EXPECT_EQ(job["nodes"], "1");
    EXPECT_FALSE(job.contains("nodelist"));
    EXPECT_EQ(job["partition"], "gpu");
    EXPECT_EQ(job["tres_per_node"], "gres/gpu:2");
    EXPECT_FALSE(job.contains("gres"));
    EXPECT_EQ(job["time_limit"], flagged2);
    EXPECT_EQ(job["cpus_per_task"], 2);
    EXPECT_EQ(job["memory_per_node"],
              (json{{"set", true}, {"infinite", false}, {"number", 3 * 1024 + 1}}));
    EXPECT_EQ(job["current_working_directory"], "/tmp");
    EXPECT_EQ(job["standard_output"], "/shared/logs/tessera-j1-w-0-a1.stdout.log");
    EXPECT_EQ(job["requeue"], false);
    EXPECT_EQ(job["environment"],
              json::array({"A=2", "LANG=C.UTF-8", "PATH=/opt/bin", "TESSERA_TASK_ID=j1-w-0-a1"}));
  }
}

TEST(SlurmSubmitTest, OptionalFieldsOfLaterVersions) {
  TaskLaunchSpec spec = Spec();
  spec.placement.gpus.clear();
  spec.time_limit.reset();
  spec.cpu = 0;
  spec.memory = 0;
  SlurmSubmitOptions options = Options();
  options.api_version = SlurmApiVersion::kV43;
  const json job = json::parse(*SubmitBody(spec, options, {}))["job"];
  for (const char* field :
       {"tres_per_node", "gres", "time_limit", "cpus_per_task", "memory_per_node"}) {
    EXPECT_FALSE(job.contains(field)) << field;
  }
  // A value with '=' stays one "NAME=value" entry; Slurm splits at the first '='.
  spec.env = {{"OPTS", "a=b"}};
  EXPECT_EQ(json::parse(*SubmitBody(spec, options, {}))["job"]["environment"],
            json::array({"LANG=C.UTF-8", "OPTS=a=b", "PATH=/usr/bin:/bin"}));
}

TEST(SlurmSubmitTest, RequestsRoundUpToSlurmsUnits) {
  EXPECT_EQ(CpusPerTask(1), 1);
  EXPECT_EQ(CpusPerTask(1000), 1);
  EXPECT_EQ(CpusPerTask(1001), 2);
  EXPECT_EQ(MemoryMebibytes(1), 1);
  EXPECT_EQ(MemoryMebibytes(int64_t{1} << 20), 1);
  EXPECT_EQ(MemoryMebibytes((int64_t{1} << 20) + 1), 2);
}

TEST(SlurmSubmitTest, TimeLimits) {
  EXPECT_EQ(TimeLimitMinutes(Duration(0)), 1);
  EXPECT_EQ(TimeLimitMinutes(Duration(-5)), 1);
  EXPECT_EQ(TimeLimitMinutes(Duration(1)), 1);
  EXPECT_EQ(TimeLimitMinutes(Duration(60'000)), 1);
  EXPECT_EQ(TimeLimitMinutes(Duration(60'001)), 2);
  EXPECT_EQ(TimeLimitMinutes(std::chrono::hours(24)), 1440);
  EXPECT_EQ(TimeLimitMinutes(Duration::max()), 2147483647);
}

TEST(SlurmSubmitTest, RefusedSpecs) {
  struct Case {
    std::function<void(TaskLaunchSpec&)> change;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](auto& s) { s.command.clear(); }, "command: empty"},
      {[](auto& s) { s.command = {""}; }, "command: empty"},
      {[](auto& s) { s.launch_id = "a/b"; }, "launch_id: \"a/b\" is not [A-Za-z0-9._-]+"},
      {[](auto& s) { s.launch_id = ""; }, "launch_id"},
      {[](auto& s) { s.placement.node = ""; }, "placement.node: empty"},
      {[](auto& s) {
         s.args = {"a", std::string("b\0c", 3)};
       },
       "args[1]: contains a NUL byte"},
      {[](auto& s) { s.env["A=B"] = "1"; }, "env: \"A=B\" is not a variable name"},
      {[](auto& s) { s.env[""] = "1"; }, "env: \"\" is not a variable name"},
      {[](auto& s) { s.env["X"] = std::string("\0", 1); }, "env.X: contains a NUL byte"},
  };
  for (const Case& c : cases) {
    TaskLaunchSpec spec = Spec();
    c.change(spec);
    absl::StatusOr<std::string> body = SubmitBody(spec, Options(), {});
    ASSERT_FALSE(body.ok()) << c.error;
    EXPECT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(body.status().message(), HasSubstr(c.error));
  }
}

TEST(SlurmSubmitTest, Replies) {
  EXPECT_EQ(*ParseSubmitReply(200, R"({"errors":[],"job_id":12,"step_id":"BATCH"})"), 12);
  absl::StatusOr<int64_t> refused =
      ParseSubmitReply(500, R"({"errors":[{"error":"Requested node configuration is not available",
                         "error_number":2014}],"job_id":0})");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "Slurm refused the job: Requested node configuration is not available");
  EXPECT_EQ(ParseSubmitReply(500, "").status().message(), "Slurm refused the job: HTTP 500");
  EXPECT_EQ(ParseSubmitReply(200, "[]").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(ParseSubmitReply(200, R"({"job_id":"12"})").status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(ParseSubmitReply(200, R"({"errors":[]})").status().message(),
            "slurm submit: the reply has no job_id");
}

TEST(SlurmSubmitTest, LogPaths) {
  EXPECT_EQ(LogPath("/tmp", "a-1", LogStream::kStdout), "/tmp/tessera-a-1.stdout.log");
  EXPECT_EQ(LogPath("/tmp//", "a-1", LogStream::kStderr), "/tmp/tessera-a-1.stderr.log");
  EXPECT_EQ(LogPath("/", "a", LogStream::kStderr), "/tessera-a.stderr.log");
}

}  // namespace
}  // namespace tessera::agent
