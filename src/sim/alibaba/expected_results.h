// The FGD artifact's cached results (fgd-expected-results/analysis_*_discrete.csv): per run
// (workload, policy, tune, seed) a curve over arrived workload 0..130, for three metrics:
//   allo        GPU allocation, % of the cluster's GPUs
//   frag        fragment amount F(M), % of the cluster's GPUs
//   frag_ratio  F(M) / free milli-GPU, %
// Columns: workload, sc_policy, tune, seed, [total_gpus,] then 0..130 (empty = missing).
// Policy names are mapped to Tessera's built-in profile names ("06-FGD" -> "fgd").
// Errors: "file:line: field: problem" for malformed rows; NotFound when a file is missing.
// Thread-safety: value types.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/alibaba/curve.h"

namespace tessera::sim::alibaba {

// The six placement policies of the paper, in its plotting order.
const std::vector<std::string>& PaperPolicies();
// The paper's six, then Tessera's own for the same experiment (`--policies all`): fgdcpu
// (docs/policies/fgd-cpu.md).
const std::vector<std::string>& AllPolicies();
// "06-FGD" -> "fgd"; nullopt for names outside the six.
std::optional<std::string> PolicyFromArtifactName(std::string_view artifact_name);
// "fgd" -> "FGD", "packing" -> "GpuPacking" (the paper's names), "fgdcpu" -> "FGD-CPU"; the
// input when unknown.
std::string PolicyDisplayName(std::string_view policy);

enum class ExpectedMetric { kAllocation, kFragAmount, kFragRatio };

struct ExpectedRun {
  std::string workload;  // "openb_pod_list_default"
  std::string policy;    // Tessera's name: "fgd"
  double tune = 0;
  int64_t seed = 0;
  Curve curve;
};

struct ExpectedResults {
  std::vector<ExpectedRun> allocation;
  std::vector<ExpectedRun> frag_amount;
  std::vector<ExpectedRun> frag_ratio;

  const std::vector<ExpectedRun>& Runs(ExpectedMetric m) const;
  // The per-x median over the seeds of (workload, policy); nullopt when there are no such runs.
  std::optional<Curve> Median(ExpectedMetric m, std::string_view workload,
                              std::string_view policy) const;
  // Workload names present, sorted.
  std::vector<std::string> Workloads() const;
};

// Parses one analysis_*_discrete.csv text.
absl::StatusOr<std::vector<ExpectedRun>> ParseExpectedCsv(std::string_view text,
                                                          std::string_view source);

// Loads analysis_{allo,frag,frag_ratio}_discrete.csv from `dir`.
absl::StatusOr<ExpectedResults> LoadExpectedResults(const std::string& dir);

}  // namespace tessera::sim::alibaba
