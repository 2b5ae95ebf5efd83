// Machine-readable outputs of the trace simulator: the summary JSON of a run or a sweep, and the
// per-x curves as CSV or JSON.
//
// Single run summary (--summary-json with one policy and one seed):
//   {"policy": "fgd", "seed": 42, "workload": "...", "inflate": 1.3,
//    "unallocated_gpu_pct_at_100": 4.8, "fragment_pct_at_100": 4.7,
//    "frag_ratio_pct_at_100": 99.2, "arrived_tasks": ..., "failed_tasks": ...,
//    "failed_by_kind": {...}, "failed_by_reason": {...}, "final": {...},
//    "curves": {"x": [0..130], "unallocated_gpu_pct": [...], "fragment_pct": [...],
//               "frag_ratio_pct": [...], "cpu_alloc_pct": [...], "memory_alloc_pct": [...]}}
// Sweep summary: {"workload", "inflate", "seeds", "policies": [per-policy medians at x = 100
//   and median curves, with the artifact's medians beside them when given], "runs": [...]}.
// Missing curve points (NaN) are written as null. Doubles are rounded to 4 decimals.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/alibaba/expected_results.h"
#include "sim/alibaba/packing_bound.h"
#include "sim/alibaba/paper_runner.h"
#include "sim/alibaba/sweep.h"

namespace tessera::sim::alibaba {

nlohmann::json CurveToJson(const Curve& curve, bool as_unallocated = false);

// `with_curves` adds the per-x curves of the run.
nlohmann::json RunSummaryJson(const PaperRunResult& run, bool with_curves);

// `expected` (may be null) adds the artifact's medians for the same workload and policy;
// `bounds` (may be empty) adds "packing_bound": {"unallocated_gpu_pct_at_100_median",
// "per_seed": [{"seed", "unallocated_gpu_pct_at_100", "max_allocated_milli", ...}]}.
nlohmann::json SweepSummaryJson(const std::vector<PaperRunResult>& runs,
                                const std::vector<PolicySummary>& summaries,
                                const ExpectedResults* expected, bool with_curves,
                                std::span<const PackingBound> bounds = {});

// One row per (policy, seed, x): workload,policy,seed,x,gpu_alloc_pct,unallocated_gpu_pct,
// fragment_pct,frag_ratio_pct,cpu_alloc_pct,memory_alloc_pct (empty where missing).
void WriteCurvesCsv(const std::vector<PaperRunResult>& runs, std::ostream& out);
// The same as JSON: [{"policy", "seed", "curves": {...}}].
nlohmann::json CurvesJson(const std::vector<PaperRunResult>& runs);

// One row per arrival of the runs that kept samples: policy,seed,arrival,placed,arrived_pct,...
void WriteSamplesCsv(const std::vector<PaperRunResult>& runs, std::ostream& out);

// Rounds to `digits` decimals; NaN becomes null.
nlohmann::json Number(double v, int digits = 4);

}  // namespace tessera::sim::alibaba
