#include "cli/replay_command.h"

#include <cctype>
#include <cmath>
#include <algorithm>
#include <map>
#include <span>
#include <string>

#include "cli/client/api_error.h"
#include "cli/exit_status.h"
#include "cli/job_batch.h"
#include "cli/job_flags.h"
#include "cli/job_view.h"
#include "cli/replay/trace_jobs.h"
#include "cli/verb_common.h"
#include "core/duration.h"
#include "fmt/format.h"
#include "sim/alibaba/alibaba_trace.h"
#include "sim/swf/swf_trace.h"
#include "spec/jobspec.h"

namespace tessera::cli {
namespace {

constexpr int64_t kProgressEveryJobs = 100;
constexpr Duration kProgressEvery = std::chrono::seconds(10);
constexpr int kMaxRateLimitRetries = 10;
constexpr Duration kDefaultRetryAfter = std::chrono::seconds(1);
constexpr size_t kMaxReasonLength = 100;

struct ReplayFlags {
  std::string pods;
  std::string swf;
  std::string cluster;
  double speedup = 1;
  std::optional<double> rate;  // jobs per second; nullopt: the trace's arrival times
  std::optional<int64_t> limit;
  int64_t skip = 0;
  std::string queue;
  bool dry_run = false;
  int64_t batch = 1;  // jobs per request; above 1: POST /api/v1/jobs:batch
};

struct Tally {
  int64_t submitted = 0;
  int64_t existed = 0;  // of submitted: an earlier run's job (same request id)
  int64_t refused = 0;
  int64_t rate_limited = 0;                 // retries after 429
  std::map<std::string, int64_t> refusals;  // reason -> jobs
};

// A refusal's reason with the job-specific numbers taken out, so that alike refusals count
// together: "QuotaExceeded: 12 > 8" -> "RESOURCE_EXHAUSTED: QuotaExceeded: N > N".
std::string RefusalReason(const absl::Status& status) {
  std::string text = absl::StatusCodeToString(status.code()) + ": " + ApiErrorMessage(status);
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < kMaxReasonLength; ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
      out += 'N';
    } else {
      out += text[i];
    }
  }
  return out;
}

absl::StatusOr<ReplayPlan> LoadPlan(const ReplayFlags& f) {
  ReplayOptions options;
  options.speedup = f.speedup;
  options.rate = f.rate;
  options.skip = f.skip;
  options.limit = f.limit;
  options.queue = f.queue;
  options.cluster = f.cluster;
  if (!f.swf.empty()) {
    options.trace_name = TraceNameFromPath(f.swf);
    absl::StatusOr<sim::swf::SwfTrace> trace = sim::swf::LoadSwfTrace(f.swf);
    if (!trace.ok()) return trace.status();
    return PlanSwfReplay(*trace, options);
  }
  options.trace_name = TraceNameFromPath(f.pods);
  absl::StatusOr<std::string> text = sim::alibaba::ReadFileToString(f.pods);
  if (!text.ok()) return text.status();
  absl::StatusOr<sim::alibaba::PodList> pods =
      sim::alibaba::ParsePodList(*text, f.pods, sim::alibaba::GpuSpecModels(*text));
  if (!pods.ok()) return pods.status();
  return PlanAlibabaReplay(*pods, options);
}

std::string Counts(const std::map<std::string, int64_t>& counts) {
  std::string out;
  for (const auto& [reason, n] : counts) out += fmt::format("\n  {:>8}  {}", n, reason);
  return out;
}

// Submits one job, retrying while the server rate-limits it. An error status is a refusal,
// or (IsUnreachable) the end of the replay.
absl::Status Submit(RestClient& client, const ReplayJob& job, Tally& tally, const CommandEnv& env) {
  const std::string body = spec::RenderJobJson(job.document, -1);
  for (int attempt = 0;; ++attempt) {
    int http_status = 0;
    absl::StatusOr<Json> answer = client.PostJson("/api/v1/jobs", body, &http_status);
    if (answer.ok()) {
      ++tally.submitted;
      if (http_status == 200) ++tally.existed;
      return absl::OkStatus();
    }
    const bool limited = answer.status().code() == absl::StatusCode::kResourceExhausted &&
                         RetryAfter(answer.status()).has_value();
    if (!limited || attempt >= kMaxRateLimitRetries) return answer.status();
    ++tally.rate_limited;
    env.sleep(std::max(*RetryAfter(answer.status()), kDefaultRetryAfter));
  }
}

// Submits `jobs` in one batch request, retrying it while the server rate-limits it, and counts
// each job's answer. An error is the request's own: IsUnreachable ends the replay; any other
// refuses every job of the batch.
absl::Status SubmitBatch(RestClient& client, std::span<const ReplayJob> jobs, Tally& tally,
                         const CommandEnv& env) {
  std::vector<std::string> bodies;
  for (const ReplayJob& job : jobs) bodies.push_back(spec::RenderJobJson(job.document, -1));
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<std::vector<BatchItem>> items = PostJobBatch(client, bodies);
    if (items.ok()) {
      for (const BatchItem& item : *items) {
        if (item.error.ok()) {
          ++tally.submitted;
          if (!item.created) ++tally.existed;
        } else {
          ++tally.refused;
          ++tally.refusals[RefusalReason(item.error)];
        }
      }
      return absl::OkStatus();
    }
    const bool limited = items.status().code() == absl::StatusCode::kResourceExhausted &&
                         RetryAfter(items.status()).has_value();
    if (!limited || attempt >= kMaxRateLimitRetries) return items.status();
    ++tally.rate_limited;
    env.sleep(std::max(*RetryAfter(items.status()), kDefaultRetryAfter));
  }
}

void PrintProgress(const Tally& tally, size_t done, size_t total, const ReplayJob& job,
                   Duration behind, const CommandEnv& env) {
  *env.err << fmt::format("[{}/{}] {} submitted, {} refused; trace time +{}{}\n", done, total,
                          tally.submitted, tally.refused, FormatDuration(job.arrival),
                          behind > std::chrono::seconds(1)
                              ? fmt::format(", {} behind the trace", FormatDuration(behind))
                              : "");
  env.err->flush();
}

int DryRun(const ReplayPlan& plan, const CommandEnv& env) {
  for (const ReplayJob& job : plan.jobs) {
    *env.out << "---\n# " << job.trace_id << " at +" << FormatDuration(job.arrival) << "\n"
             << spec::RenderJobYaml(job.document);
  }
  *env.err << fmt::format("{} job(s) of {} row(s); {} skipped{}\n", plan.jobs.size(), plan.rows,
                          plan.rows - static_cast<int64_t>(plan.jobs.size()), Counts(plan.skipped));
  return kExitOk;
}

}  // namespace

int RunReplayCommand(int argc, char** argv, const CommandEnv& env) {
  ReplayFlags f;
  ClientFlags client_flags;
  CLI::App app{
      "Replay a real trace: submit its jobs at its arrival times divided by --speedup, to "
      "simulated nodes (every job tolerates the tessera.io/simulated taint and runs for its "
      "trace run time).\n\nExamples:\n"
      "  tessera replay --pods traces/alibaba-gpu-v2023/openb_pod_list_default.csv "
      "--nodes-cluster openb --speedup 3600\n"
      "  tessera replay --swf traces/pwa-swf/NASA-iPSC-1993-3.1-cln.swf.gz --speedup 100 "
      "--limit 1000\n"
      "  tessera replay --swf LCG-2005-1.swf.gz --skip 5000 --limit 100 --dry-run",
      "tessera replay"};
  CLI::Option* pods = app.add_option("--pods", f.pods, "Alibaba GPU pod list CSV (11 columns)");
  CLI::Option* swf =
      app.add_option("--swf", f.swf, "Parallel Workloads Archive log (SWF, plain or .gz)");
  pods->excludes(swf);
  app.add_option("--nodes-cluster,--cluster", f.cluster,
                 "Only this cluster runs the jobs (spec.clusterSelector tessera.io/cluster)");
  app.add_option("--speedup", f.speedup,
                 "Divide arrival times, run times and time limits by this (default 1)");
  app.add_option("--rate", f.rate,
                 "Submit at this steady rate instead, in jobs per second: job k goes out at "
                 "start + k / N, whatever the trace's arrival times (--speedup still scales run "
                 "times and time limits)");
  app.add_option("--limit", f.limit, "Replay at most this many trace rows");
  app.add_option("--skip", f.skip, "Skip this many trace rows first (in arrival order)");
  app.add_option("--queue", f.queue, "Submit to this queue");
  app.add_flag("--dry-run", f.dry_run, "Print the job documents instead of submitting them");
  app.add_option("--batch", f.batch,
                 fmt::format("Submit this many jobs per request (1..{}; above 1: POST "
                             "/api/v1/jobs:batch, sent when the last job of the batch is due)",
                             kMaxBatchJobs))
      ->check(CLI::Range(int64_t{1}, static_cast<int64_t>(kMaxBatchJobs)));
  AddClientFlags(app, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  if (f.pods.empty() == f.swf.empty()) {
    return ReportUsageError("give a trace: --pods FILE or --swf FILE", *env.err);
  }
  if (!f.cluster.empty()) {
    if (absl::Status name = CheckClusterName(f.cluster, "--cluster"); !name.ok()) {
      return ReportUsageError(std::string(name.message()), *env.err);
    }
  }

  absl::StatusOr<ReplayPlan> plan = LoadPlan(f);
  if (!plan.ok()) return ReportUsageError(std::string(plan.status().message()), *env.err);
  if (f.dry_run) return DryRun(*plan, env);
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  Tally tally;
  const TimePoint start = env.clock->Now();
  TimePoint last_progress = start;
  int rc = kExitOk;
  size_t done = 0;
  const size_t batch = static_cast<size_t>(f.batch);
  for (size_t first = 0; first < plan->jobs.size(); first += batch) {
    const std::span<const ReplayJob> jobs =
        std::span<const ReplayJob>(plan->jobs).subspan(first, std::min(batch, plan->jobs.size() - first));
    const TimePoint due = start + jobs.back().arrival;
    if (const TimePoint now = env.clock->Now(); now < due) env.sleep(due - now);
    absl::Status submitted = batch == 1 ? Submit(*client, jobs.front(), tally, env)
                                        : SubmitBatch(*client, jobs, tally, env);
    if (IsUnreachable(submitted)) {
      rc = ReportApiError(submitted, *env.err);
      break;
    }
    if (!submitted.ok()) {
      tally.refused += static_cast<int64_t>(jobs.size());
      tally.refusals[RefusalReason(submitted)] += static_cast<int64_t>(jobs.size());
    }
    const size_t before = done;
    done += jobs.size();
    const TimePoint now = env.clock->Now();
    if (done / kProgressEveryJobs != before / kProgressEveryJobs ||
        now - last_progress >= kProgressEvery) {
      PrintProgress(tally, done, plan->jobs.size(), jobs.back(), now - due, env);
      last_progress = now;
    }
  }
  const double wall_s = std::chrono::duration<double>(env.clock->Now() - start).count();
  const int64_t skipped = plan->rows - static_cast<int64_t>(plan->jobs.size());
  *env.out << fmt::format(
      "replayed {} row(s) of {}: {} submitted ({} already there), {} refused, {} skipped, "
      "{} not sent; {:.1f}s wall, {:.2f} jobs/s{}\n",
      plan->rows, f.swf.empty() ? f.pods : f.swf, tally.submitted, tally.existed, tally.refused,
      skipped, plan->jobs.size() - done, wall_s,
      wall_s > 0 ? static_cast<double>(tally.submitted) / wall_s : 0.0,
      tally.rate_limited > 0 ? fmt::format(" ({} rate-limited retries)", tally.rate_limited) : "");
  if (!tally.refusals.empty()) *env.out << "refused:" << Counts(tally.refusals) << "\n";
  if (!plan->skipped.empty()) *env.out << "skipped:" << Counts(plan->skipped) << "\n";
  if (rc == kExitOk && tally.refused > 0) rc = kExitServerError;
  return rc;
}

}  // namespace tessera::cli
