// The parity test: a scenario run through the scenario runner and through the server's
// JobManager on simulated time takes the same decisions (decision_log.h), job by job.
//
// Each scenario below is parsed once, run by RunScenario (its timeline and report give one
// log), then replayed through the server wiring (server_replay.h) up to the runner's last
// instant (the other log); the test prints both side by side where they differ.
//
// Left out, and why (each a difference between the wirings, named in docs/scenarios.md):
//   * refusal: the runner fails a job that fits no node even on an empty fleet ("Refused"); the
//     server keeps it Pending (JobManager turns SchedulingPolicy::refuse_unfit off, since its
//     clusters join and change): refused, gang-never-fits-refused, cluster-affinity-required,
//     cluster-anti-affinity;
//   * elastic gangs (min_available below the replicas): the runner ends the whole job
//     `duration` after its gang started; on the server each task runs `duration` from its own
//     start, so the tasks placed later keep the job running: gang-min-available,
//     gang-within-one-cluster, placement-checks-see-tasks-placed-now.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/scenario/scenario_parser.h"
#include "sim/scenario/scenario_runner.h"
#include "tests/parity/decision_log.h"
#include "tests/parity/server_replay.h"

namespace tessera::parity {
namespace {

namespace fs = std::filesystem;

// Scenario files of tests/scenarios: every one the server wiring can drive and agrees on.
const char* const kScenarios[] = {
    "backfill-conservative-reserves-first-n.yaml",
    "backfill-easy-does-not-delay-reservation.yaml",
    "backfill-easy-reserves-only-first.yaml",
    "backfill-large-job-not-starved.yaml",
    "backfill-no-time-limit-outside-reservation.yaml",
    "backfill-none-lets-small-jobs-pass.yaml",
    "cancel.yaml",
    "cluster-affinity-preferred.yaml",
    "cluster-cost-tier.yaml",
    "cluster-pin-reason-is-the-real-blocker.yaml",
    "cluster-selector-pins.yaml",
    "clusters-and-pools.yaml",
    "cordon.yaml",
    "drain-with-grace.yaml",
    "fairshare-equal-queues.yaml",
    "fairshare-hierarchical.yaml",
    "fairshare-none-name-order.yaml",
    "fairshare-usage-history.yaml",
    "fairshare-weighted-queues.yaml",
    "fgd-without-jobs.yaml",
    "gang-split-across-clusters-waits.yaml",
    "gang-timeout-requeues-with-backoff.yaml",
    "gang-two-large-gangs-with-quotas.yaml",
    "gang-waiting-holds-nothing.yaml",
    "gpu-model-mismatch.yaml",
    "gpu-shares-never-overcommit.yaml",
    "gpu-unhealthy.yaml",
    "invariants-mixed-workload.yaml",
    "long-times-do-not-overflow.yaml",
    "node-down-requeues-per-restart-policy.yaml",
    "node-selector.yaml",
    "outcome-fail-max-restarts.yaml",
    "preempt-gang-within-one-cluster.yaml",
    "preempt-lower-priority-at-queue-quota.yaml",
    "preempt-minimal-victims.yaml",
    "preempt-never-non-preemptible.yaml",
    "preempt-no-loop-between-guaranteed-queues.yaml",
    "preempt-no-loop-equal-priority.yaml",
    "preempt-nothing-when-insufficient.yaml",
    "preempt-on-preemption-cancel.yaml",
    "preempt-other-queue-only-by-reclaim.yaml",
    "preempt-rate-limit.yaml",
    "preempt-reclaim-capacity-while-borrowing-cpu.yaml",
    "preempt-reclaimed-capacity-goes-to-higher-priority.yaml",
    "preempt-termination-grace.yaml",
    "preempt-waits-for-min-runtime.yaml",
    "preempt-whole-gang.yaml",
    "preempt-youngest-victim-first.yaml",
    "priority-aging-admits-older-first.yaml",
    "priority-aging-without-quota.yaml",
    "priority-inversion-preempts-low.yaml",
    "priority-inversion-waits-without-preemption.yaml",
    "priority-order.yaml",
    "profile-from-file.yaml",
    "profile-inline.yaml",
    "queue-best-effort-fifo-skips.yaml",
    "queue-borrow-unused-quota.yaml",
    "queue-borrowing-limit.yaml",
    "queue-invariants-mixed-workload.yaml",
    "queue-lending-limit.yaml",
    "queue-no-reclaim-above-guarantee.yaml",
    "queue-parent-caps-subtree.yaml",
    "queue-per-model-quota.yaml",
    "queue-priority-admits-first.yaml",
    "queue-reclaim-borrowed-quota.yaml",
    "queue-reclaim-gpu-while-borrowing-cpu.yaml",
    "queue-reclaim-within-parent.yaml",
    "queue-refused-at-submission.yaml",
    "queue-strict-fifo-blocks.yaml",
    "remove-node.yaml",
    "taint-noexecute-evicts.yaml",
    "taint-noschedule.yaml",
    "taint-prefer-noschedule.yaml",
    "time-limit-during-grace.yaml",
    "time-limit.yaml",
    "two-large-gangs-do-not-deadlock.yaml",
    "whole-gpu-needs-free-devices.yaml",
};

fs::path SourceDir() {
  const char* dir = std::getenv("TESSERA_SOURCE_DIR");
  return dir != nullptr ? fs::path(dir) : fs::current_path();
}

class ScenarioParityTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ScenarioParityTest, ServerTakesTheScenarioRunnersDecisions) {
  const fs::path file = SourceDir() / "tests" / "scenarios" / GetParam();
  absl::StatusOr<sim::Scenario> scenario = sim::ParseScenarioFile(file.string());
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  // Random tie-breaks draw from one stream that every placement attempt advances, and the
  // server tries pending jobs at more cycles than the runner (after each binding and start):
  // among equally good nodes both take the first, so that the stream cannot tell them apart.
  scenario->config.profile.tie_break = TieBreak::kFirst;

  std::ostringstream timeline;
  absl::StatusOr<sim::RunReport> report = sim::RunScenario(*scenario, {}, timeline);
  ASSERT_TRUE(report.ok()) << report.status();
  const DecisionLogs expected = FromTimeline(timeline.str(), *report);
  ASSERT_EQ(expected.size(), scenario->jobs.size());
  for (const auto& [job, log] : expected) ASSERT_FALSE(log.empty()) << job << " decided nothing";

  const fs::path dir =
      fs::temp_directory_path() /
      fmt::format("scenario_parity_{}_{}", ::getpid(), fs::path(GetParam()).stem().string());
  fs::remove_all(dir);
  absl::StatusOr<DecisionLogs> served = ReplayThroughServer(*scenario, (dir / "store").string(),
                                                           report->end);
  fs::remove_all(dir);
  ASSERT_TRUE(served.ok()) << served.status();

  const std::string differences = Compare(expected, *served);
  EXPECT_TRUE(differences.empty()) << "the two wirings decided differently:\n"
                                   << differences << "\nthe scenario's timeline:\n"
                                   << timeline.str();
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioParityTest, ::testing::ValuesIn(kScenarios),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = fs::path(info.param).stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace tessera::parity
