#include "server/job_record.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "spec/jobspec.h"
#include "spec/request_error.h"

namespace tessera::server {
namespace {

using ::testing::HasSubstr;

spec::JobDocument Document() {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(R"(
apiVersion: tessera/v1
kind: Job
metadata: {name: train, requestId: r-1}
spec:
  timeLimit: 1h
  duration: 5m
  tasks:
  - {name: worker, replicas: 2, resources: {cpu: "2", gpu: 1}, command: [python, train.py]}
)");
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

// The spec of `record` as it is stored and read back.
spec::JobDocument StoredSpec(const JobRecord& record) {
  absl::StatusOr<spec::JobDocument> spec = DecodeJobSpec(SpecKey(record.id), EncodeJobSpec(record));
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *std::move(spec) : spec::JobDocument();
}

// The stored record `value` of `record`, read back with its stored spec.
absl::StatusOr<JobRecord> ReadBack(const JobRecord& record, std::string_view value) {
  return DecodeJobRecord(JobKey(record.id), value, StoredSpec(record));
}

// `record` as versions before specs had their own keys stored it: the spec inline.
nlohmann::json WithInlineSpec(const JobRecord& record) {
  nlohmann::json encoded = nlohmann::json::parse(EncodeJobRecord(record));
  encoded["document"] = EncodeJobSpec(record);
  return encoded;
}

TEST(JobRecordTest, NewRecordIsPendingWithOneTaskPerReplica) {
  const JobRecord record = NewJobRecord(7, "team-a", Document(), TimePoint(Duration(1000)));
  EXPECT_EQ(record.document.metadata.id, "7");
  EXPECT_EQ(record.status().phase, JobPhase::kPending);
  EXPECT_EQ(record.status().submit_time, TimePoint(Duration(1000)));
  ASSERT_EQ(record.tasks.size(), 2u);
  EXPECT_EQ(record.tasks[1].name, "worker-1");
  ASSERT_EQ(record.status().tasks.size(), 2u);
}

TEST(JobRecordTest, UnnamedJobsAreNamedAfterTheirId) {
  spec::JobDocument doc = Document();
  doc.spec.name.clear();
  EXPECT_EQ(NewJobRecord(12, "t", doc, TimePoint()).document.spec.name, "job-12");
}

TEST(JobRecordTest, EncodingRoundTrips) {
  JobRecord record = NewJobRecord(42, "team-a", Document(), TimePoint(Duration(5)));
  record.status().phase = JobPhase::kRunning;
  record.status().cluster = "sim";
  record.status().start_time = TimePoint(Duration(9));
  record.tasks[0].cluster = "sim";
  record.tasks[0].placement.node = "n1";
  record.tasks[0].placement.gpus = {2};
  record.tasks[0].placement.gpu_milli = 1000;
  record.tasks[0].launch_id = "42-worker-0-a1";
  record.tasks[0].launched = true;
  record.tasks[0].phase = TaskPhase::kFailed;
  record.tasks[0].exit_code = 3;
  record.tasks[0].ended = true;
  record.tasks[0].reason = "Error";
  record.tasks[0].start_time = TimePoint(Duration(9));
  record.TaskChanged(0);
  record.attempt = 1;
  record.restarts = 1;
  record.cancel_requested = true;
  record.preemption = control::Eviction::kPreemptCancel;
  record.status().preemptions = 2;
  record.last_event = 6;
  record.SyncTaskStatus();

  // The record and its tasks are stored apart; a task left as it started has no key.
  std::vector<store::Op> writes = TaskWrites(record);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].key, TaskKey(42, 0));
  std::map<int64_t, JobRecord> jobs;
  absl::StatusOr<JobRecord> decoded = ReadBack(record, EncodeJobRecord(record));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  jobs.emplace(42, *std::move(decoded));
  ASSERT_TRUE(LoadStoredTask(jobs, writes[0].key, writes[0].value).ok());
  const JobRecord& back = jobs.at(42);
  EXPECT_EQ(EncodeJobRecord(back), EncodeJobRecord(record));
  EXPECT_EQ(EncodeTaskRecord(back.tasks[0]), EncodeTaskRecord(record.tasks[0]));
  EXPECT_EQ(back.tasks[1].name, "worker-1");
  EXPECT_EQ(back.document.spec.duration, Duration(300'000));
  EXPECT_EQ(back.document.metadata.request_id, "r-1");
  EXPECT_EQ(back.status().tasks[0].exit_code, 3);
  EXPECT_EQ(back.status().tasks[0].node, "n1");
  EXPECT_EQ(back.tasks[0].placement.gpus.size(), 1u);
  EXPECT_EQ(back.preemption, control::Eviction::kPreemptCancel);
  EXPECT_EQ(back.status().preemptions, 2);
  // What was loaded is known to be stored: nothing to write again.
  EXPECT_TRUE(TaskWrites(jobs.at(42)).empty());
}

TEST(JobRecordTest, OnlyTasksThatChangedAreWrittenAndARestartedTaskLosesItsKey) {
  JobRecord record = NewJobRecord(5, "t", Document(), TimePoint());
  EXPECT_TRUE(TaskWrites(record).empty());  // a new job's tasks have no keys
  record.tasks[1].placement.node = "n1";
  record.tasks[1].launch_id = "5-worker-1-a0";
  record.TaskChanged(1);
  std::vector<store::Op> placed = TaskWrites(record);
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].type, store::Op::Type::kPut);
  EXPECT_EQ(placed[0].key, TaskKey(5, 1));
  EXPECT_TRUE(TaskWrites(record).empty());
  record.tasks[1].phase = TaskPhase::kRunning;
  record.TaskChanged(1);
  EXPECT_EQ(TaskWrites(record).size(), 1u);
  record.tasks[1] = TaskRuntime{.name = "worker-1"};  // a restart
  record.AllTasksChanged();
  std::vector<store::Op> reset = TaskWrites(record);
  ASSERT_EQ(reset.size(), 1u);  // task 0, marked too, is as it was stored: no write
  EXPECT_EQ(reset[0].type, store::Op::Type::kDelete);
  EXPECT_TRUE(TaskWrites(record).empty());
}

TEST(JobRecordTest, ATaskMarkedChangedIsSyncedIntoTheStatusOnceAndOthersAreNotVisited) {
  JobRecord record = NewJobRecord(6, "t", Document(), TimePoint());
  record.tasks[0].placement.node = "n1";
  record.tasks[0].phase = TaskPhase::kRunning;
  record.TaskChanged(0);
  record.SyncTaskStatus();
  EXPECT_EQ(record.status().tasks[0].node, "n1");
  EXPECT_EQ(record.status().tasks[0].phase, TaskPhase::kRunning);
  EXPECT_TRUE(record.unsynced_tasks.empty());
  ASSERT_EQ(TaskWrites(record).size(), 1u);  // the write looks at the same mark, apart
  EXPECT_TRUE(record.unwritten_tasks.empty());
}

TEST(ChangedTasksTest, TakesEachMarkedIndexOnceInTheOrderFirstMarked) {
  ChangedTasks changed;
  EXPECT_TRUE(changed.empty());
  changed.Mark(3);
  changed.Mark(0);
  changed.Mark(3);
  EXPECT_EQ(changed.Take(), (std::vector<int32_t>{3, 0}));
  EXPECT_TRUE(changed.empty());
  EXPECT_TRUE(changed.Take().empty());
  changed.Mark(1);
  changed.MarkAll(3);
  EXPECT_EQ(changed.Take(), (std::vector<int32_t>{1, 0, 2}));
}

TEST(JobRecordTest, RecordsWithInlineTasksStillDecodeAndMoveThemToKeys) {
  JobRecord record = NewJobRecord(8, "t", Document(), TimePoint());
  nlohmann::json encoded = WithInlineSpec(record);
  nlohmann::json task = nlohmann::json::parse(EncodeTaskRecord(record.tasks[0]));
  task["node"] = "n3";
  encoded["tasks"] = {task, nlohmann::json::parse(EncodeTaskRecord(record.tasks[1]))};
  absl::StatusOr<JobRecord> back = DecodeJobRecord(JobKey(8), encoded.dump(), std::nullopt);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->tasks[0].placement.node, "n3");
  EXPECT_FALSE(back->spec_stored);  // its next write stores the spec under its key
  EXPECT_FALSE(nlohmann::json::parse(EncodeJobRecord(*back)).contains("tasks"));
  EXPECT_EQ(TaskWrites(*back).size(), 1u);
  encoded["tasks"].erase(1);
  EXPECT_EQ(DecodeJobRecord(JobKey(8), encoded.dump(), std::nullopt).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(JobRecordTest, StoredTasksOfNoJobOrBadKeysAreDataLoss) {
  std::map<int64_t, JobRecord> jobs;
  jobs.emplace(1, NewJobRecord(1, "t", Document(), TimePoint()));
  const std::string task = EncodeTaskRecord(TaskRuntime{.name = "worker-0", .ended = true});
  EXPECT_TRUE(LoadStoredTask(jobs, TaskKey(1, 0), task).ok());
  for (const std::string& key :
       {TaskKey(2, 0), TaskKey(1, 2), TaskKey(1, 1), std::string("/tessera/tasks/1/0")}) {
    absl::Status status = LoadStoredTask(jobs, key, task);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << key;
    EXPECT_THAT(status.message(), HasSubstr(key));
  }
  EXPECT_EQ(LoadStoredTask(jobs, TaskKey(1, 0), "{").code(), absl::StatusCode::kDataLoss);
}

TEST(JobRecordTest, StoredTextIsBoundedCleanAndCutAtACharacter) {
  EXPECT_EQ(BoundText("fine\ttext\n", 64), "fine\ttext\n");
  EXPECT_EQ(BoundText(std::string("a\x01"
                                  "b\xff"),
                      64),
            "a b ");
  EXPECT_EQ(BoundText("abcdefgh", 6), "abc…");
  EXPECT_EQ(BoundText("abcdef", 6), "abcdef");  // at the bound: whole
  EXPECT_EQ(BoundText("ab\x01" "def", 6), "ab def");
  EXPECT_EQ(BoundText("éééé", 6), "é…");  // never half a character
  EXPECT_LE(BoundText(std::string(1 << 20, 'x'), 4096).size(), 4096u);

  JobRecord record = NewJobRecord(3, "t", Document(), TimePoint());
  record.status().message = std::string(1 << 20, 'm');
  record.tasks[0].message = std::string(1 << 20, 'm');
  record.tasks[0].ended = true;
  EXPECT_LT(EncodeJobRecord(record).size(), 16u * 1024);
  EXPECT_LT(EncodeTaskRecord(record.tasks[0]).size(), 2u * 1024);
  const JobEvent event{.job_id = "3", .type = "Placed", .message = std::string(1 << 20, 'p')};
  EXPECT_LT(EncodeJobEvent(event).size(), 8u * 1024);
}

TEST(JobRecordTest, ADelInTheSpecReadsBack) {
  spec::JobDocument doc = Document();
  doc.spec.tasks[0].command = {"echo", "a\x7f" "b"};
  doc.spec.tasks[0].env = {{"A", "\x7f"}};
  const JobRecord record = NewJobRecord(5, "t", doc, TimePoint());
  absl::StatusOr<JobRecord> back = ReadBack(record, EncodeJobRecord(record));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->document.spec.tasks[0].command, doc.spec.tasks[0].command);
  EXPECT_EQ(back->document.spec.tasks[0].env, doc.spec.tasks[0].env);
}

spec::JobDocument Tasks(int replicas, int command_bytes, int gpus = 0) {
  spec::JobDocument doc = Document();
  doc.spec.tasks[0].replicas = replicas;
  doc.spec.tasks[0].command = {"sh", "-c", std::string(command_bytes, 'x')};
  doc.spec.tasks[0].request.gpu_count = gpus;
  return doc;
}

TEST(JobRecordTest, AJobIsStorableWhenEveryStateItMayReachFitsTheStore) {
  const store::TxnLimits limits;  // etcd's, as the SQLite store's default
  // The largest job the API takes, placed task by task on nodes with the longest names.
  EXPECT_TRUE(CheckStorable(Tasks(kMaxTasksPerJob, 64 * 1024, 8), "team-a", limits).ok());

  absl::Status command = CheckStorable(Tasks(1, 2 << 20), "team-a", limits);
  EXPECT_EQ(command.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec::ErrorField(command), "spec.tasks[0].command") << command;
  EXPECT_THAT(command.message(), HasSubstr("bytes per value"));

  spec::JobDocument env = Tasks(1, 10);
  env.spec.tasks[0].env["BIG"] = std::string(2 << 20, 'e');
  EXPECT_EQ(spec::ErrorField(CheckStorable(env, "t", limits)), "spec.tasks[0].env.BIG");

  // The submission writes the spec and the record in one transaction.
  absl::Status submit = CheckStorable(Tasks(1, 1 << 20), "t", {.max_total_bytes = 1 << 20});
  EXPECT_EQ(spec::ErrorField(submit), "spec.tasks[0].command") << submit;
  EXPECT_THAT(submit.message(), HasSubstr("bytes per transaction"));

  absl::Status replicas = CheckStorable(Tasks(4096, 10), "t", {.max_total_bytes = 1 << 20});
  EXPECT_EQ(spec::ErrorField(replicas), "spec.tasks[0].replicas") << replicas;
  EXPECT_THAT(replicas.message(), HasSubstr("bytes per transaction"));
  EXPECT_EQ(spec::ErrorField(CheckStorable(Tasks(4096, 10), "t", {.max_entries = 4000})),
            "spec.tasks[0].replicas");

  absl::Status gpus = CheckStorable(Tasks(1, 10, 200'000), "t", limits);
  EXPECT_EQ(spec::ErrorField(gpus), "spec.tasks[0].resources.gpu") << gpus;
}

TEST(JobRecordTest, RecordsWithoutPreemptionKeysDecode) {
  JobRecord record = NewJobRecord(7, "team-a", Document(), TimePoint(Duration(5)));
  nlohmann::json encoded = nlohmann::json::parse(EncodeJobRecord(record));
  encoded.erase("preemption");
  encoded["status"].erase("preemptions");
  absl::StatusOr<JobRecord> back = ReadBack(record, encoded.dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->preemption, control::Eviction::kNone);
  EXPECT_EQ(back->status().preemptions, 0);
}

// A job of every optional field: metadata, spec, task groups with their own placement.
spec::JobDocument FullDocument() {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(R"(
apiVersion: tessera/v1
kind: Job
metadata: {name: full-one, labels: {team: vision, "a/b": "ü😀"}, requestId: "r-\u00e9"}
spec:
  queue: q
  priority: -3
  minAvailable: 2
  timeLimit: 2h
  duration: 90s
  preemptible: false
  minRuntime: 1m
  terminationGracePeriod: 5s
  restartPolicy: {onFailure: fail, maxRestarts: 7}
  tolerations: [{key: dedicated, value: infer, effect: NoSchedule}, {operator: Exists}]
  clusterSelector: {region: east}
  clusterAffinity:
    required: [{key: tier, operator: NotIn, values: [spot]}]
    preferred: [{weight: 9, match: [{key: gpu, operator: Exists}]}]
  clusterAntiAffinity: [{key: old, operator: DoesNotExist}]
  tasks:
  - name: worker
    replicas: 2
    nodeSelector: {pool: a}
    resources: {cpu: 1500m, memory: 3Gi, gpu: 2, gpuMemory: 40Gi, gpuModel: [H100], rdma/hca: 1}
    command: [python, "tab\there"]
    args: ["--x", ""]
    env: {A: "1", B: "line\nbreak"}
    workingDir: /w
  - name: ps
    resources: {gpu: 0.5, ephemeral-storage: 1Gi}
)");
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

// Everything a decoded record holds, as text.
std::string Everything(const JobRecord& record) {
  std::string out = fmt::format("{} {} {} {}\n", record.id, record.tenant, EncodeJobRecord(record),
                                spec::RenderJobJson(record.document));
  for (const TaskRuntime& task : record.tasks) out += EncodeTaskRecord(task) + "\n";
  return out + fmt::format("{}", record.stored_tasks.size());
}

// Stored records decode to what was stored, and to the same record when nlohmann-json has to
// read them (a key of no version makes the quick reading give way; json ignores such keys).
TEST(JobRecordTest, RecordsReadTheSameWhicheverWayTheyAreRead) {
  std::vector<JobRecord> records;
  records.push_back(NewJobRecord(1, "t", Document(), TimePoint(Duration(5))));
  JobRecord full = NewJobRecord(123456789012345678, "team \"é\"", FullDocument(),
                                TimePoint(Duration(1'700'000'000'123)));
  full.status() = {.phase = JobPhase::kSucceeded,
                   .reason = "Done",
                   .message = "all\nfine \"here\" 😀",
                   .cluster = "east-1",
                   .submit_time = TimePoint(Duration(-5)),
                   .start_time = TimePoint(Duration(7)),
                   .end_time = TimePoint(Duration(9)),
                   .preemptions = 3};
  full.SyncTaskStatus();
  full.attempt = 4;
  full.restarts = 2;
  full.cancel_requested = true;
  full.preemption = control::Eviction::kPreemptRequeue;
  full.last_event = 99;
  records.push_back(full);
  full.preemption = control::Eviction::kPreemptCancel;
  full.status().phase = JobPhase::kAdmitted;
  full.status().start_time.reset();
  full.status().end_time.reset();
  full.attempt = full.restarts = -1;
  records.push_back(full);

  for (const JobRecord& record : records) {
    const std::string stored = EncodeJobRecord(record);
    absl::StatusOr<JobRecord> quick = ReadBack(record, stored);
    ASSERT_TRUE(quick.ok()) << quick.status();
    nlohmann::json other = nlohmann::json::parse(stored);
    other["zzUnknown"] = 1;
    absl::StatusOr<JobRecord> full_read = ReadBack(record, other.dump());
    ASSERT_TRUE(full_read.ok()) << full_read.status();
    EXPECT_EQ(Everything(*quick), Everything(*full_read));
    EXPECT_EQ(Everything(*quick), Everything(record));
    // Spaced out and in another key order, it still reads the same.
    nlohmann::ordered_json reordered;
    for (auto it = other.rbegin(); it != other.rend(); ++it) {
      if (it.key() != "zzUnknown") reordered[it.key()] = it.value();
    }
    absl::StatusOr<JobRecord> spaced = ReadBack(record, reordered.dump(2));
    ASSERT_TRUE(spaced.ok()) << spaced.status();
    EXPECT_EQ(Everything(*spaced), Everything(record));
    // As an older version stored it, with its spec inline, it reads the same without the spec.
    absl::StatusOr<JobRecord> older =
        DecodeJobRecord(JobKey(record.id), WithInlineSpec(record).dump(), std::nullopt);
    ASSERT_TRUE(older.ok()) << older.status();
    EXPECT_EQ(Everything(*older), Everything(record));
  }
}

// Stored tasks too: the quick reading and nlohmann-json's give the same task.
TEST(JobRecordTest, StoredTasksReadTheSameWhicheverWayTheyAreRead) {
  TaskRuntime placed{.name = "worker-1",
                     .cluster = "east",
                     .phase = TaskPhase::kFailed,
                     .exit_code = -9,
                     .launch_id = "4-worker-1-a2",
                     .launched = true,
                     .start_time = TimePoint(Duration(123)),
                     .ended = true,
                     .reason = "Lost",
                     .message = "node \"n\" gone\n😀"};
  placed.placement.node = "n-1";
  placed.placement.gpus = {0, 3, 7};
  placed.placement.gpu_milli = 1000;
  placed.placement.gpu_memory = int64_t{40} << 30;
  for (const TaskRuntime& task : {placed, TaskRuntime{.name = "worker-1", .launched = true}}) {
    const std::string stored = EncodeTaskRecord(task);
    nlohmann::json other = nlohmann::json::parse(stored);
    other["zzUnknown"] = true;
    std::vector<std::string> read;
    for (const std::string& value : {stored, other.dump()}) {
      std::map<int64_t, JobRecord> jobs;
      jobs.emplace(4, NewJobRecord(4, "t", Document(), TimePoint()));
      ASSERT_TRUE(LoadStoredTask(jobs, TaskKey(4, 1), value).ok()) << value;
      const JobRecord& record = jobs.at(4);
      read.push_back(EncodeTaskRecord(record.tasks[1]) + spec::RenderJobJson(record.document));
    }
    EXPECT_EQ(read[0], read[1]);
    EXPECT_THAT(read[0], ::testing::StartsWith(stored));
  }
}

// Values json converts (a float for an integer) or refuses, whichever way the record is read.
TEST(JobRecordTest, OddRecordsReadAsNlohmannJsonReadsThem) {
  const JobRecord record = NewJobRecord(3, "t", Document(), TimePoint(Duration(5)));
  const nlohmann::json stored = nlohmann::json::parse(EncodeJobRecord(record));
  nlohmann::json converted = stored;
  converted["attempt"] = 2.0;  // json's get<int32_t> takes it as 2
  absl::StatusOr<JobRecord> back = ReadBack(record, converted.dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->attempt, 2);
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"tenant", 5},
                                                           {"cancelRequested", "yes"},
                                                           {"preemption", "later"},
                                                           {"document", "{}"},
                                                           {"status", nullptr}}) {
    nlohmann::json bad = stored;
    bad[field] = value;
    EXPECT_EQ(ReadBack(record, bad.dump()).status().code(), absl::StatusCode::kDataLoss) << field;
  }
  nlohmann::json no_phase = stored;
  no_phase["status"]["phase"] = "Sleeping";
  EXPECT_EQ(ReadBack(record, no_phase.dump()).status().code(), absl::StatusCode::kDataLoss);
}

// The spec is written once, apart: a job's record holds none of it, and a record needs its spec.
TEST(JobRecordTest, TheSpecIsStoredApartFromTheRecord) {
  const JobRecord record = NewJobRecord(9, "t", Document(), TimePoint());
  EXPECT_THAT(EncodeJobSpec(record), HasSubstr("train.py"));
  EXPECT_THAT(EncodeJobSpec(record), HasSubstr("r-1"));  // the request id
  EXPECT_THAT(EncodeJobRecord(record), ::testing::Not(HasSubstr("train.py")));
  const spec::JobDocument spec = StoredSpec(record);
  EXPECT_EQ(spec.metadata.id, "9");
  EXPECT_FALSE(spec.status.has_value());
  absl::StatusOr<JobRecord> back = ReadBack(record, EncodeJobRecord(record));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->spec_stored);
  EXPECT_EQ(spec::RenderJobJson(back->document), spec::RenderJobJson(record.document));

  absl::StatusOr<JobRecord> without =
      DecodeJobRecord(JobKey(9), EncodeJobRecord(record), std::nullopt);
  EXPECT_EQ(without.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(without.status().message(), HasSubstr(SpecKey(9)));
  const JobRecord other = NewJobRecord(10, "t", Document(), TimePoint());
  EXPECT_EQ(DecodeJobRecord(JobKey(9), EncodeJobRecord(record), StoredSpec(other)).status().code(),
            absl::StatusCode::kDataLoss);

  for (const std::string& bad : {std::string("{"), std::string("{}"), std::string("[1]")}) {
    absl::StatusOr<spec::JobDocument> decoded = DecodeJobSpec(SpecKey(9), bad);
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_THAT(decoded.status().message(), HasSubstr(SpecKey(9)));
  }
  EXPECT_EQ(DecodeJobSpec(JobKey(9), EncodeJobSpec(record)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(IdOfKey(SpecKey(123), kSpecPrefix), 123);
  EXPECT_EQ(IdOfKey(SpecKey(123), kJobPrefix), std::nullopt);
  EXPECT_EQ(IdOfKey(SpecKey(123) + "/x", kSpecPrefix), std::nullopt);
}

TEST(JobRecordTest, CorruptRecordsAreDataLoss) {
  const JobRecord record = NewJobRecord(1, "t", Document(), TimePoint());
  const std::string good = EncodeJobRecord(record);
  for (const std::string& bad : {std::string("{"), std::string("[]"), std::string("{\"id\":1}")}) {
    absl::StatusOr<JobRecord> decoded = ReadBack(record, bad);
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_THAT(decoded.status().message(), HasSubstr(JobKey(1)));
  }
  EXPECT_EQ(DecodeJobRecord(JobKey(2), good, StoredSpec(record)).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(JobRecordTest, EventsRoundTrip) {
  const JobEvent event{.job_id = "3",
                       .sequence = 2,
                       .time = TimePoint(Duration(77)),
                       .type = "Placed",
                       .phase = JobPhase::kAdmitted,
                       .reason = "",
                       .message = "worker-0 → n1"};
  absl::StatusOr<JobEvent> back = DecodeJobEvent(EventKey(3, 2), EncodeJobEvent(event));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->message, event.message);
  EXPECT_EQ(back->phase, JobPhase::kAdmitted);
  EXPECT_EQ(back->time, event.time);
  EXPECT_EQ(DecodeJobEvent("k", "nope").status().code(), absl::StatusCode::kDataLoss);
}

TEST(JobRecordTest, KeysSortByIdAndIdsParseStrictly) {
  EXPECT_LT(JobKey(9), JobKey(10));
  EXPECT_LT(EventKey(1, 9), EventKey(1, 10));
  EXPECT_EQ(ParseJobId("42"), 42);
  for (const char* bad : {"", "0", "042", "-1", "4x", "99999999999999999999", " 1"}) {
    EXPECT_EQ(ParseJobId(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace tessera::server
