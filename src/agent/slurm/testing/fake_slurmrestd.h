// FakeSlurmrestd: slurmrestd in memory for SlurmCluster's unit tests — nodes, jobs, submissions,
// signals, GET /ping, GET /diag's clock and `?update_time=` (304 when nothing changed in or
// after that second; a changed node list answered as slurmrestd 22.05 does, HTTP 500
// "Unspecified error"), with counters of what was asked.
//
// It serves one REST API version (v0.0.38 unless given), on that version's paths only (HTTP 404
// for the others', as a slurmrestd without that plugin answers), and in that version's shapes:
// tests keep nodes and jobs in v0.0.38's shape, and the fake writes them as the later version
// would (state lists, {set, infinite, number} numbers, v0.0.40's verbose exit_code;
// testdata/README.md), answers an unchanged job list from v0.0.39 as slurmrestd's plugins of
// those versions do (HTTP 200, no jobs, the warning "No job changes since update_time=T"), and
// refuses a submission body not in that version's shape. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "agent/local/system_clock.h"
#include "agent/slurm/slurm_api_version.h"
#include "agent/slurm/slurm_jobs.h"
#include "agent/slurm/slurm_rest_client.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::agent::testing {

// slurmrestd in memory: nodes, jobs, submissions and signals, as `version` answers them.
class FakeSlurm final : public SlurmTransport {
 public:
  using json = nlohmann::json;

  explicit FakeSlurm(SlurmApiVersion version = SlurmApiVersion::kV38)
      : version_(version), prefix_("/slurm/" + SlurmApiVersionName(version)) {}

  absl::StatusOr<SlurmHttpReply> Send(std::string_view method, const std::string& path,
                                      const std::string& body) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (down_) return absl::UnavailableError("connection refused");
    if (!absl::StartsWith(path, prefix_ + "/")) return SlurmHttpReply{404, "{}"};
    std::string resource = path.substr(prefix_.size());
    // ?update_time=T: 304 when nothing changed in or after second T (slurmctld's test).
    std::optional<int64_t> since;
    if (size_t q = resource.find("?update_time="); q != std::string::npos) {
      int64_t value = 0;
      if (!absl::SimpleAtoi(resource.substr(q + 13), &value)) return SlurmHttpReply{400, "{}"};
      since = value;
      resource = resource.substr(0, q);
    }
    if (method == "GET" && resource == "/ping") {
      ++pings_;
      return Reply(json{{"pings", {{{"hostname", "ctl"}, {"pinged", "UP"}, {"mode", "primary"}}}}});
    }
    if (method == "GET" && resource == "/diag") {
      const int64_t now = Second();
      return Reply(json{
          {"statistics", {{"req_time", Later(SlurmApiVersion::kV40) ? Flagged(now) : json(now)}}}});
    }
    if (method == "GET" && resource == "/nodes") {
      if (since.has_value() && nodes_changed_ < *since) return SlurmHttpReply{304, ""};
      if (since.has_value()) {
        // slurmrestd 22.05's answer to a changed node list asked with update_time.
        return SlurmHttpReply{500,
                              json{{"errors", {{{"error", "Unspecified error"}, {"errno", -1}}}},
                                   {"nodes", json::array()}}
                                  .dump()};
      }
      json nodes = json::array();
      for (const json& node : nodes_) nodes.push_back(ShapedNode(node));
      return Reply(json{{"nodes", nodes}, {"errors", json::array()}});
    }
    if (method == "GET" && resource == "/jobs") {
      if (since.has_value() && jobs_changed_ < *since) {
        ++unchanged_replies_;
        if (!Later(SlurmApiVersion::kV39)) return SlurmHttpReply{304, ""};
        // The answer of the openapi/v0.0.39 and openapi/slurmctld plugins: no jobs, a warning.
        return Reply(
            json{{"jobs", json::array()},
                 {"warnings",
                  {{{"description", fmt::format("No job changes since update_time={}", *since)},
                    {"source", "_op_handler_jobs"}}}},
                 {"errors", json::array()}});
      }
      ++job_lists_;
      json jobs = json::array();
      for (const auto& [id, job] : jobs_) jobs.push_back(ShapedJob(job));
      return Reply(json{{"jobs", jobs}, {"errors", json::array()}});
    }
    if (method == "POST" && resource == "/job/submit") {
      if (lost_submissions_ > 0) {
        --lost_submissions_;
        return absl::UnavailableError("Read");  // lost on a connection slurmrestd had closed
      }
      submissions_.push_back(json::parse(body));
      jobs_changed_ = Second();
      std::string refusal = refusal_;
      if (refusal.empty() && !InVersionShape(submissions_.back())) {
        refusal = "Unexpected job description for " + prefix_;
      }
      if (!refusal.empty()) {
        return SlurmHttpReply{500, json{{"errors", {{{"error", refusal}}}}}.dump()};
      }
      const int64_t id = next_id_++;
      const json& job = submissions_.back()["job"];
      jobs_[id] = {{"job_id", id},
                   {"name", job["name"]},
                   {"comment", job["comment"]},
                   {"job_state", "PENDING"},
                   {"nodes", ""},
                   {"partition", job.value("partition", "gpu")},
                   {"exit_code", 0},
                   {"start_time", 0},
                   {"end_time", 0}};
      return Reply(json{{"job_id", id}, {"errors", json::array()}});
    }
    if (absl::StartsWith(resource, "/job/")) {
      std::string rest = resource.substr(5);
      std::string signal;
      if (size_t q = rest.find("?signal="); q != std::string::npos) {
        signal = rest.substr(q + 8);
        rest = rest.substr(0, q);
      }
      int64_t id = 0;
      if (!absl::SimpleAtoi(rest, &id) || !jobs_.contains(id)) {
        return SlurmHttpReply{
            500, json{{"errors", {{{"error", "Invalid job id specified"}, {"error_number", 2017}}}},
                      {"jobs", json::array()}}
                     .dump()};
      }
      if (method == "GET") {
        ++job_reads_;
        return Reply(json{{"jobs", json::array({ShapedJob(jobs_[id])})}});
      }
      signals_.push_back(fmt::format("{}:{}", id, signal.empty() ? "cancel" : signal));
      jobs_changed_ = Second();
      if (signal.empty() && jobs_[id]["job_state"] != "COMPLETED") {
        jobs_[id]["job_state"] = "CANCELLED";
        jobs_[id]["end_time"] = 2000;
      }
      return Reply(json{{"errors", json::array()}});
    }
    return SlurmHttpReply{404, "{}"};
  }

  // The clock the fake's slurmctld keeps its time by (the system clock until set).
  void SetClock(const Clock* clock) {
    std::lock_guard<std::mutex> lock(mu_);
    clock_ = clock;
  }
  void SetNodes(json nodes) {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_ = std::move(nodes);
    nodes_changed_ = Second();
  }
  void SetDown(bool down) {
    std::lock_guard<std::mutex> lock(mu_);
    down_ = down;
  }
  void Refuse(std::string error) {
    std::lock_guard<std::mutex> lock(mu_);
    refusal_ = std::move(error);
  }
  // The next `count` submissions never arrive: no reply, and no job.
  void LoseSubmissions(int count) {
    std::lock_guard<std::mutex> lock(mu_);
    lost_submissions_ = count;
  }
  void SetJob(int64_t id, std::string state, int64_t exit_code = 0) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_changed_ = Second();
    json& job = jobs_[id];
    job["job_state"] = std::move(state);
    job["exit_code"] = exit_code;
    job["start_time"] = 1000;
    if (PhaseOf(job["job_state"].get<std::string>()) == SlurmJobPhase::kEnded) {
      job["end_time"] = 1010;
    }
  }
  // A job that was not submitted through the cluster (an earlier agent's, or a user's).
  int64_t AddJob(std::string name, std::string comment, std::string state) {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t id = next_id_++;
    jobs_changed_ = Second();
    jobs_[id] = {{"job_id", id},
                 {"name", name},
                 {"comment", comment},
                 {"job_state", state},
                 {"partition", "gpu"},
                 {"start_time", 1000},
                 {"end_time", PhaseOf(state) == SlurmJobPhase::kEnded ? 1010 : 0},
                 {"exit_code", 0}};
    return id;
  }
  void RemoveJob(int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.erase(id);
    jobs_changed_ = Second();
  }
  std::vector<json> Submissions() {
    std::lock_guard<std::mutex> lock(mu_);
    return submissions_;
  }
  std::vector<std::string> Signals() {
    std::lock_guard<std::mutex> lock(mu_);
    return signals_;
  }
  // Replies to GET /jobs with the list, and with 304 (nothing changed).
  int JobLists() {
    std::lock_guard<std::mutex> lock(mu_);
    return job_lists_;
  }
  int JobReads() {
    std::lock_guard<std::mutex> lock(mu_);
    return job_reads_;
  }
  int Pings() {
    std::lock_guard<std::mutex> lock(mu_);
    return pings_;
  }
  int UnchangedReplies() {
    std::lock_guard<std::mutex> lock(mu_);
    return unchanged_replies_;
  }
  std::string JobState(int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_[id]["job_state"];
  }

 private:
  static SlurmHttpReply Reply(const json& body) { return {200, body.dump()}; }
  static json Flagged(int64_t number) {
    return {{"set", true}, {"infinite", false}, {"number", number}};
  }
  bool Later(SlurmApiVersion version) const { return version_ >= version; }

  // v0.0.38 puts the script beside the job and the environment in an object; later versions
  // put the script in the job and the environment in a list of NAME=value.
  bool InVersionShape(const json& body) const {
    const json& job = body.value("job", json::object());
    if (!Later(SlurmApiVersion::kV39)) {
      return body.contains("script") && job.value("environment", json()).is_object();
    }
    return !body.contains("script") && job.contains("script") &&
           job.value("environment", json()).is_array() && job.contains("required_nodes");
  }

  // A job kept in v0.0.38's shape, as this version writes it.
  json ShapedJob(json job) const {
    if (Later(SlurmApiVersion::kV39)) {
      const int64_t raw = job.value("exit_code", int64_t{0});
      job["exit_code"] = Later(SlurmApiVersion::kV40)
                             ? json{{"status", {raw == 0 ? "SUCCESS" : "ERROR"}},
                                    {"return_code", Flagged((raw >> 8) & 0xff)},
                                    {"signal", {{"id", Flagged(raw & 0x7f)}, {"name", ""}}}}
                             : Flagged(raw);
    }
    if (Later(SlurmApiVersion::kV40)) {
      job["job_state"] = json::array({job["job_state"]});
      for (const char* time : {"start_time", "end_time"}) {
        job[time] = Flagged(job.value(time, int64_t{0}));
      }
    }
    return job;
  }

  // A node kept in v0.0.38's shape ("state": "idle", "state_flags": [...]), as this version
  // writes it ("state": ["IDLE", ...]).
  json ShapedNode(json node) const {
    if (!Later(SlurmApiVersion::kV39) || !node.contains("state") || !node["state"].is_string()) {
      return node;
    }
    json state = json::array({absl::AsciiStrToUpper(node["state"].get<std::string>())});
    for (const json& flag : node.value("state_flags", json::array())) state.push_back(flag);
    node["state"] = std::move(state);
    node.erase("state_flags");
    if (!Later(SlurmApiVersion::kV40) && node.contains("cpu_load")) {
      node["cpu_load"] = Flagged(node["cpu_load"].get<int64_t>());
    }
    return node;
  }
  // slurmctld's time, epoch seconds. REQUIRES mu_.
  int64_t Second() const {
    const TimePoint now = clock_ != nullptr ? clock_->Now() : SystemClock::Get().Now();
    return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  }

  const SlurmApiVersion version_;
  const std::string prefix_;  // "/slurm/v0.0.38"
  std::mutex mu_;
  bool down_ = false;
  std::string refusal_;
  int lost_submissions_ = 0;
  json nodes_ = json::array();
  std::map<int64_t, json> jobs_;
  int64_t next_id_ = 100;
  const Clock* clock_ = nullptr;
  int64_t nodes_changed_ = 0;  // the second of the last change
  int64_t jobs_changed_ = 0;
  int job_lists_ = 0;
  int unchanged_replies_ = 0;
  int job_reads_ = 0;  // GET /job/{id}
  int pings_ = 0;
  std::vector<json> submissions_;
  std::vector<std::string> signals_;
};

}  // namespace tessera::agent::testing
