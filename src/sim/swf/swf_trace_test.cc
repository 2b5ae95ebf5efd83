#include "sim/swf/swf_trace.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/swf/test_traces.h"

namespace tessera::sim::swf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr std::string_view kSmall =
    "; Version: 2.2\n"
    "; Computer: Test Machine\n"
    "; UnixStartTime: 749458803\n"
    "; MaxNodes: 128\n"
    "; MaxProcs: 256\n"
    "; Queues: two queues, see below\n"
    "; Queue:  0  interactive    \n"
    "; Queue:  1  batch long jobs\n"
    "; Partition: 3 grid.ici.ro\n"
    "; Note: submit times are start times\n"
    ";       (a continuation line: ignored)\n"
    ";\n"
    "    1        0     -1   1451  128     -1    -1   -1     -1    -1 -1   1   1  -1 -1 -1 -1 -1\n"
    "\n"
    "2\t1460 5 3726 -1 12.5 1024 64 7200 2048 1 2 1 7 1 3 1 60\r\n";

TEST(SwfTraceTest, ParsesHeaderAndJobs) {
  absl::StatusOr<SwfTrace> trace = ParseSwfTrace(kSmall, "small.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const SwfHeader& h = trace->header;
  EXPECT_EQ(h.version, "2.2");
  EXPECT_EQ(h.computer, "Test Machine");
  EXPECT_EQ(h.unix_start_time, 749458803);
  EXPECT_EQ(h.max_nodes, 128);
  EXPECT_EQ(h.max_procs, 256);
  EXPECT_FALSE(h.max_jobs.has_value());
  EXPECT_EQ(h.queues, "two queues, see below");
  EXPECT_THAT(h.queue_names, ElementsAre(Pair(0, "interactive"), Pair(1, "batch long jobs")));
  EXPECT_THAT(h.partition_names, ElementsAre(Pair(3, "grid.ici.ro")));
  EXPECT_EQ(h.fields.size(), 10u);

  ASSERT_EQ(trace->jobs.size(), 2u);
  const SwfJob& a = trace->jobs[0];
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.submit_time, 0);
  EXPECT_EQ(a.wait_time, kSwfUnknown);
  EXPECT_EQ(a.run_time, 1451);
  EXPECT_EQ(a.allocated_processors, 128);
  EXPECT_EQ(a.requested_time, kSwfUnknown);
  EXPECT_EQ(a.user, 1);
  EXPECT_EQ(a.line, 13);

  const SwfJob& b = trace->jobs[1];
  EXPECT_EQ(b.id, 2);
  EXPECT_EQ(b.submit_time, 1460);
  EXPECT_EQ(b.wait_time, 5);
  EXPECT_EQ(b.run_time, 3726);
  EXPECT_EQ(b.allocated_processors, kSwfUnknown);
  EXPECT_DOUBLE_EQ(b.average_cpu_time, 12.5);
  EXPECT_EQ(b.used_memory, 1024);
  EXPECT_EQ(b.requested_processors, 64);
  EXPECT_EQ(b.requested_time, 7200);
  EXPECT_EQ(b.requested_memory, 2048);
  EXPECT_EQ(b.status, 1);
  EXPECT_EQ(b.user, 2);
  EXPECT_EQ(b.group, 1);
  EXPECT_EQ(b.executable, 7);
  EXPECT_EQ(b.queue, 1);
  EXPECT_EQ(b.partition, 3);
  EXPECT_EQ(b.preceding_job, 1);
  EXPECT_EQ(b.think_time, 60);
  EXPECT_EQ(b.line, 15);
}

constexpr std::string_view kGoodLine = "1 0 -1 10 1 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n";

struct BadCase {
  std::string name;
  std::string text;
  std::string error;
};

class SwfTraceErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(SwfTraceErrorTest, NamesLineAndField) {
  absl::StatusOr<SwfTrace> trace = ParseSwfTrace(GetParam().text, "t.swf");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(trace.status().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SwfTraceErrorTest,
    ::testing::Values(
        BadCase{"Empty", "", "t.swf: no jobs in the file"},
        BadCase{"HeaderOnly", "; MaxNodes: 4\n", "t.swf: no jobs in the file"},
        BadCase{"TooFewFields", std::string(kGoodLine) + "2 0 -1 10\n",
                "t.swf:2: expected 18 fields, got 4"},
        BadCase{"TooManyFields", "1 0 -1 10 1 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1 99\n",
                "t.swf:1: more than 18 fields (extra '99')"},
        BadCase{"NotAnInteger", "1 0 -1 1x0 1 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n",
                "t.swf:1: run_time: not an integer: '1x0'"},
        BadCase{"DecimalOutsideField6", "1 0 -1 10 1.5 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n",
                "t.swf:1: allocated_processors: not an integer: '1.5'"},
        BadCase{"BelowMinusOne", "1 0 -1 10 1 -1 -1 -1 -7 -1 -1 1 1 -1 -1 -1 -1 -1\n",
                "t.swf:1: requested_time: must be >= 0 or -1 (unknown), got -7"},
        BadCase{"NegativeCpuTime", "1 0 -1 10 1 -0.5 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n",
                "t.swf:1: average_cpu_time: must be >= 0 or -1 (unknown), got -0.5"},
        BadCase{"BadCpuTime", "1 0 -1 10 1 nan -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n",
                "t.swf:1: average_cpu_time: not a number: 'nan'"},
        BadCase{"UnknownId", "-1 0 -1 10 1 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n",
                "t.swf:1: id: must be known (not -1)"},
        BadCase{"Overflow", "1 99999999999999999999 -1 10 1 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n",
                "t.swf:1: submit_time: not an integer: '99999999999999999999'"},
        BadCase{"BadHeaderNumber", "; MaxProcs: many\n" + std::string(kGoodLine),
                "t.swf:1: MaxProcs: not an integer: 'many'"},
        BadCase{"BadQueueLine", "; Queue: batch\n" + std::string(kGoodLine),
                "t.swf:1: Queue: expected '<number> <name>', got 'batch'"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(SwfTraceTest, LimitsLineLengthAndJobCount) {
  SwfLimits limits;
  limits.max_line_bytes = 60;
  absl::StatusOr<SwfTrace> trace =
      ParseSwfTrace(std::string(kGoodLine) + "; " + std::string(100, 'x') + "\n", "t.swf", limits);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(), "t.swf:2: line longer than 60 bytes");

  limits = SwfLimits{};
  limits.max_jobs = 2;
  trace = ParseSwfTrace(std::string(kGoodLine) + std::string(kGoodLine) + std::string(kGoodLine),
                        "t.swf", limits);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(), "t.swf:3: more than 2 jobs");
}

TEST(SwfTraceTest, ProseCommentsWithColonsAreNotFields) {
  absl::StatusOr<SwfTrace> trace =
      ParseSwfTrace("; the filter used: user=3\n" + std::string(kGoodLine), "t.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->header.fields.empty());
}

class SwfFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteGzip(const std::string& name, std::string_view text) {
    const std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    EXPECT_EQ(gzclose(f), Z_OK);
    return path;
  }
  std::string WritePlain(const std::string& name, std::string_view text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(SwfFileTest, ReadsPlainAndGzipAlike) {
  for (const std::string& path :
       {WritePlain("plain.swf", kSmall), WriteGzip("packed.swf.gz", kSmall),
        WriteGzip("misnamed.swf", kSmall)}) {
    absl::StatusOr<SwfTrace> trace = LoadSwfTrace(path);
    ASSERT_TRUE(trace.ok()) << path << ": " << trace.status();
    EXPECT_EQ(trace->jobs.size(), 2u) << path;
    EXPECT_EQ(trace->header.max_nodes, 128) << path;
  }
}

TEST_F(SwfFileTest, ErrorsNameThePath) {
  const std::string bad = WriteGzip("bad.swf.gz", "1 2 3\n");
  absl::StatusOr<SwfTrace> trace = LoadSwfTrace(bad);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(), bad + ":1: expected 18 fields, got 3");

  const std::string missing = (dir_ / "missing.swf").string();
  trace = LoadSwfTrace(missing);
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(trace.status().message(), HasSubstr(missing));

  trace = LoadSwfTrace(dir_.string());
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(trace.status().message(), HasSubstr("is a directory"));
}

TEST_F(SwfFileTest, RefusesOversizedAndTruncatedInput) {
  const std::string big =
      WriteGzip("big.swf.gz", std::string(100000, '\n') + std::string(kGoodLine));
  SwfLimits limits;
  limits.max_bytes = 1000;
  absl::StatusOr<SwfTrace> trace = LoadSwfTrace(big, limits);
  ASSERT_FALSE(trace.ok());
  EXPECT_THAT(trace.status().message(), HasSubstr("larger than 1000 bytes (decompressed)"));

  std::string packed;
  {
    std::ifstream in(big, std::ios::binary);
    packed.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string truncated = WritePlain("truncated.swf.gz", packed.substr(0, packed.size() / 2));
  trace = LoadSwfTrace(truncated);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(trace.status().message(), HasSubstr(truncated));
}

// The real logs (shared/traces/pwa-swf), when present.
TEST(SwfRealTraceTest, NasaIpsc1993) {
  const std::optional<std::string> path = testing::FindTraceFile(testing::kNasaLog);
  if (!path) GTEST_SKIP() << testing::kNasaLog << " not found (set TESSERA_TRACE_DIR)";
  absl::StatusOr<SwfTrace> trace = LoadSwfTrace(*path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->jobs.size(), 18239u);
  EXPECT_EQ(trace->header.computer, "Intel iPSC/860");
  EXPECT_EQ(trace->header.max_nodes, 128);
  EXPECT_EQ(trace->header.max_procs, 128);
  EXPECT_EQ(trace->header.unix_start_time, 749458803);
  EXPECT_EQ(trace->header.max_jobs, 42264);
  EXPECT_THAT(trace->header.queue_names, ElementsAre(Pair(0, "interactive"), Pair(1, "batch")));
  const SwfJob& first = trace->jobs.front();
  EXPECT_EQ(first.id, 1);
  EXPECT_EQ(first.submit_time, 0);
  EXPECT_EQ(first.wait_time, kSwfUnknown);
  EXPECT_EQ(first.run_time, 1451);
  EXPECT_EQ(first.allocated_processors, 128);
  EXPECT_EQ(first.requested_time, kSwfUnknown);  // the log has no estimates
  EXPECT_EQ(first.user, 1);
  EXPECT_EQ(first.group, 1);
  const SwfJob& last = trace->jobs.back();
  EXPECT_EQ(last.id, 42264);
  EXPECT_EQ(last.submit_time, 7948936);
  EXPECT_EQ(last.run_time, 86);
  EXPECT_EQ(last.allocated_processors, 128);
  for (const SwfJob& job : trace->jobs) {
    ASSERT_GT(job.allocated_processors, 0) << job.id;
    ASSERT_LE(job.allocated_processors, 128) << job.id;
  }
}

TEST(SwfRealTraceTest, Lcg2005) {
  const std::optional<std::string> path = testing::FindTraceFile(testing::kLcgLog);
  if (!path) GTEST_SKIP() << testing::kLcgLog << " not found (set TESSERA_TRACE_DIR)";
  absl::StatusOr<SwfTrace> trace = LoadSwfTrace(*path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->jobs.size(), 188041u);
  EXPECT_EQ(trace->header.installation, "LCG grid");
  EXPECT_FALSE(trace->header.max_nodes.has_value());
  EXPECT_EQ(trace->header.max_procs, 24515);
  EXPECT_EQ(trace->header.unix_start_time, 1132444805);
  EXPECT_EQ(trace->header.max_partitions, 170);
  EXPECT_EQ(trace->header.partition_names.size(), 170u);
  EXPECT_EQ(trace->header.partition_names.at(1), "grid.ici.ro");
  EXPECT_EQ(trace->header.partition_names.at(170), "lcg-lrz-ce.lrz-muenchen.de");
  const SwfJob& first = trace->jobs.front();
  EXPECT_EQ(first.id, 1);
  EXPECT_EQ(first.submit_time, 0);
  EXPECT_EQ(first.run_time, 83);
  EXPECT_EQ(first.allocated_processors, 1);
  EXPECT_EQ(first.requested_time, 1200);
  EXPECT_EQ(first.partition, 1);
  const SwfJob& last = trace->jobs.back();
  EXPECT_EQ(last.id, 188041);
  EXPECT_EQ(last.submit_time, 950392);
  EXPECT_EQ(last.run_time, 11499);
  EXPECT_EQ(last.requested_time, 14400);
  EXPECT_EQ(last.user, 190);
  EXPECT_EQ(last.partition, 76);
}

}  // namespace
}  // namespace tessera::sim::swf
