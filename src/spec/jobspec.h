// The job-spec codec: job documents (shared/JOBSPEC.md) in YAML or JSON to and from the core
// types, for the REST/gRPC API and the CLI (`tessera submit -f job.yaml`).
//
// Parsing accepts the camelCase keys of JOBSPEC.md exactly (docs/jobspec.md lists them with
// their defaults); any other key is an error, and so is a `status` or `metadata.id` from a
// client (the server sets them). The decoded spec is checked with JobSpec::Validate.
//
// Errors are InvalidArgument with the message
//     [SOURCE:][LINE:COLUMN: ]FIELD: MESSAGE
// e.g. "job.yaml:14:9: spec.tasks[1].resources.gpuu: unknown key". FIELD is the path in the
// document's own (camelCase) keys; LINE:COLUMN (1-based) is where the offending node starts
// and is left out when unknown; syntax and size errors have no FIELD. The same parts are
// attached to the status as a payload, readable with GetJobSpecError, for structured API
// error bodies. Hostile input (oversized, deeply nested, alias bombs, binary) is refused with
// such an error within the limits of ParseOptions; nothing here throws or aborts.
//
// Rendering writes a JobDocument in the JOBSPEC.md shape, quantities in Kubernetes notation
// ("8", "500m", "64Gi"), durations as Go-style strings ("1h30m"), times in RFC 3339 (UTC).
// For every spec that passes Validate, parsing the rendering of a document without id and
// status gives back the same spec and request id.
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spec/job_document.h"
#include "spec/priority_class.h"

namespace tessera::spec {

enum class DocumentFormat {
  kAuto,  // JSON when the text starts with '{' and parses as JSON, YAML otherwise
  kYaml,  // YAML 1.2 (a JSON text is valid YAML and decodes to the same job)
  kJson,  // strict JSON (RFC 8259), e.g. for Content-Type: application/json
};

struct ParseOptions {
  DocumentFormat format = DocumentFormat::kAuto;
  std::string source;           // prefixed to error messages: "job.yaml"; empty = none
  size_t max_bytes = 1 << 20;   // larger documents are refused
  int max_depth = 32;           // deeper nesting of lists and mappings is refused
  int64_t max_nodes = 100'000;  // values in the document, YAML aliases counted in full
  const PriorityClasses* priority_classes = nullptr;  // nullptr: BuiltinPriorityClasses()
};

// Parses a client's job document into metadata (request id) and spec; `status` stays nullopt
// and `metadata.id` empty.
absl::StatusOr<JobDocument> ParseJobDocument(std::string_view text,
                                             const ParseOptions& options = {});

// Every job document of a YAML stream (documents separated by "---" lines, as kubectl apply -f
// reads them; documents holding only comments or blank lines are skipped) or of one JSON
// document, in order. Errors as ParseJobDocument, for the first document that does not parse,
// with line numbers counted in the whole text; InvalidArgument when no document is there.
// `options.max_bytes` bounds each document.
absl::StatusOr<std::vector<JobDocument>> ParseJobDocuments(std::string_view text,
                                                           const ParseOptions& options = {});

// JSON, pretty-printed with `indent` spaces (indent < 0: one line). Keys of the JOBSPEC.md
// shape in its order; metadata.id and status only when set. A DEL (U+007F) in a string is
// written escaped, so that the text parses back (documents refuse a raw DEL).
std::string RenderJobJson(const JobDocument& job, int indent = 2);
// The same document as block YAML; a DEL is written escaped there too.
std::string RenderJobYaml(const JobDocument& job);

// The parts of a parse error, from the payload of a status returned by ParseJobDocument.
struct JobSpecError {
  std::string field;  // "spec.tasks[1].resources.gpu"; empty for syntax and size errors
  int line = 0;       // 1-based; 0 when unknown
  int column = 0;
  std::string message;  // the message without source, position and field: "must be >= 0"
};
// nullopt when `status` did not come from ParseJobDocument (or is OK).
std::optional<JobSpecError> GetJobSpecError(const absl::Status& status);

}  // namespace tessera::spec
