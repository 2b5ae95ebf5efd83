// Feeds arbitrary text to the SWF trace parser (sim/swf) and checks its invariants: no crash or
// undefined behaviour; an error is InvalidArgument that starts with the source name and has a
// bounded message; a parsed trace respects the limits, its jobs have known ids, no value below
// -1 and increasing line numbers; and writing the jobs back as SWF lines parses to the same
// jobs.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "fuzz_check.h"
#include "sim/swf/swf_job.h"
#include "sim/swf/swf_trace.h"

namespace tessera::sim::swf {
namespace {

using ::tessera::fuzz::Require;

constexpr std::string_view kSource = "fuzz.swf";
constexpr size_t kMaxMessage = 1000;

SwfLimits FuzzLimits() {
  SwfLimits limits;
  limits.max_line_bytes = 512;
  limits.max_jobs = 1000;
  return limits;
}

int64_t Integer(const SwfJob& job, int column) {
  const int64_t values[kSwfFieldCount] = {job.id,
                                          job.submit_time,
                                          job.wait_time,
                                          job.run_time,
                                          job.allocated_processors,
                                          0,
                                          job.used_memory,
                                          job.requested_processors,
                                          job.requested_time,
                                          job.requested_memory,
                                          job.status,
                                          job.user,
                                          job.group,
                                          job.executable,
                                          job.queue,
                                          job.partition,
                                          job.preceding_job,
                                          job.think_time};
  return values[column];
}

std::string Render(const SwfJob& job) {
  std::string line;
  for (int c = 0; c < kSwfFieldCount; ++c) {
    if (c == 5) {
      line += fmt::format("{} ", job.average_cpu_time);
    } else {
      line += fmt::format("{} ", Integer(job, c));
    }
  }
  return line + "\n";
}

void CheckTrace(const SwfTrace& trace, std::string_view input) {
  Require(!trace.jobs.empty(), "accepted a trace without jobs", input);
  Require(static_cast<int64_t>(trace.jobs.size()) <= FuzzLimits().max_jobs, "job limit ignored",
          input);
  int64_t previous_line = 0;
  for (const SwfJob& job : trace.jobs) {
    Require(job.id != kSwfUnknown, "job without an id", input);
    Require(job.line > previous_line, "line numbers do not increase", input);
    previous_line = job.line;
    for (int c = 0; c < kSwfFieldCount; ++c) {
      Require(c == 5 || Integer(job, c) >= kSwfUnknown, "value below -1", input);
    }
    Require(job.average_cpu_time >= 0 || job.average_cpu_time == kSwfUnknown,
            "average cpu time below -1", input);
    const std::optional<int64_t> processors = SwfJobProcessors(job);
    if (processors.has_value()) Require(*processors > 0, "processors <= 0", input);
  }
}

void CheckRoundTrip(const SwfTrace& trace, std::string_view input) {
  std::string text;
  for (const SwfJob& job : trace.jobs) text += Render(job);
  absl::StatusOr<SwfTrace> again = ParseSwfTrace(text, kSource, FuzzLimits());
  Require(again.ok(), "rendered jobs do not parse", input,
          again.ok() ? std::string() : std::string(again.status().message()));
  Require(again->jobs.size() == trace.jobs.size(), "round trip changed the job count", input);
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    for (int c = 0; c < kSwfFieldCount; ++c) {
      Require(Integer(again->jobs[i], c) == Integer(trace.jobs[i], c), "round trip changed a value",
              input, text);
    }
    Require(again->jobs[i].average_cpu_time == trace.jobs[i].average_cpu_time,
            "round trip changed the average cpu time", input, text);
  }
}

}  // namespace
}  // namespace tessera::sim::swf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::sim::swf;  // NOLINT(google-build-using-namespace): fuzz entry
  using ::tessera::fuzz::Require;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<SwfTrace> trace = ParseSwfTrace(text, kSource, FuzzLimits());
  if (!trace.ok()) {
    const absl::Status& s = trace.status();
    const std::string message(s.message());
    Require(s.code() == absl::StatusCode::kInvalidArgument, "error is not InvalidArgument", text);
    Require(message.rfind(std::string(kSource), 0) == 0, "error does not start with the source",
            text);
    Require(message.size() <= kMaxMessage, "error message is unbounded", text);
    return 0;
  }
  CheckTrace(*trace, text);
  CheckRoundTrip(*trace, text);
  return 0;
}
