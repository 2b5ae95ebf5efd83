// Crash safety of the control plane: under continuous submission load, `tessera server` is
// killed with SIGKILL at random moments (now and then also again while it starts and
// recovers) and restarted on the same data directory, over and over. After each restart and at the
// end:
//   - every acknowledged submission (201 or 200 with an id) is there, under its requestId, and
//     no requestId names two jobs (a retry of an unanswered submission returned the first);
//   - every job is in a consistent state (valid phase; a terminal job has its endTime; an
//     Admitted or Running job has every task placed; a Succeeded job's tasks exited 0).
// At the end, once every job has ended: every acknowledged job Succeeded (or says why not), and
// no task ran twice — each task appends "<job id> <task name>" to a marker file when it starts,
// and no line may appear twice (jobs use restartPolicy fail, so a second line can only come
// from a task launched again after a crash).
//
// Rounds: TESSERA_CRASH_ROUNDS (default 20); the kill moments come from TESSERA_CRASH_SEED
// (default 20260101), printed so that a failing run can be repeated.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "rest_api.h"
#include "server_process.h"
#include "temp_dir.h"

namespace tessera::integration {
namespace {

constexpr int kClients = 3;
// Pauses between one client's submissions, and the tasks' run time: enough load to catch the
// server mid-write, little enough for a 2-core CI machine.
constexpr std::chrono::milliseconds kSubmitPause(120);
constexpr char kTaskSleep[] = "0.2";

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  int64_t value = 0;
  return text != nullptr && absl::SimpleAtoi(text, &value) ? value : fallback;
}

// One acknowledged submission.
struct Ack {
  std::string request_id;
  std::string id;
  int replicas = 1;
};

// Where the server currently listens; changes with every restart.
class Endpoint {
 public:
  void Set(const ServerProcess& server) {
    std::lock_guard lock(mu_);
    api_ = std::make_shared<RestApi>(server.host(), server.http_port(), server.admin_token());
  }
  std::shared_ptr<const RestApi> Get() const {
    std::lock_guard lock(mu_);
    return api_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const RestApi> api_;
};

// Every job the admin sees, by id; empty with *error set when a page could not be read.
std::map<std::string, Json> ListAll(const RestApi& api, std::string* error) {
  std::map<std::string, Json> jobs;
  std::string token;
  do {
    const HttpAnswer page = api.Get("/api/v1/jobs?limit=1000&pageToken=" + token);
    if (page.status != 200) {
      *error = absl::StrCat("list: ", page.status, " ", page.text, page.transport_error);
      return {};
    }
    for (const Json& job : page.body["items"]) jobs[job["metadata"].value("id", "")] = job;
    token = page.body.value("nextPageToken", "");
  } while (!token.empty());
  return jobs;
}

// What is inconsistent about one job's state ("" when nothing).
std::string Inconsistency(const Json& job) {
  static const std::set<std::string> kPhases = {"Pending",   "Admitted", "Running",
                                                "Succeeded", "Failed",   "Cancelled"};
  const Json& status = job["status"];
  const std::string phase = status.value("phase", "");
  std::vector<std::string> problems;
  if (kPhases.count(phase) == 0) problems.push_back("invalid phase");
  if (!status.contains("submitTime")) problems.push_back("no submitTime");
  if (IsTerminalPhase(phase) && !status.contains("endTime")) problems.push_back("no endTime");
  if (!IsTerminalPhase(phase) && status.contains("endTime")) problems.push_back("endTime set");
  int expected_tasks = 0;
  for (const Json& group : job["spec"]["tasks"]) expected_tasks += group.value("replicas", 1);
  if (static_cast<int>(status["tasks"].size()) != expected_tasks) {
    problems.push_back(
        absl::StrCat(status["tasks"].size(), " task statuses for ", expected_tasks, " tasks"));
  }
  for (const Json& task : status["tasks"]) {
    const std::string name = task.value("name", "");
    if ((phase == "Admitted" || phase == "Running") && task.value("node", "").empty()) {
      problems.push_back(name + " not placed");
    }
    if (phase == "Succeeded" && task["exitCode"] != 0) {
      problems.push_back(name + " exitCode " + task["exitCode"].dump());
    }
  }
  if (phase == "Running" &&
      (status.value("cluster", "").empty() || !status.contains("startTime"))) {
    problems.push_back("running without cluster or startTime");
  }
  if (problems.empty()) return "";
  return absl::StrCat("job ", job["metadata"].value("id", "?"), " (", phase,
                      "): ", absl::StrJoin(problems, ", "), "; ", status.dump());
}

class CrashTest : public ::testing::Test {
 protected:
  void TearDown() override {
    StopClients();
    if (HasFailure() && server_ != nullptr) {
      const std::string log = server_->Log();
      std::cerr << "--- server log of the last start (tail) ---\n"
                << log.substr(log.size() > 8000 ? log.size() - 8000 : 0) << "\n";
    }
  }

  void StartClients() {
    for (int client = 0; client < kClients; ++client) {
      clients_.emplace_back([this, client] { ClientMain(client); });
    }
  }

  void StopClients() {
    stop_ = true;
    for (std::thread& thread : clients_) thread.join();
    clients_.clear();
  }

  // Submits small jobs one after another; an unanswered submission is retried with the same
  // requestId until it is answered (across restarts) or the test stops.
  void ClientMain(int client) {
    for (int n = 0; !stop_; ++n) {
      const int replicas = 1 + (n + client) % 2;
      Json job = ShellJob("", absl::StrCat("echo \"$TESSERA_JOB_ID $TESSERA_TASK_NAME\" >> ",
                                           marker_, "; sleep ", kTaskSleep));
      const std::string request_id = absl::StrCat("client", client, "-", n);
      job["metadata"]["requestId"] = request_id;
      job["spec"]["tasks"][0]["replicas"] = replicas;
      job["spec"]["restartPolicy"] = {{"onFailure", "fail"}};
      while (!stop_) {
        const HttpAnswer answer = endpoint_.Get()->Submit(job);
        if (answer.status == 201 || answer.status == 200) {
          std::lock_guard lock(mu_);
          acks_.push_back({request_id, answer.body["metadata"].value("id", ""), replicas});
          if (answer.status == 200) ++retried_acks_;
          break;
        }
        // No answer (killed or restarting), not ready yet, or the write queue is full: retry.
        if (answer.status != 0 && answer.status != 503 && answer.status != 429) {
          std::lock_guard lock(mu_);
          client_errors_.push_back(absl::StrCat(request_id, ": ", answer.status, " ", answer.text));
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      std::this_thread::sleep_for(kSubmitPause);
    }
  }

  std::vector<Ack> Acks() {
    std::lock_guard lock(mu_);
    return acks_;
  }

  // Checks the acknowledged submissions and every job's state against the running server.
  // Returns the jobs read.
  std::map<std::string, Json> CheckState(const std::string& when) {
    const std::vector<Ack> acks = Acks();  // before listing: each of these must be there
    std::string error;
    std::map<std::string, Json> jobs = ListAll(*endpoint_.Get(), &error);
    EXPECT_EQ(error, "") << when;
    if (!error.empty()) return jobs;
    for (const Ack& ack : acks) {
      const auto found = jobs.find(ack.id);
      if (found == jobs.end()) {
        ADD_FAILURE() << when << ": acknowledged job " << ack.id << " (" << ack.request_id
                      << ") is missing";
        continue;
      }
      EXPECT_EQ(found->second["metadata"].value("requestId", ""), ack.request_id)
          << when << ": job " << ack.id;
    }
    std::map<std::string, std::string> by_request;
    for (const auto& [id, job] : jobs) {
      const std::string problem = Inconsistency(job);
      EXPECT_EQ(problem, "") << when;
      const std::string request_id = job["metadata"].value("requestId", "");
      const auto [it, inserted] = by_request.emplace(request_id, id);
      EXPECT_TRUE(inserted) << when << ": requestId " << request_id << " names jobs " << it->second
                            << " and " << id;
    }
    return jobs;
  }

  TempDir dir_{"tessera-it-crash"};
  const std::string marker_ = dir_.Sub("marker.txt");
  std::unique_ptr<ServerProcess> server_;
  Endpoint endpoint_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> clients_;
  std::mutex mu_;
  std::vector<Ack> acks_;
  int retried_acks_ = 0;
  std::vector<std::string> client_errors_;
};

TEST_F(CrashTest, KillNineUnderLoadLosesNothingAndRunsNothingTwice) {
  const int64_t rounds = EnvInt("TESSERA_CRASH_ROUNDS", 20);
  const uint64_t seed = static_cast<uint64_t>(EnvInt("TESSERA_CRASH_SEED", 20260101));
  std::cout << "crash test: " << rounds << " rounds, seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> load_ms(200, 1200);
  std::uniform_int_distribution<int> down_ms(0, 300);
  std::uniform_int_distribution<int> start_kill(0, 3);
  int start_kills = 0;

  server_ = std::make_unique<ServerProcess>(
      ServerOptions{.data_dir = dir_.Sub("data"),
                    .log_dir = dir_.path(),
                    .extra_args = {"--rate-limit", "0", "--local-gpus", "T4:2:16Gi"}});
  absl::Status started = server_->Start();
  ASSERT_TRUE(started.ok()) << started;
  const std::string admin_token = server_->admin_token();
  endpoint_.Set(*server_);
  StartClients();

  for (int64_t round = 1; round <= rounds; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(load_ms(rng)));
    server_->Kill();
    std::this_thread::sleep_for(std::chrono::milliseconds(down_ms(rng)));
    if (start_kill(rng) == 0) {  // now and then, also kill it while it starts and recovers
      ASSERT_TRUE(server_->Spawn().ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(down_ms(rng)));
      server_->Kill();
      ++start_kills;
    }
    started = server_->Start();
    ASSERT_TRUE(started.ok()) << "round " << round << ": " << started;
    EXPECT_EQ(server_->admin_token(), admin_token) << "round " << round;
    endpoint_.Set(*server_);
    CheckState(absl::StrCat("after restart ", round));
    if (HasFailure()) break;  // the server log of this start is what explains it
  }
  StopClients();

  // Let every job end.
  std::map<std::string, Json> jobs;
  const bool all_ended = WaitUntil(
      [&] {
        std::string error;
        jobs = ListAll(*endpoint_.Get(), &error);
        if (!error.empty()) return false;
        for (const auto& [id, job] : jobs) {
          if (!IsTerminalPhase(job["status"].value("phase", ""))) return false;
        }
        return true;
      },
      std::chrono::minutes(3));
  jobs = CheckState("at the end");
  std::vector<std::string> unfinished;
  for (const auto& [id, job] : jobs) {
    if (!IsTerminalPhase(job["status"].value("phase", ""))) unfinished.push_back(id);
  }
  EXPECT_TRUE(all_ended) << "jobs that never ended: " << absl::StrJoin(unfinished, " ");

  // Every acknowledged job succeeded, or says why not; no task ran twice; a Succeeded job's
  // tasks each ran once, and a task the server reports lost (ended without an exit code while
  // nothing but the server was killed) never ran at all.
  std::map<std::string, int> lines;
  {
    std::ifstream in(marker_);
    for (std::string line; std::getline(in, line);) ++lines[line];
  }
  const auto runs = [&](const std::string& line) {
    const auto found = lines.find(line);
    return found == lines.end() ? 0 : found->second;
  };
  for (const auto& [line, count] : lines) {
    EXPECT_EQ(count, 1) << "\"" << line << "\" ran " << count << " times";
  }
  const std::vector<Ack> acks = Acks();
  int succeeded = 0;
  int lost = 0;
  for (const Ack& ack : acks) {
    const auto found = jobs.find(ack.id);
    if (found == jobs.end()) continue;  // already reported by CheckState
    const Json& status = found->second["status"];
    const std::string phase = status.value("phase", "");
    if (phase == "Succeeded") {
      ++succeeded;
    } else {
      EXPECT_NE(status.value("reason", ""), "")
          << "job " << ack.id << " ended " << phase << " without a reason: " << status.dump();
      std::cout << "job " << ack.id << " ended " << phase << ": " << status.value("reason", "")
                << ": " << status.value("message", "") << "\n";
    }
    for (const Json& task : status["tasks"]) {
      const std::string line = absl::StrCat(ack.id, " ", task.value("name", ""));
      if (phase == "Succeeded") {
        EXPECT_EQ(runs(line), 1) << "\"" << line << "\": the job Succeeded";
      } else if (task.value("phase", "") == "Failed" && task["exitCode"].is_null()) {
        ++lost;
        EXPECT_EQ(runs(line), 0) << "\"" << line
                                 << "\" ran, yet the server lost it: " << status.dump();
      }
    }
  }
  {
    std::lock_guard lock(mu_);
    EXPECT_TRUE(client_errors_.empty()) << absl::StrJoin(client_errors_, "\n");
  }
  std::cout << "crash test: " << rounds << " kills (" << start_kills << " more during a start), "
            << acks.size() << " acknowledged submissions (" << retried_acks_
            << " answered by a retry), " << jobs.size() << " jobs, " << succeeded
            << " acknowledged jobs succeeded, " << lost << " tasks lost, " << lines.size()
            << " task runs\n";
  EXPECT_GT(succeeded, 0);
}

}  // namespace
}  // namespace tessera::integration
