#include "cli/replay/trace_jobs.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/alibaba/alibaba_trace.h"
#include "sim/swf/swf_trace.h"
#include "sim/swf/swf_workload.h"
#include "sim/swf/test_traces.h"
#include "spec/jobspec.h"

namespace tessera::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

constexpr std::string_view kPods =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "pod-b,6000,12288,1,460,,LS,Running,1000,5000,1010\n"
    "pod-a,12000,16384,2,1000,V100M32|G2,LS,Succeeded,100,3700,100\n"
    "pod-c,4000,4096,0,0,,BE,Pending,2000,2600,\n"
    "pod-d,4000,4096,0,0,,BE,Running,3000,,3000\n";

sim::alibaba::PodList Pods() {
  absl::StatusOr<sim::alibaba::PodList> pods =
      sim::alibaba::ParsePodList(kPods, "pods.csv", sim::alibaba::GpuSpecModels(kPods));
  EXPECT_TRUE(pods.ok()) << pods.status();
  return *pods;
}

ReplayOptions Options(std::string name) {
  ReplayOptions o;
  o.trace_name = std::move(name);
  return o;
}

TEST(TraceJobsTest, AlibabaPodsBecomeOneTaskJobsInArrivalOrder) {
  ReplayOptions o = Options("openb_pod_list_test");
  o.speedup = 10;
  o.queue = "replay";
  o.cluster = "openb";
  absl::StatusOr<ReplayPlan> plan = PlanAlibabaReplay(Pods(), o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rows, 4);
  EXPECT_THAT(plan->skipped, ElementsAre(Pair("unknown run time", 1)));
  ASSERT_EQ(plan->jobs.size(), 3u);
  EXPECT_EQ(plan->jobs[0].trace_id, "pod-a");
  EXPECT_EQ(plan->jobs[1].trace_id, "pod-b");
  EXPECT_EQ(plan->jobs[2].trace_id, "pod-c");
  EXPECT_EQ(plan->jobs[0].arrival, Duration(0));
  EXPECT_EQ(plan->jobs[1].arrival, std::chrono::seconds(90));  // (1000 - 100) / 10
  EXPECT_EQ(plan->jobs[2].arrival, std::chrono::seconds(190));

  const spec::JobDocument& a = plan->jobs[0].document;
  EXPECT_EQ(a.metadata.request_id, "replay-openb_pod_list_test-pod-a");
  EXPECT_EQ(a.spec.name, "openb-pod-list-test-pod-a");
  EXPECT_EQ(a.spec.labels.at("tessera.io/replay"), "openb_pod_list_test");
  EXPECT_EQ(a.spec.queue, "replay");
  EXPECT_EQ(a.spec.cluster_selector.at("tessera.io/cluster"), "openb");
  EXPECT_FALSE(a.spec.time_limit.has_value());
  EXPECT_EQ(a.spec.duration, std::chrono::seconds(360));  // (3700 - 100) / 10
  ASSERT_EQ(a.spec.tasks.size(), 1u);
  const TaskRequest& r = a.spec.tasks[0].request;
  EXPECT_EQ(a.spec.tasks[0].replicas, 1);
  EXPECT_EQ(r.cpu, 12000);
  EXPECT_EQ(r.memory, int64_t{16384} << 20);
  EXPECT_EQ(r.gpu_count, 2);
  EXPECT_EQ(r.gpu_milli, 1000);
  EXPECT_THAT(r.gpu_models, ElementsAre("G2", "V100M32"));
  ASSERT_EQ(r.tolerations.size(), 1u);
  EXPECT_EQ(r.tolerations[0].key, "tessera.io/simulated");
  EXPECT_TRUE(r.tolerations[0].exists);
  EXPECT_FALSE(r.tolerations[0].effect.has_value());

  const TaskRequest& b = plan->jobs[1].document.spec.tasks[0].request;
  EXPECT_EQ(b.gpu_count, 1);
  EXPECT_EQ(b.gpu_milli, 460);  // 0.46 of one GPU
  EXPECT_EQ(plan->jobs[1].document.spec.duration, std::chrono::milliseconds(399000));
  // Never scheduled: its life from creation to deletion.
  EXPECT_EQ(plan->jobs[2].document.spec.duration, std::chrono::seconds(60));
}

TEST(TraceJobsTest, TheDocumentsRenderAsTheContractSays) {
  absl::StatusOr<ReplayPlan> plan = PlanAlibabaReplay(Pods(), Options("t"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string yaml = spec::RenderJobYaml(plan->jobs[1].document);
  EXPECT_THAT(yaml, ::testing::HasSubstr("  tolerations:\n    - key: tessera.io/simulated\n"
                                         "      operator: Exists\n"));
  EXPECT_THAT(yaml, ::testing::HasSubstr("gpu: 0.46"));
  EXPECT_THAT(yaml, ::testing::HasSubstr("duration: 1h6m30s"));
  absl::StatusOr<spec::JobDocument> back = spec::ParseJobDocument(yaml);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(spec::RenderJobYaml(*back), yaml);
}

TEST(TraceJobsTest, SkipAndLimitSelectAWindowInArrivalOrder) {
  ReplayOptions o = Options("t");
  o.skip = 1;
  o.limit = 2;
  absl::StatusOr<ReplayPlan> plan = PlanAlibabaReplay(Pods(), o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rows, 2);
  ASSERT_EQ(plan->jobs.size(), 2u);
  EXPECT_EQ(plan->jobs[0].trace_id, "pod-b");
  EXPECT_EQ(plan->jobs[0].arrival, Duration(0));  // the window's first row is time zero
  EXPECT_EQ(plan->jobs[1].trace_id, "pod-c");
  EXPECT_EQ(plan->jobs[1].arrival, std::chrono::seconds(1000));
}

TEST(TraceJobsTest, RefusesBadOptionsAndPodListsWithoutTimes) {
  ReplayOptions o = Options("t");
  o.speedup = 0;
  EXPECT_EQ(PlanAlibabaReplay(Pods(), o).status().message(),
            "--speedup: must be a positive number, got 0");
  o = Options("t");
  o.limit = 0;
  EXPECT_EQ(PlanAlibabaReplay(Pods(), o).status().message(), "--limit: must be >= 1");
  absl::StatusOr<sim::alibaba::PodList> short_form = sim::alibaba::ParsePodList(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,0,0\n", "p.csv", {});
  ASSERT_TRUE(short_form.ok());
  EXPECT_FALSE(PlanAlibabaReplay(*short_form, Options("t")).ok());
}

constexpr std::string_view kSwf =
    "; MaxProcs: 128\n"
    "1   0 -1  100  64 -1 -1  64  3600 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "2  10 -1   -1   8 -1 -1   8   600 -1 5 1 1 -1 -1 -1 -1 -1\n"     // unknown run time
    "3  20 -1   50  -1 -1 -1  16    -1  2048 1 1 1 -1 -1 -1 -1 -1\n"  // requested procs, memory
    "4  30 -1   50   0 -1 -1  -1    -1 -1 1 1 1 -1 -1 -1 -1 -1\n"     // no processors
    "5  40 -1    0   1 -1 -1   1    60 -1 1 1 1 -1 -1 -1 -1 -1\n";    // zero run time (cancelled)

TEST(TraceJobsTest, SwfJobsBecomeRigidGangs) {
  absl::StatusOr<sim::swf::SwfTrace> trace = sim::swf::ParseSwfTrace(kSwf, "t.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ReplayOptions o = Options("NASA-iPSC-1993-3.1-cln");
  o.speedup = 2;
  absl::StatusOr<ReplayPlan> plan = PlanSwfReplay(*trace, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rows, 5);
  EXPECT_THAT(plan->skipped,
              ElementsAre(Pair("processors unknown", 1), Pair("run time <= 0 or unknown", 2)));
  ASSERT_EQ(plan->jobs.size(), 2u);

  const ReplayJob& first = plan->jobs[0];
  EXPECT_EQ(first.trace_id, "1");
  EXPECT_EQ(first.document.metadata.request_id, "replay-NASA-iPSC-1993-3.1-cln-1");
  EXPECT_EQ(first.document.spec.name, "nasa-ipsc-1993-3-1-cln-1");
  const JobSpec& s = first.document.spec;
  EXPECT_EQ(s.tasks[0].replicas, 64);
  EXPECT_EQ(s.min_available, 64);
  EXPECT_EQ(s.tasks[0].request.cpu, 1000);
  EXPECT_EQ(s.tasks[0].request.memory, 0);
  EXPECT_EQ(s.time_limit, std::chrono::seconds(1800));
  EXPECT_EQ(s.duration, std::chrono::seconds(50));

  const ReplayJob& third = plan->jobs[1];
  EXPECT_EQ(third.trace_id, "3");
  EXPECT_EQ(third.arrival, std::chrono::seconds(10));
  EXPECT_EQ(third.document.spec.tasks[0].replicas, 16);
  EXPECT_EQ(third.document.spec.tasks[0].request.memory, 2048 * 1024);
  // No requested time: the run time, scaled.
  EXPECT_EQ(third.document.spec.time_limit, std::chrono::seconds(25));
}

TEST(TraceJobsTest, ScaledTimesAreAtLeastOneMillisecond) {
  absl::StatusOr<sim::swf::SwfTrace> trace =
      sim::swf::ParseSwfTrace("1 0 -1 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n", "t.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ReplayOptions o = Options("t");
  o.speedup = 5000;  // 1 s -> 0.2 ms
  absl::StatusOr<ReplayPlan> plan = PlanSwfReplay(*trace, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->jobs.size(), 1u);
  EXPECT_EQ(plan->jobs[0].document.spec.duration, Duration(1));
  EXPECT_EQ(plan->jobs[0].document.spec.time_limit, Duration(1));
}

// A steady rate replaces the trace's arrivals: the k-th job replayed arrives at k / rate s (a
// skipped row takes no turn); the speed-up still scales run times and time limits.
TEST(TraceJobsTest, ARateGivesSteadyArrivals) {
  absl::StatusOr<sim::swf::SwfTrace> trace = sim::swf::ParseSwfTrace(kSwf, "t.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ReplayOptions o = Options("t");
  o.speedup = 10;
  o.rate = 3;
  absl::StatusOr<ReplayPlan> plan = PlanSwfReplay(*trace, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->jobs.size(), 2u);
  EXPECT_EQ(plan->jobs[0].trace_id, "1");
  EXPECT_EQ(plan->jobs[0].arrival, Duration(0));
  EXPECT_EQ(plan->jobs[1].trace_id, "3");  // row 2 was skipped: job 3 has the second turn
  EXPECT_EQ(plan->jobs[1].arrival, Duration(333));
  EXPECT_EQ(plan->jobs[0].document.spec.duration, std::chrono::seconds(10));
  EXPECT_EQ(plan->jobs[0].document.spec.time_limit, std::chrono::seconds(360));

  for (double bad : {0.0, -2.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    o.rate = bad;
    EXPECT_THAT(std::string(PlanSwfReplay(*trace, o).status().message()),
                ::testing::StartsWith("--rate: must be a positive number of jobs per second"))
        << bad;
  }
}

// `tessera sim --swf` and `tessera replay --swf` map a row to the same job: the requested
// processors (not the allocated ones), the requested memory per processor, and a time limit
// raised to the run time.
TEST(TraceJobsTest, SwfRowIsTheSameJobInReplayAndSimulation) {
  absl::StatusOr<sim::swf::SwfTrace> trace = sim::swf::ParseSwfTrace(
      "; MaxProcs: 64\n"
      // id sub wait run alloc cpu mem rproc rtime rmem st usr grp exe q part prec think
      "   9   0   -1 600   16  -1  -1    12   300 2048  1   1   1  -1 -1  -1   -1    -1\n",
      "t.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<ReplayPlan> plan = PlanSwfReplay(*trace, Options("t"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<sim::swf::SwfWorkload> sim = sim::swf::BuildSwfWorkload(*trace, "t.swf", {});
  ASSERT_TRUE(sim.ok()) << sim.status();
  ASSERT_EQ(plan->jobs.size(), 1u);
  ASSERT_EQ(sim->scenario.jobs.size(), 1u);
  const JobSpec& replayed = plan->jobs[0].document.spec;
  const JobSpec& simulated = sim->scenario.jobs[0].spec;
  ASSERT_EQ(replayed.tasks.size(), 1u);
  ASSERT_EQ(simulated.tasks.size(), 1u);
  for (const JobSpec* spec : {&replayed, &simulated}) {
    EXPECT_EQ(spec->tasks[0].name, "proc");
    EXPECT_EQ(spec->tasks[0].replicas, 12);  // requested, not the 16 allocated
    EXPECT_EQ(spec->GangSize(), 12);
    EXPECT_EQ(spec->tasks[0].request.cpu, 1000);
    EXPECT_EQ(spec->tasks[0].request.memory, 2048 * 1024);
    EXPECT_EQ(spec->duration, std::chrono::seconds(600));
    EXPECT_EQ(spec->time_limit, std::chrono::seconds(600));  // 300 s requested, raised to the run
  }
  EXPECT_EQ(sim->stats.time_limit_raised, 1);
}

TEST(TraceJobsTest, Names) {
  EXPECT_EQ(TraceNameFromPath("/a/b/NASA-iPSC-1993-3.1-cln.swf.gz"), "NASA-iPSC-1993-3.1-cln");
  EXPECT_EQ(TraceNameFromPath("openb_pod_list_default.csv"), "openb_pod_list_default");
  EXPECT_EQ(DnsName("NASA_iPSC..1"), "nasa-ipsc-1");
  EXPECT_EQ(DnsName("--x--"), "x");
  EXPECT_EQ(DnsName("___"), "replay");
  EXPECT_EQ(DnsName(std::string(300, 'a')).size(), 253u);
}

TEST(TraceJobsRealTest, NasaLogMapsEveryJob) {
  const std::optional<std::string> path =
      sim::swf::testing::FindTraceFile(sim::swf::testing::kNasaLog);
  if (!path) GTEST_SKIP() << "NASA iPSC log not found (set TESSERA_TRACE_DIR)";
  absl::StatusOr<sim::swf::SwfTrace> trace = sim::swf::LoadSwfTrace(*path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<ReplayPlan> plan = PlanSwfReplay(*trace, Options(TraceNameFromPath(*path)));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rows, 18239);
  // The jobs `tessera sim --swf` keeps of this log (docs/results/swf-nasa-ipsc.md).
  EXPECT_THAT(plan->skipped, ElementsAre(Pair("run time <= 0 or unknown", 173)));
  ASSERT_EQ(plan->jobs.size(), 18066u);
  const JobSpec& first = plan->jobs.front().document.spec;
  EXPECT_EQ(first.tasks[0].replicas, 128);
  EXPECT_EQ(first.duration, std::chrono::seconds(1451));
  EXPECT_EQ(first.time_limit, std::chrono::seconds(1451));  // no requested times: the run time
  EXPECT_EQ(plan->jobs.back().arrival, std::chrono::seconds(7948936));
}

TEST(TraceJobsRealTest, AlibabaDefaultPodList) {
  const std::optional<std::string> path =
      sim::swf::testing::FindTraceFile("alibaba-gpu-v2023/openb_pod_list_default.csv");
  if (!path) GTEST_SKIP() << "Alibaba pod list not found (set TESSERA_TRACE_DIR)";
  absl::StatusOr<std::string> text = sim::alibaba::ReadFileToString(*path);
  ASSERT_TRUE(text.ok());
  absl::StatusOr<sim::alibaba::PodList> pods =
      sim::alibaba::ParsePodList(*text, *path, sim::alibaba::GpuSpecModels(*text));
  ASSERT_TRUE(pods.ok()) << pods.status();
  absl::StatusOr<ReplayPlan> plan = PlanAlibabaReplay(*pods, Options("openb_pod_list_default"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rows, 8152);
  const ReplayJob& first = plan->jobs.front();
  EXPECT_EQ(first.trace_id, "openb-pod-0000");  // created at 0
  EXPECT_EQ(first.document.spec.tasks[0].request.cpu, 12000);
  EXPECT_EQ(first.document.spec.duration, std::chrono::seconds(12537496));
  int64_t skipped = 0;
  for (const auto& [reason, n] : plan->skipped) skipped += n;
  EXPECT_EQ(static_cast<int64_t>(plan->jobs.size()) + skipped, 8152);
}

}  // namespace
}  // namespace tessera::cli
