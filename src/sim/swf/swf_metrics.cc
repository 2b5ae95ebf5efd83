#include "sim/swf/swf_metrics.h"

#include <algorithm>

#include "fmt/format.h"

namespace tessera::sim::swf {
namespace {

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

SwfMetrics ComputeSwfMetrics(std::span<const JobTimes> jobs, int64_t total_processors,
                             Duration slowdown_bound) {
  SwfMetrics m;
  m.jobs = static_cast<int64_t>(jobs.size());
  if (jobs.empty()) return m;
  const double bound = Seconds(slowdown_bound);
  double wait_sum = 0;
  double slowdown_sum = 0;
  double work = 0;  // processor-seconds of completed jobs
  int64_t started = 0;
  TimePoint first_submit = jobs.front().submit;
  std::optional<TimePoint> last_end;
  for (const JobTimes& j : jobs) {
    first_submit = std::min(first_submit, j.submit);
    if (!j.start) {
      ++m.never_started;
      continue;
    }
    ++started;
    const double wait = Seconds(*j.start - j.submit);
    wait_sum += wait;
    m.max_wait_s = std::max(m.max_wait_s, wait);
    if (!j.end) {
      ++m.unfinished;
      continue;
    }
    ++m.completed;
    const double run = Seconds(*j.end - *j.start);
    slowdown_sum += std::max(1.0, (wait + run) / std::max(run, bound));
    work += run * static_cast<double>(j.processors);
    last_end = last_end ? std::max(*last_end, *j.end) : *j.end;
  }
  if (started > 0) m.mean_wait_s = wait_sum / static_cast<double>(started);
  if (m.completed > 0) m.mean_bounded_slowdown = slowdown_sum / static_cast<double>(m.completed);
  if (last_end) m.makespan_s = Seconds(*last_end - first_submit);
  if (m.makespan_s > 0 && total_processors > 0) {
    m.utilisation = work / (static_cast<double>(total_processors) * m.makespan_s);
  }
  return m;
}

absl::StatusOr<std::vector<JobTimes>> JobTimesOf(const RunReport& report,
                                                 const SwfWorkload& workload) {
  const std::vector<ScenarioJob>& jobs = workload.scenario.jobs;
  if (report.jobs.size() != jobs.size() || workload.processors.size() != jobs.size()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: the run reports {} jobs, the workload has {}", workload.scenario.file,
                    report.jobs.size(), jobs.size()));
  }
  std::vector<JobTimes> out;
  out.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobOutcome& o = report.jobs[i];
    if (o.name != jobs[i].spec.name) {
      return absl::InvalidArgumentError(fmt::format("{}: job {} of the run is '{}', not '{}'",
                                                    workload.scenario.file, i, o.name,
                                                    jobs[i].spec.name));
    }
    // Only a job that ran to its end counts as completed (a refused job has an end, no start).
    const bool completed = o.first_start && o.end && o.phase == "Succeeded";
    out.push_back(JobTimes{.submit = o.submit,
                           .start = o.first_start,
                           .end = completed ? o.end : std::nullopt,
                           .processors = workload.processors[i]});
  }
  return out;
}

}  // namespace tessera::sim::swf
