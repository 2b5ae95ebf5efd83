#include "tests/parity/decision_log.h"

#include <algorithm>
#include <sstream>

#include "fmt/format.h"
#include "sim/scenario/expectation_checker.h"

namespace tessera::parity {
namespace {

// "Placed GROUP@NODE[GPUS] ..." sorted: the replicas of a group are interchangeable, so which
// replica index went to which of the chosen devices is not a decision.
std::string Placed(std::vector<std::pair<std::string, std::string>> tasks) {
  std::vector<std::string> where;
  for (auto& [task, node] : tasks) {
    where.push_back(fmt::format("{}@{}", task.substr(0, task.rfind('-')), node));
  }
  std::sort(where.begin(), where.end());
  return fmt::format("Placed {}", fmt::join(where, " "));
}

std::vector<std::string> Split(std::string_view text, std::string_view by) {
  std::vector<std::string> parts;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find(by, at), text.size());
    if (end > at) parts.emplace_back(text.substr(at, end - at));
    at = end + by.size();
  }
  return parts;
}

// From the runner's "w-0->node-1[0,1] ...".
std::string RunnerPlacement(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> tasks;
  for (std::string_view token : Split(text, " ")) {
    const size_t arrow = token.find("->");
    if (arrow == std::string_view::npos) continue;
    tasks.emplace_back(token.substr(0, arrow), token.substr(arrow + 2));
  }
  return Placed(std::move(tasks));
}

// From the server's "w-0 → node-1 gpus [0,1], ...".
std::string ServerPlacement(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> tasks;
  for (std::string_view item : Split(text, ", ")) {
    const size_t arrow = item.find(" → ");
    if (arrow == std::string_view::npos) continue;
    std::string_view where = item.substr(arrow + std::string_view(" → ").size());
    std::string node(where.substr(0, where.find(' ')));
    if (const size_t gpus = where.find(" gpus ["); gpus != std::string_view::npos) {
      node += where.substr(gpus + std::string_view(" gpus ").size());
    }
    tasks.emplace_back(item.substr(0, arrow), std::move(node));
  }
  return Placed(std::move(tasks));
}

// The reason a failure names in the runner, as a cluster reports it
// (tessera/cluster/task_launch.h): "TaskLost" for tasks whose node failed is "Lost".
std::string FailureReason(std::string code) { return code == "TaskLost" ? "Lost" : code; }

}  // namespace

DecisionLogs FromTimeline(const std::string& timeline, const sim::RunReport& report) {
  DecisionLogs logs;
  std::map<std::string, std::string> failure;  // job → the reason of its last failure
  std::istringstream in(timeline);
  for (std::string line; std::getline(in, line);) {
    // "{time:>9}  {kind:<9} {text}"
    std::istringstream fields(line);
    std::string time;
    std::string kind;
    fields >> time >> kind;
    std::string text;
    std::getline(fields, text);
    text.erase(0, text.find_first_not_of(' '));
    const std::string job = text.substr(0, text.find(':'));
    const std::string rest = text.find(": ") == std::string::npos
                                 ? ""
                                 : text.substr(text.find(": ") + 2);
    DecisionLog& log = logs[job];
    if (kind == "admit") {
      log.push_back({time, "Admitted"});
    } else if (kind == "start") {
      log.push_back({time, RunnerPlacement(rest)});
      log.push_back({time, "Running"});
    } else if (kind == "scale") {
      log.push_back({time, RunnerPlacement(rest)});
    } else if (kind == "preempt") {
      log.push_back({time, "Preempted"});
    } else if (kind == "reclaim") {
      log.push_back({time, "Reclaimed"});
    } else if (kind == "unadmit") {
      log.push_back({time, "Pending"});
    } else if (kind == "requeue") {
      log.push_back({time, "Requeued"});
    } else if (kind == "timeout") {
      failure[job] = "TimeLimitExceeded";
    } else if (kind == "finish" && rest.starts_with("Failed: ")) {
      const std::string code = rest.substr(8, rest.find(':', 8) - 8);
      failure[job] = FailureReason(code);
    } else if (kind == "refuse") {
      failure[job] = "Refused";  // kReasonRefused
    }
  }
  for (const sim::JobOutcome& job : report.jobs) {
    DecisionLog& log = logs[job.name];
    if (!job.end.has_value()) continue;
    std::string what = job.phase;
    if (job.phase == "Failed") what += " " + failure[job.name];
    log.push_back({sim::FormatTime(*job.end), what});
  }
  // Lines that name no job of the report (the scenario line, node events, the end).
  std::erase_if(logs, [&](const auto& entry) {
    return std::none_of(report.jobs.begin(), report.jobs.end(),
                        [&](const sim::JobOutcome& j) { return j.name == entry.first; });
  });
  return logs;
}

DecisionLog FromEvents(const std::vector<server::JobEvent>& events) {
  DecisionLog log;
  for (const server::JobEvent& event : events) {
    const std::string time = sim::FormatTime(event.time);
    const std::string& type = event.type;
    if (type == "Admitted") {
      // Admitted with its gang's placement: the runner's "start" says both.
      if (!event.message.starts_with("gang of ")) log.push_back({time, "Admitted"});
    } else if (type == "Placed") {
      log.push_back({time, ServerPlacement(event.message)});
    } else if (type == "Running" || type == "Preempted" || type == "Reclaimed" ||
               type == "Requeued" || type == "Succeeded" || type == "Cancelled") {
      log.push_back({time, type});
    } else if (type == "GangTimeout" || type == "AdmissionRevoked") {
      log.push_back({time, "Pending"});
    } else if (type == "Failed") {
      log.push_back({time, "Failed " + event.reason});
    }
  }
  return log;
}

std::string Compare(const DecisionLogs& scenario, const DecisionLogs& server) {
  std::string out;
  std::vector<std::string> jobs;
  for (const auto& [job, log] : scenario) jobs.push_back(job);
  for (const auto& [job, log] : server) {
    if (!scenario.contains(job)) jobs.push_back(job);
  }
  static const DecisionLog kNone;
  for (const std::string& job : jobs) {
    const auto a = scenario.find(job);
    const auto b = server.find(job);
    const DecisionLog& left = a == scenario.end() ? kNone : a->second;
    const DecisionLog& right = b == server.end() ? kNone : b->second;
    if (left == right) continue;
    out += fmt::format("job {}:\n  {:<48} | {}\n", job, "scenario runner", "server (JobManager)");
    bool marked = false;
    for (size_t i = 0; i < std::max(left.size(), right.size()); ++i) {
      const std::string l = i < left.size() ? left[i].time + " " + left[i].what : "";
      const std::string r = i < right.size() ? right[i].time + " " + right[i].what : "";
      const bool differs = !marked && l != r;
      marked = marked || differs;
      out += fmt::format("{} {:<48} | {}\n", differs ? ">" : " ", l, r);
    }
  }
  return out;
}

}  // namespace tessera::parity
