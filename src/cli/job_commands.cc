#include "cli/job_commands.h"

#include <algorithm>
#include <map>
#include <vector>

#include "cli/client/api_error.h"
#include "cli/exit_status.h"
#include "cli/job_view.h"
#include "cli/output_format.h"
#include "cli/table.h"
#include "cli/verb_common.h"
#include "fmt/format.h"

namespace tessera::cli {
namespace {

constexpr int32_t kMaxPageSize = 1000;
// A watch that the server ends is reopened; this many ends in a row without a single event is
// taken as a server that will not serve watches.
constexpr int kMaxEmptyWatches = 5;
constexpr std::string_view kPhases[] = {"Pending",   "Admitted", "Running",
                                        "Succeeded", "Failed",   "Cancelled"};

bool IsTerminalPhase(std::string_view phase) {
  return phase == "Succeeded" || phase == "Failed" || phase == "Cancelled";
}

// Prints jobs in the chosen format; in table form keeps the first table's widths and prints a
// job's row again only when it changed.
class JobPrinter {
 public:
  // `watching`: rows will be printed again as jobs change, so the PHASE column is made wide
  // enough for every phase from the start.
  JobPrinter(OutputFormat format, bool watching, const CommandEnv& env)
      : format_(format), wide_(format == OutputFormat::kWide), watching_(watching), env_(env) {}

  // The first batch: `jobs` as a table with its header, or in JSON or YAML `document` (the
  // job, or a listing's page).
  void PrintInitial(const std::vector<Json>& jobs, const Json& document) {
    if (structured()) {
      *env_.out << RenderStructured(document, format_);
      for (const Json& job : jobs) last_[JsonText(job, {"metadata", "id"})] = Compared(Row(job));
      return;
    }
    Table table(JobTableHeaders(wide_));
    std::vector<std::vector<std::string>> rows;
    for (const Json& job : jobs) {
      rows.push_back(Row(job));
      last_[JsonText(job, {"metadata", "id"})] = Compared(rows.back());
      table.AddRow(rows.back());
    }
    widths_ = table.Widths();
    if (watching_) widths_[kPhaseColumn] = std::max(widths_[kPhaseColumn], kLongestPhase.size());
    *env_.out << FormatRow(JobTableHeaders(wide_), widths_);
    for (const std::vector<std::string>& row : rows) *env_.out << FormatRow(row, widths_);
  }

  bool structured() const {
    return format_ == OutputFormat::kJson || format_ == OutputFormat::kYaml;
  }

  // Whether the job was printed already.
  bool Shown(const std::string& id) const { return last_.contains(id); }

  // A job seen again: printed when its row changed.
  void PrintChanged(const Json& job) {
    std::vector<std::string> row = Row(job);
    std::vector<std::string>& last = last_[JsonText(job, {"metadata", "id"})];
    if (Compared(row) == last) return;
    last = Compared(row);
    if (format_ == OutputFormat::kJson) {
      *env_.out << RenderStructured(job, format_);
    } else if (format_ == OutputFormat::kYaml) {
      *env_.out << "---\n" << RenderStructured(job, format_);
    } else {
      *env_.out << FormatRow(row, widths_);
    }
    env_.out->flush();
  }

 private:
  std::vector<std::string> Row(const Json& job) const {
    return JobTableRow(job, env_.clock->Now(), wide_);
  }
  // What makes a row "changed": everything but its age.
  static std::vector<std::string> Compared(std::vector<std::string> row) {
    row[kAgeColumn].clear();
    return row;
  }

  static constexpr size_t kPhaseColumn = 4;
  static constexpr size_t kAgeColumn = 6;
  static constexpr std::string_view kLongestPhase = "Succeeded";

  OutputFormat format_;
  bool wide_;
  bool watching_;
  const CommandEnv& env_;
  std::vector<size_t> widths_;
  std::map<std::string, std::vector<std::string>> last_;
};

void AddOutputFlag(CLI::App& app, std::string* output) {
  app.add_option("-o,--output", *output, "Output format: table (default), wide, json or yaml");
}

// The highest event sequence of a job so far (0 when it has none).
absl::StatusOr<int64_t> LastSequence(RestClient& client, const std::string& id) {
  absl::StatusOr<Json> events = client.GetJson(JobPath(id, "/events"));
  if (!events.ok()) return events.status();
  int64_t last = 0;
  for (const Json& event : JsonArray(*events, {"items"})) {
    last =
        std::max<int64_t>(last, static_cast<int64_t>(JsonNumber(event, {"sequence"}).value_or(0)));
  }
  return last;
}

// Follows one job until it is terminal, printing its row whenever it changes. The stream
// holds its own connection (`stream`): the job is read again over `client` while it is open.
int WatchJob(RestClient& client, RestClient& stream, const std::string& id, JobPrinter& printer,
             const CommandEnv& env) {
  absl::StatusOr<int64_t> sequence = LastSequence(client, id);
  if (!sequence.ok()) return ReportApiError(sequence.status(), *env.err);
  absl::StatusOr<Json> job = client.GetJson(JobPath(id));
  if (!job.ok()) return ReportApiError(job.status(), *env.err);
  printer.PrintInitial({*job}, *job);
  env.out->flush();
  bool done = IsTerminalPhase(JsonText(*job, {"status", "phase"}));
  int empty_watches = 0;
  while (!done) {
    absl::Status fetch_error;
    bool got_event = false;
    absl::Status streamed = stream.StreamJsonLines(
        "/api/v1/watch", {{"job", id}, {"afterSequence", std::to_string(*sequence)}},
        [&](const Json& event) {
          got_event = true;
          *sequence = std::max<int64_t>(
              *sequence, static_cast<int64_t>(JsonNumber(event, {"sequence"}).value_or(0)));
          absl::StatusOr<Json> now = client.GetJson(JobPath(id));
          if (!now.ok()) {
            fetch_error = now.status();
            return false;
          }
          printer.PrintChanged(*now);
          done = IsTerminalPhase(JsonText(*now, {"status", "phase"}));
          return !done;
        });
    if (!fetch_error.ok()) return ReportApiError(fetch_error, *env.err);
    if (!streamed.ok()) return ReportApiError(streamed, *env.err);
    if (done) break;
    // The server ended the stream: look at the job, then watch again.
    absl::StatusOr<Json> now = client.GetJson(JobPath(id));
    if (!now.ok()) return ReportApiError(now.status(), *env.err);
    printer.PrintChanged(*now);
    done = IsTerminalPhase(JsonText(*now, {"status", "phase"}));
    empty_watches = got_event ? 0 : empty_watches + 1;
    if (!done && empty_watches >= kMaxEmptyWatches) {
      *env.err << "error: the server keeps ending the watch of job " << id << "\n";
      return kExitServerError;
    }
    if (!done) env.sleep(std::chrono::seconds(1));
  }
  return kExitOk;
}

}  // namespace

int RunGetCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::string id;
  std::string output;
  bool watch = false;
  CLI::App app{
      "Show one job.\n\nExamples:\n  tessera get 42\n  tessera get 42 -o yaml\n"
      "  tessera get 42 --watch",
      "tessera get"};
  app.add_option("id", id, "The job's id")->required();
  AddOutputFlag(app, &output);
  app.add_flag("-w,--watch", watch, "Reprint the job whenever it changes, until it has ended");
  AddClientFlags(app, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  absl::StatusOr<OutputFormat> format = ParseOutputFormat(output);
  if (!format.ok()) return ReportUsageError(std::string(format.status().message()), *env.err);
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  JobPrinter printer(*format, watch, env);
  if (watch) {
    std::unique_ptr<RestClient> stream = ConnectOrReport(client_flags, env);
    return WatchJob(*client, *stream, id, printer, env);
  }
  absl::StatusOr<Json> job = client->GetJson(JobPath(id));
  if (!job.ok()) return ReportApiError(job.status(), *env.err);
  printer.PrintInitial({*job}, *job);
  return kExitOk;
}

namespace {

constexpr std::string_view kStates[] = {"active", "terminal", "all"};

struct ListFilters {
  std::string phase;
  std::string state = "active";  // active | terminal | all
  std::string queue;
  std::string tenant;
  std::string name;

  bool Matches(const Json& job) const {
    const std::string job_phase = JsonText(job, {"status", "phase"});
    return (phase.empty() || job_phase == phase) &&
           (state == "all" || (state == "terminal") == IsTerminalPhase(job_phase)) &&
           (queue.empty() || JsonText(job, {"spec", "queue"}) == queue) &&
           (tenant.empty() || JsonText(job, {"metadata", "tenant"}) == tenant) &&
           (name.empty() || JsonText(job, {"metadata", "name"}) == name);
  }
};

bool SameLetters(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// "pending" -> "Pending"; "" for an unknown phase.
std::string CanonicalPhase(std::string_view text) {
  for (std::string_view phase : kPhases) {
    if (SameLetters(phase, text)) return std::string(phase);
  }
  return "";
}

// What a listing got: its jobs, and where the pages it did not follow start.
struct Listing {
  std::vector<Json> jobs;
  std::string next_page_token;     // "" when every matching job was listed
  std::optional<int64_t> remaining;  // matching jobs not listed (nullopt: the server did not say)
};

// The pages from `page_token` on, up to `limit` jobs (nullopt: all of them).
absl::StatusOr<Listing> ListJobs(RestClient& client, const ListFilters& filters,
                                 std::string_view order, std::string page_token,
                                 std::optional<int64_t> limit) {
  Listing listing;
  while (true) {
    const int64_t want =
        limit ? *limit - static_cast<int64_t>(listing.jobs.size()) : kMaxPageSize;
    Query query;
    if (!filters.phase.empty()) query.emplace_back("phase", filters.phase);
    if (filters.state != "all") query.emplace_back("state", filters.state);
    if (!filters.queue.empty()) query.emplace_back("queue", filters.queue);
    if (!filters.tenant.empty()) query.emplace_back("tenant", filters.tenant);
    if (!filters.name.empty()) query.emplace_back("name", filters.name);
    query.emplace_back("order", std::string(order));
    query.emplace_back("limit", std::to_string(std::min<int64_t>(want, kMaxPageSize)));
    if (!page_token.empty()) query.emplace_back("pageToken", page_token);
    absl::StatusOr<Json> page = client.GetJson("/api/v1/jobs", query);
    if (!page.ok()) return page.status();
    for (const Json& job : JsonArray(*page, {"items"})) listing.jobs.push_back(job);
    page_token = JsonText(*page, {"nextPageToken"});
    listing.next_page_token = page_token;
    const std::optional<double> remaining = JsonNumber(*page, {"remainingItemCount"});
    listing.remaining =
        remaining ? std::optional<int64_t>(static_cast<int64_t>(*remaining)) : std::nullopt;
    if (page_token.empty() || (limit && static_cast<int64_t>(listing.jobs.size()) >= *limit)) {
      break;
    }
  }
  if (listing.next_page_token.empty()) listing.remaining = 0;
  return listing;
}

// The listing as a document: the API's page shape.
Json ListingDocument(const Listing& listing) {
  Json list = Json::object();
  list["items"] = listing.jobs;
  list["nextPageToken"] = listing.next_page_token;
  if (listing.remaining) list["remainingItemCount"] = *listing.remaining;
  return list;
}

// Under a table: how many matching jobs it left out and how to see them, or, when the default
// filter found nothing, that ended jobs are not shown.
void PrintListingHint(const Listing& listing, const ListFilters& filters, bool state_chosen,
                      int64_t limit, const CommandEnv& env) {
  const std::string_view kind = filters.state == "active"     ? "active "
                                : filters.state == "terminal" ? "ended "
                                                              : "";
  if (!listing.next_page_token.empty()) {
    const std::string more =
        listing.remaining ? fmt::format("{} more {}job{}", *listing.remaining, kind,
                                        *listing.remaining == 1 ? "" : "s")
                          : fmt::format("more {}jobs", kind);
    *env.err << fmt::format(
        "{} not shown; add --page-token {} for the next {}, or --limit 0 for all\n", more,
        listing.next_page_token, limit);
  } else if (listing.jobs.empty() && !state_chosen && filters.phase.empty()) {
    *env.err << "no active jobs; --all lists ended ones too\n";
  }
}

// Checks and normalises the listing flags: --phase and --state without regard to case; --phase
// alone lists that phase whatever the state; --all is --state all.
std::optional<std::string> CheckListFlags(ListFilters& filters, bool all, bool state_chosen,
                                          std::string& order) {
  if (!filters.phase.empty()) {
    const std::string phase = CanonicalPhase(filters.phase);
    if (phase.empty()) {
      return fmt::format("--phase: unknown phase '{}' (use one of {})", filters.phase,
                         fmt::join(kPhases, ", "));
    }
    filters.phase = phase;
    if (!state_chosen) filters.state = "all";
  }
  if (all) filters.state = "all";
  const auto state = std::find_if(std::begin(kStates), std::end(kStates), [&](std::string_view s) {
    return SameLetters(s, filters.state);
  });
  if (state == std::end(kStates)) {
    return fmt::format("--state: unknown state '{}' (use one of {})", filters.state,
                       fmt::join(kStates, ", "));
  }
  filters.state = std::string(*state);
  if (!SameLetters(order, "newest") && !SameLetters(order, "oldest")) {
    return fmt::format("--order: unknown order '{}' (use newest or oldest)", order);
  }
  order = SameLetters(order, "newest") ? "newest" : "oldest";
  return std::nullopt;
}

}  // namespace

int RunListCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  ListFilters filters;
  int64_t limit = 100;
  std::string page_token;
  std::string order = "newest";
  bool all = false;
  std::string output;
  bool watch = false;
  CLI::App app{
      "List jobs: by default the active ones (Pending, Admitted, Running), newest first.\n\n"
      "Examples:\n  tessera list\n  tessera list --all\n"
      "  tessera list --state terminal --queue team-a -o wide\n"
      "  tessera list --phase failed --limit 0 -o json\n  tessera list --watch",
      "tessera list"};
  CLI::Option* state_opt =
      app.add_option("--state", filters.state,
                     "Only active jobs (Pending, Admitted, Running; the default), terminal ones "
                     "(Succeeded, Failed, Cancelled) or all");
  app.add_flag("-A,--all", all, "Jobs in every phase, ended ones too (--state all)")
      ->excludes(state_opt);
  app.add_option("--phase", filters.phase,
                 "Only jobs in this phase: Pending, Admitted, Running, Succeeded, Failed, "
                 "Cancelled")
      ->excludes(state_opt);
  app.add_option("--queue", filters.queue, "Only jobs of this queue");
  app.add_option("--tenant", filters.tenant, "Only this tenant's jobs (admin tokens)");
  app.add_option("--name", filters.name, "Only jobs with this name");
  app.add_option("--order", order, "newest (the default) or oldest first, by submission");
  app.add_option("--limit", limit, "At most this many jobs (default 100; 0: every one)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--page-token", page_token,
                 "Start after the jobs already listed: the token a shorter listing printed");
  AddOutputFlag(app, &output);
  app.add_flag("-w,--watch", watch,
               "Then reprint each listed job whose row changes, and new jobs matching the "
               "filters");
  AddClientFlags(app, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  absl::StatusOr<OutputFormat> format = ParseOutputFormat(output);
  if (!format.ok()) return ReportUsageError(std::string(format.status().message()), *env.err);
  const bool state_chosen = state_opt->count() > 0 || all;
  if (std::optional<std::string> error = CheckListFlags(filters, all, state_chosen, order)) {
    return ReportUsageError(*error, *env.err);
  }
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  absl::StatusOr<Listing> listing =
      ListJobs(*client, filters, order, page_token,
               limit == 0 ? std::nullopt : std::optional<int64_t>(limit));
  if (!listing.ok()) return ReportApiError(listing.status(), *env.err);
  JobPrinter printer(*format, watch, env);
  printer.PrintInitial(listing->jobs, ListingDocument(*listing));
  env.out->flush();
  if (!printer.structured()) PrintListingHint(*listing, filters, state_chosen, limit, env);
  if (!watch) return kExitOk;
  // The stream holds its own connection: jobs are read over `client` while it is open.
  std::unique_ptr<RestClient> stream = ConnectOrReport(client_flags, env);
  absl::Status fetch_error;
  absl::Status streamed = stream->StreamJsonLines("/api/v1/watch", {}, [&](const Json& event) {
    const std::string id = JsonText(event, {"jobId"});
    if (id.empty()) return true;
    absl::StatusOr<Json> job = client->GetJson(JobPath(id));
    if (absl::IsNotFound(job.status())) return true;  // gone, or not ours
    if (!job.ok()) {
      fetch_error = job.status();
      return false;
    }
    // A listed job is followed even once it leaves the filters (it ended, say).
    if (printer.Shown(id) || filters.Matches(*job)) printer.PrintChanged(*job);
    return true;
  });
  if (!fetch_error.ok()) return ReportApiError(fetch_error, *env.err);
  if (!streamed.ok()) return ReportApiError(streamed, *env.err);
  return kExitOk;
}

int RunCancelCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::vector<std::string> ids;
  CLI::App app{
      "Cancel jobs: a pending job ends at once, the tasks of a running one are "
      "stopped (SIGTERM, then SIGKILL after its grace period).\n\nExample:\n"
      "  tessera cancel 42 43",
      "tessera cancel"};
  app.add_option("ids", ids, "The jobs' ids")->required();
  AddClientFlags(app, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  int rc = kExitOk;
  for (const std::string& id : ids) {
    absl::StatusOr<Json> job = client->PostJson(JobPath(id, "/cancel"), "{}");
    if (!job.ok()) {
      if (IsUnreachable(job.status())) return ReportApiError(job.status(), *env.err);
      *env.err << "error: job " << id << ": " << ApiErrorMessage(job.status()) << "\n";
      rc = kExitServerError;
      continue;
    }
    const std::string phase = JsonText(*job, {"status", "phase"});
    if (phase == "Cancelled") {
      *env.out << "job " << id << " cancelled\n";
    } else if (IsTerminalPhase(phase)) {
      *env.out << "job " << id << " had already ended (" << phase << ")\n";
    } else {
      *env.out << "job " << id << " is stopping (" << (phase.empty() ? "-" : phase) << ")\n";
    }
  }
  return rc;
}

}  // namespace tessera::cli
