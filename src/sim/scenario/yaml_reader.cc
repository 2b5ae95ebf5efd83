#include "sim/scenario/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/duration.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace tessera::sim {
namespace {

template <typename Int>
bool ToInt(std::string_view text, Int* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

std::string Field(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : Cat(path, ".", key);
}

std::string Index(std::string_view path, size_t i) { return Cat(path, "[", i, "]"); }

int YamlReader::Line(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? 0 : mark.line + 1;
}

absl::Status YamlReader::ErrorAtLine(int line, std::string_view field,
                                     std::string_view message) const {
  return absl::InvalidArgumentError(Cat(file_, ":", line, ": ", field, ": ", message));
}

absl::Status YamlReader::Error(const YAML::Node& at, std::string_view field,
                               std::string_view message) const {
  return ErrorAtLine(Line(at), field, message);
}

absl::Status YamlReader::Wrap(const YAML::Node& at, const absl::Status& status) const {
  if (status.ok()) return status;
  return absl::InvalidArgumentError(Cat(file_, ":", Line(at), ": ", std::string(status.message())));
}

absl::Status YamlReader::ForEach(const YAML::Node& map, std::string_view path,
                                 std::initializer_list<std::string_view> allowed,
                                 const EntryFn& fn) const {
  if (!map.IsMap()) return Error(map, path, "must be a mapping");
  std::set<std::string, std::less<>> seen;
  // yaml-cpp's iterators yield entries by value: keep each entry alive for its iteration.
  for (const auto& entry : map) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) return Error(key, path, "keys must be plain names");
    const std::string& name = key.Scalar();
    const std::string field = Field(path, name);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return Error(
          key, field,
          Cat("unknown key (expected one of: ", fmt::format("{}", fmt::join(allowed, ", ")), ")"));
    }
    if (!seen.insert(name).second) return Error(key, field, "given twice");
    absl::Status status = fn(name, entry.second, field);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status YamlReader::ForEachItem(
    const YAML::Node& seq, std::string_view path,
    const std::function<absl::Status(const YAML::Node&, const std::string&)>& fn) const {
  if (!seq.IsSequence()) return Error(seq, path, "must be a list");
  for (size_t i = 0; i < seq.size(); ++i) {
    absl::Status status = fn(seq[i], Index(path, i));
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> YamlReader::ScalarText(const YAML::Node& n,
                                                   std::string_view field) const {
  if (n.IsNull()) return Error(n, field, "must have a value");
  if (!n.IsScalar()) return Error(n, field, "must be a single value, not a list or mapping");
  return n.Scalar();
}

absl::StatusOr<std::string> YamlReader::String(const YAML::Node& n, std::string_view field) const {
  return ScalarText(n, field);
}

absl::StatusOr<std::string> YamlReader::Name(const YAML::Node& n, std::string_view field) const {
  absl::StatusOr<std::string> text = ScalarText(n, field);
  if (text.ok() && text->empty()) return Error(n, field, "must not be empty");
  return text;
}

absl::StatusOr<std::string> YamlReader::Choice(
    const YAML::Node& n, std::string_view field,
    std::initializer_list<std::string_view> choices) const {
  absl::StatusOr<std::string> text = ScalarText(n, field);
  if (!text.ok()) return text;
  if (std::find(choices.begin(), choices.end(), *text) == choices.end()) {
    return Error(
        n, field,
        Cat("must be one of ", fmt::format("{}", fmt::join(choices, ", ")), ", not '", *text, "'"));
  }
  return text;
}

absl::StatusOr<int64_t> YamlReader::Int(const YAML::Node& n, std::string_view field, int64_t min,
                                        int64_t max) const {
  absl::StatusOr<std::string> text = ScalarText(n, field);
  if (!text.ok()) return text.status();
  int64_t value = 0;
  if (!ToInt(*text, &value)) return Error(n, field, "must be an integer");
  if (value < min) return Error(n, field, Cat("must be >= ", min));
  if (value > max) return Error(n, field, Cat("must be <= ", max));
  return value;
}

absl::StatusOr<uint64_t> YamlReader::Uint(const YAML::Node& n, std::string_view field) const {
  absl::StatusOr<std::string> text = ScalarText(n, field);
  if (!text.ok()) return text.status();
  uint64_t value = 0;
  if (!text->empty() && (*text)[0] == '-') return Error(n, field, "must be >= 0");
  if (!ToInt(*text, &value)) return Error(n, field, "must be an integer");
  return value;
}

absl::StatusOr<bool> YamlReader::Bool(const YAML::Node& n, std::string_view field) const {
  absl::StatusOr<std::string> text = ScalarText(n, field);
  if (!text.ok()) return text.status();
  if (*text == "true" || *text == "True" || *text == "TRUE") return true;
  if (*text == "false" || *text == "False" || *text == "FALSE") return false;
  return Error(n, field, "must be true or false");
}

absl::StatusOr<std::string> YamlReader::NonNegativeText(const YAML::Node& n,
                                                        std::string_view field) const {
  absl::StatusOr<std::string> text = ScalarText(n, field);
  if (text.ok() && !text->empty() && (*text)[0] == '-') return Error(n, field, "must be >= 0");
  return text;
}

absl::StatusOr<Duration> YamlReader::Dur(const YAML::Node& n, std::string_view field) const {
  absl::StatusOr<std::string> text = NonNegativeText(n, field);
  if (!text.ok()) return text.status();
  absl::StatusOr<Duration> d = ParseDuration(*text, field);
  if (!d.ok()) return Wrap(n, d.status());
  if (*d > kMaxScenarioDuration) return Error(n, field, "must be at most 876000h (100 years)");
  return d;
}

absl::StatusOr<int64_t> YamlReader::AtMost(const YAML::Node& n, std::string_view field,
                                           absl::StatusOr<int64_t> v, int64_t max,
                                           std::string_view shown) const {
  if (!v.ok()) return Wrap(n, v.status());
  if (*v > max) return Error(n, field, Cat("must be at most ", shown));
  return v;
}

namespace {

// "4 TiB" for 4 << 40 times `scale`, as the messages show the maxima.
std::string Shown(int64_t max, int64_t scale, std::string_view unit) {
  return Cat(max * scale, unit);
}

}  // namespace

absl::StatusOr<int64_t> YamlReader::CpuMillis(const YAML::Node& n, std::string_view field,
                                          int64_t scale) const {
  absl::StatusOr<std::string> text = NonNegativeText(n, field);
  if (!text.ok()) return text.status();
  return AtMost(n, field, ParseCpuMillis(*text, field), kMaxCpuMillis * scale, Shown(kMaxCpuMillis / 1000, scale, " cores"));
}

absl::StatusOr<int64_t> YamlReader::Bytes(const YAML::Node& n, std::string_view field,
                                          int64_t scale) const {
  absl::StatusOr<std::string> text = NonNegativeText(n, field);
  if (!text.ok()) return text.status();
  return AtMost(n, field, ParseBytes(*text, field), kMaxBytes * scale, Shown(4, scale, " TiB"));
}

absl::StatusOr<int64_t> YamlReader::MilliGpu(const YAML::Node& n, std::string_view field,
                                          int64_t scale) const {
  absl::StatusOr<std::string> text = NonNegativeText(n, field);
  if (!text.ok()) return text.status();
  return AtMost(n, field, ParseMilliGpu(*text, field), kMaxMilliGpu * scale, Shown(kMaxMilliGpu / 1000, scale, " GPUs"));
}

absl::StatusOr<int64_t> YamlReader::ResourceQuantity(std::string_view key, const YAML::Node& n,
                                                     std::string_view field, int64_t scale) const {
  if (key == "cpu") return CpuMillis(n, field, scale);
  if (key == "memory" || key == "gpu_memory") return Bytes(n, field, scale);
  if (key == "gpu") return MilliGpu(n, field, scale);
  absl::StatusOr<std::string> text = NonNegativeText(n, field);
  if (!text.ok()) return text.status();
  return AtMost(n, field, ParseCount(*text, field), kMaxCount * scale, Cat(kMaxCount * scale));
}

absl::StatusOr<Labels> YamlReader::LabelMap(const YAML::Node& n, std::string_view field) const {
  Labels labels;
  if (n.IsNull()) return labels;
  if (!n.IsMap()) return Error(n, field, "must be a mapping of names to values");
  for (const auto& entry : n) {
    if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
      return Error(entry.first, field, "keys must be non-empty names");
    }
    const std::string key = entry.first.Scalar();
    absl::StatusOr<std::string> value = String(entry.second, Field(field, key));
    if (!value.ok()) return value.status();
    if (!labels.emplace(key, *value).second)
      return Error(entry.first, Field(field, key), "given twice");
  }
  return labels;
}

absl::StatusOr<std::vector<std::string>> YamlReader::StringList(const YAML::Node& n,
                                                                std::string_view field) const {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    absl::StatusOr<std::string> one = Name(n, field);
    if (!one.ok()) return one.status();
    out.push_back(*one);
    return out;
  }
  absl::Status status = ForEachItem(n, field, [&](const YAML::Node& item, const std::string& f) {
    absl::StatusOr<std::string> s = Name(item, f);
    if (!s.ok()) return s.status();
    out.push_back(*s);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace tessera::sim
