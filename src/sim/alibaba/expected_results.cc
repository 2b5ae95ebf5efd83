#include "sim/alibaba/expected_results.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sim/alibaba/alibaba_trace.h"
#include "sim/alibaba/internal/text.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::alibaba {
namespace {

struct PolicyName {
  std::string_view ours;
  std::string_view artifact;
  std::string_view display;
};

constexpr PolicyName kPolicyNames[] = {
    {"random", "01-Random", "Random"},
    {"dotprod", "02-DotProd", "DotProd"},
    {"clustering", "03-GpuClustering", "GpuClustering"},
    {"packing", "04-GpuPacking", "GpuPacking"},
    {"bestfit", "05-BestFit", "BestFit"},
    {"fgd", "06-FGD", "FGD"},
};

// Tessera's policies for the same experiment; the artifact has none of them.
constexpr PolicyName kOwnPolicyNames[] = {
    {"fgdcpu", "", "FGD-CPU"},
};

absl::Status RowError(std::string_view source, int32_t line, std::string_view field,
                      std::string_view problem) {
  return absl::InvalidArgumentError(fmt::format("{}:{}: {}: {}", source, line, field, problem));
}

}  // namespace

const std::vector<std::string>& PaperPolicies() {
  static const auto* const kPolicies =
      new std::vector<std::string>{"random", "dotprod", "clustering", "packing", "bestfit", "fgd"};
  return *kPolicies;
}

const std::vector<std::string>& AllPolicies() {
  static const auto* const kPolicies = [] {
    auto* all = new std::vector<std::string>(PaperPolicies());
    for (const PolicyName& p : kOwnPolicyNames) all->emplace_back(p.ours);
    return all;
  }();
  return *kPolicies;
}

std::optional<std::string> PolicyFromArtifactName(std::string_view artifact_name) {
  for (const PolicyName& p : kPolicyNames) {
    if (p.artifact == artifact_name) return std::string(p.ours);
  }
  return std::nullopt;
}

std::string PolicyDisplayName(std::string_view policy) {
  for (const PolicyName& p : kPolicyNames) {
    if (p.ours == policy) return std::string(p.display);
  }
  for (const PolicyName& p : kOwnPolicyNames) {
    if (p.ours == policy) return std::string(p.display);
  }
  return std::string(policy);
}

const std::vector<ExpectedRun>& ExpectedResults::Runs(ExpectedMetric m) const {
  switch (m) {
    case ExpectedMetric::kAllocation:
      return allocation;
    case ExpectedMetric::kFragAmount:
      return frag_amount;
    case ExpectedMetric::kFragRatio:
      return frag_ratio;
  }
  return allocation;
}

std::optional<Curve> ExpectedResults::Median(ExpectedMetric m, std::string_view workload,
                                             std::string_view policy) const {
  std::vector<Curve> curves;
  for (const ExpectedRun& r : Runs(m)) {
    if (r.workload == workload && r.policy == policy) curves.push_back(r.curve);
  }
  if (curves.empty()) return std::nullopt;
  return MedianCurve(curves);
}

std::vector<std::string> ExpectedResults::Workloads() const {
  std::set<std::string> names;
  for (const ExpectedRun& r : allocation) names.insert(r.workload);
  return {names.begin(), names.end()};
}

absl::StatusOr<std::vector<ExpectedRun>> ParseExpectedCsv(std::string_view text,
                                                          std::string_view source) {
  std::vector<ExpectedRun> runs;
  std::vector<int32_t> x_of_column;  // -1 for metadata columns
  int32_t line_number = 0;
  for (std::string_view line : internal::Lines(text)) {
    ++line_number;
    if (line.empty()) continue;
    const std::vector<std::string_view> fields = internal::Split(line, ',');
    if (x_of_column.empty()) {
      if (fields.size() < 5 || fields[0] != "workload" || fields[1] != "sc_policy" ||
          fields[2] != "tune" || fields[3] != "seed") {
        return RowError(source, line_number, "header",
                        "expected 'workload,sc_policy,tune,seed,[total_gpus,]0,...,130'");
      }
      for (std::string_view f : fields) {
        int64_t x = -1;
        const bool is_x = internal::ParseInt64(f, &x);
        if (is_x && (x < 0 || x >= kCurvePoints)) {
          return RowError(source, line_number, "header", fmt::format("x out of range: {}", f));
        }
        x_of_column.push_back(is_x ? static_cast<int32_t>(x) : -1);
      }
      continue;
    }
    if (fields.size() != x_of_column.size()) {
      return RowError(source, line_number, "row",
                      fmt::format("expected {} fields, got {}", x_of_column.size(), fields.size()));
    }
    ExpectedRun run;
    run.workload = std::string(fields[0]);
    std::optional<std::string> policy = PolicyFromArtifactName(fields[1]);
    if (!policy) continue;  // a policy outside the paper's six
    run.policy = *policy;
    if (!internal::ParseDouble(fields[2], &run.tune)) {
      return RowError(source, line_number, "tune",
                      fmt::format("not a number: '{}'", fields[2].substr(0, 40)));
    }
    if (!internal::ParseInt64(fields[3], &run.seed)) {
      return RowError(source, line_number, "seed",
                      fmt::format("not an integer: '{}'", fields[3].substr(0, 40)));
    }
    for (size_t c = 0; c < fields.size(); ++c) {
      if (x_of_column[c] < 0 || fields[c].empty()) continue;
      double v = 0;
      if (!internal::ParseDouble(fields[c], &v)) {
        return RowError(source, line_number, fmt::format("column {}", x_of_column[c]),
                        fmt::format("not a number: '{}'", fields[c].substr(0, 40)));
      }
      run.curve.y[x_of_column[c]] = v;
    }
    runs.push_back(std::move(run));
  }
  if (x_of_column.empty()) return absl::InvalidArgumentError(fmt::format("{}: empty file", source));
  return runs;
}

absl::StatusOr<ExpectedResults> LoadExpectedResults(const std::string& dir) {
  ExpectedResults out;
  const std::pair<const char*, std::vector<ExpectedRun>*> files[] = {
      {"analysis_allo_discrete.csv", &out.allocation},
      {"analysis_frag_discrete.csv", &out.frag_amount},
      {"analysis_frag_ratio_discrete.csv", &out.frag_ratio},
  };
  for (const auto& [name, target] : files) {
    const std::string path = fmt::format("{}/{}", dir, name);
    TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
    TESSERA_ASSIGN_OR_RETURN(*target, ParseExpectedCsv(text, path));
  }
  return out;
}

}  // namespace tessera::sim::alibaba
