// Feeds arbitrary bytes to the job-spec codec (spec/jobspec.h) and checks that it
// never crashes, that every rejection is an InvalidArgument carrying its parts, and that every
// accepted job is valid and survives render -> parse unchanged, in YAML and in JSON. Inputs
// that look like JSON are also read by the YAML parser (JSON is YAML): when both accept, they
// must agree.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "spec/jobspec.h"

namespace tessera::spec {
namespace {

using ::tessera::fuzz::Require;

absl::StatusOr<spec::JobDocument> Parse(std::string_view text, spec::DocumentFormat format) {
  spec::ParseOptions options;
  options.format = format;
  return spec::ParseJobDocument(text, options);
}

void CheckRejection(const absl::Status& status, std::string_view input) {
  Require(status.code() == absl::StatusCode::kInvalidArgument, "a rejection is InvalidArgument",
          input, status.ToString());
  Require(!status.message().empty(), "a rejection says why", input, "");
  Require(spec::GetJobSpecError(status).has_value(), "a rejection carries its parts", input,
          status.ToString());
}

// render -> parse gives back the same job (compared by canonical rendering, which writes every
// field of the spec and metadata).
void CheckRoundTrip(const spec::JobDocument& job, std::string_view input) {
  const std::string canonical = spec::RenderJobJson(job);
  for (const auto& [rendered, format] :
       {std::pair{spec::RenderJobYaml(job), spec::DocumentFormat::kYaml},
        std::pair{canonical, spec::DocumentFormat::kJson}}) {
    const absl::StatusOr<spec::JobDocument> back = Parse(rendered, format);
    Require(back.ok(), "a rendered job parses", input,
            back.ok() ? rendered : back.status().ToString() + "\n" + rendered);
    Require(spec::RenderJobJson(*back) == canonical, "render -> parse round-trips", input,
            rendered + "\nvs\n" + spec::RenderJobJson(*back));
  }
}

}  // namespace
}  // namespace tessera::spec

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::spec;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<JobDocument> job = Parse(input, DocumentFormat::kAuto);
  if (!job.ok()) {
    CheckRejection(job.status(), input);
    return 0;
  }
  Require(job->spec.Validate("spec").ok(), "an accepted job is valid", input, "");
  Require(job->metadata.id.empty() && !job->status.has_value(), "no server fields from a client",
          input, "");
  CheckRoundTrip(*job, input);
  const absl::StatusOr<JobDocument> json = Parse(input, DocumentFormat::kJson);
  if (json.ok()) {
    const absl::StatusOr<JobDocument> yaml = Parse(input, DocumentFormat::kYaml);
    if (yaml.ok()) {
      Require(RenderJobJson(*json) == RenderJobJson(*yaml),
              "JSON and YAML readings agree", input,
              RenderJobJson(*json) + "\nvs\n" + RenderJobJson(*yaml));
    }
  }
  return 0;
}
