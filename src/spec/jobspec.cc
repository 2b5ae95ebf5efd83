#include "spec/jobspec.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "spec/internal/document_error.h"
#include "spec/internal/document_tree.h"
#include "spec/internal/job_decoder.h"
#include "spec/job_json.h"
#include "yaml-cpp/yaml.h"

namespace tessera::spec {
namespace {

using Json = nlohmann::ordered_json;

bool LooksLikeJson(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

absl::StatusOr<internal::DocumentTree> ParseTree(std::string_view text, const ParseOptions& options,
                                                 const internal::DocumentLimits& limits) {
  switch (options.format) {
    case DocumentFormat::kJson:
      return internal::ParseJsonTree(text, limits);
    case DocumentFormat::kYaml:
      return internal::ParseYamlTree(text, limits);
    case DocumentFormat::kAuto:
      break;
  }
  if (LooksLikeJson(text)) {
    // YAML flow mappings also start with '{': what is not JSON is read as YAML, whose
    // grammar (a superset) then reports any syntax error.
    absl::StatusOr<internal::DocumentTree> tree = internal::ParseJsonTree(text, limits);
    if (tree.ok()) return tree;
  }
  return internal::ParseYamlTree(text, limits);
}

// True when `s` could read as a number in some YAML dialect: "8", "-1.5", "1e3", "1_000",
// "0x1F", ".inf", or a YAML 1.1 date ("2024-05-01"). A superset on purpose: quoting a string
// that did not need it costs nothing.
bool IsNumberLike(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  const std::string lower = absl::AsciiStrToLower(std::string(s));
  if (lower == ".inf" || lower == ".nan") return true;
  if (lower.size() > 1 && lower[0] == '0' &&
      (lower[1] == 'x' || lower[1] == 'o' || lower[1] == 'b')) {
    return true;
  }
  const auto digit = [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); };
  if (s.size() >= 5 && std::all_of(s.begin(), s.begin() + 4, digit) && s[4] == '-') return true;
  const bool numeric_chars = std::all_of(s.begin(), s.end(), [&](char c) {
    return digit(c) || c == '.' || c == '_' || c == 'e' || c == 'E' || c == '+' || c == '-';
  });
  return numeric_chars && std::any_of(s.begin(), s.end(), digit);
}

// True when a plain YAML scalar with this text would read as something other than a string
// (null, a boolean, a number) or lose a control character (yaml-cpp writes a carriage return
// plain, and a reader takes it for a line break). yaml-cpp's emitter quotes the rest of what
// the syntax needs by itself; double quotes escape control characters.
bool NeedsQuotes(std::string_view s) {
  if (s.empty() || s[0] == '~' || IsNumberLike(s)) return true;
  if (std::any_of(s.begin(), s.end(), [](char c) { return absl::ascii_iscntrl(c); })) return true;
  static constexpr std::string_view kReserved[] = {"null", "true", "false", "yes", "no",
                                                   "on",   "off",  "y",     "n"};
  const std::string lower = absl::AsciiStrToLower(std::string(s));
  return std::find(std::begin(kReserved), std::end(kReserved), lower) != std::end(kReserved);
}

void EmitString(YAML::Emitter& out, const std::string& s) {
  if (NeedsQuotes(s)) out << YAML::DoubleQuoted;
  out << s;
}

bool IsScalar(const Json& v) { return !v.is_object() && !v.is_array(); }

void EmitYaml(YAML::Emitter& out, const Json& v) {
  if (v.is_object()) {
    if (v.empty()) out << YAML::Flow;
    out << YAML::BeginMap;
    for (const auto& [key, value] : v.items()) {
      out << YAML::Key;
      EmitString(out, key);
      out << YAML::Value;
      EmitYaml(out, value);
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    bool scalars = true;
    for (const Json& item : v) scalars = scalars && IsScalar(item);
    if (scalars) out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const Json& item : v) EmitYaml(out, item);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    EmitString(out, v.get<std::string>());
  } else if (v.is_boolean()) {
    out << v.get<bool>();
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << v.dump();  // a number, as JSON writes it
  }
}

}  // namespace

absl::StatusOr<JobDocument> ParseJobDocument(std::string_view text, const ParseOptions& options) {
  internal::DocumentLimits limits;
  limits.max_bytes = options.max_bytes;
  limits.max_depth = options.max_depth;
  limits.max_nodes = options.max_nodes;
  const PriorityClasses& classes =
      options.priority_classes != nullptr ? *options.priority_classes : BuiltinPriorityClasses();
  absl::StatusOr<JobDocument> job = [&]() -> absl::StatusOr<JobDocument> {
    if (absl::Status status = internal::CheckText(text, limits); !status.ok()) return status;
    absl::StatusOr<internal::DocumentTree> tree = ParseTree(text, options, limits);
    if (!tree.ok()) return tree.status();
    return internal::DecodeJobDocument(*tree, classes);
  }();
  if (!job.ok()) return internal::WithSource(job.status(), options.source);
  return job;
}

std::string RenderJobJson(const JobDocument& job, int indent) {
  // JSON allows a raw DEL in a string, but documents refuse it (internal::CheckText, as YAML
  // does): written escaped, the text reads back. Outside strings JSON has no DEL, and a DEL is
  // never part of a UTF-8 sequence.
  return absl::StrReplaceAll(
             JobDocumentToJson(job).dump(indent, ' ', false, Json::error_handler_t::replace),
             {{"\x7f", "\\u007f"}}) +
         "\n";
}

std::string RenderJobYaml(const JobDocument& job) {
  return RenderJsonAsYaml(JobDocumentToJson(job));
}

std::string RenderJsonAsYaml(const nlohmann::ordered_json& value) {
  YAML::Emitter out;
  out.SetNullFormat(YAML::LowerNull);
  out.SetBoolFormat(YAML::TrueFalseBool);
  EmitYaml(out, value);
  // yaml-cpp writes a DEL raw; EmitString double-quotes every string with one, where YAML
  // reads the escape back.
  return absl::StrReplaceAll(out.c_str(), {{"\x7f", "\\x7F"}}) + "\n";
}

std::optional<JobSpecError> GetJobSpecError(const absl::Status& status) {
  return internal::ErrorParts(status);
}

namespace {

// Whether a YAML line starts a new document: "---" alone or followed by a blank.
bool IsDocumentStart(std::string_view line) {
  return line.starts_with("---") && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' ||
                                     line[3] == '\r');
}

// Whether a YAML document holds nothing but blank lines and comments.
bool IsEmptyDocument(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#') return false;
    at = end + 1;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<JobDocument>> ParseJobDocuments(std::string_view text,
                                                           const ParseOptions& options) {
  // Each document is given the blank lines before it, so that errors count lines in `text`.
  std::vector<std::string> documents(1);
  int line_number = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (options.format != DocumentFormat::kJson && IsDocumentStart(line)) {
      documents.emplace_back(line_number, '\n');
      line.remove_prefix(3);
    }
    documents.back().append(line).append("\n");
    ++line_number;
    at = end + 1;
  }
  std::vector<JobDocument> out;
  for (const std::string& document : documents) {
    if (IsEmptyDocument(document)) continue;
    absl::StatusOr<JobDocument> job = ParseJobDocument(document, options);
    if (!job.ok()) return job.status();
    out.push_back(*std::move(job));
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        options.source.empty() ? "no job document" : options.source + ": no job document");
  }
  return out;
}

}  // namespace tessera::spec
