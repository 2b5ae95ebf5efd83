#include "sim/alibaba/results_json.h"

#include <cmath>

#include "fmt/format.h"

namespace tessera::sim::alibaba {
namespace {

using nlohmann::json;

std::string CsvNumber(double v) { return std::isnan(v) ? "" : fmt::format("{:.4f}", v); }

json AllCurves(const PaperRunResult& r) {
  json x = json::array();
  for (int32_t i = 0; i < kCurvePoints; ++i) x.push_back(i);
  return {
      {"x", x},
      {"unallocated_gpu_pct", CurveToJson(r.gpu_allocation, /*as_unallocated=*/true)},
      {"fragment_pct", CurveToJson(r.frag_amount)},
      {"frag_ratio_pct", CurveToJson(r.frag_ratio)},
      {"cpu_alloc_pct", CurveToJson(r.cpu_allocation)},
      {"memory_alloc_pct", CurveToJson(r.memory_allocation)},
  };
}

json PolicyJson(const PolicySummary& s, const std::string& workload,
                const ExpectedResults* expected, bool with_curves) {
  json j = {
      {"policy", s.policy},
      {"runs", s.runs},
      {"unallocated_gpu_pct_at_100",
       {{"median", Number(s.unallocated_median)},
        {"q25", Number(s.unallocated_q25)},
        {"q75", Number(s.unallocated_q75)},
        {"mean", Number(s.unallocated_mean)},
        {"sd", Number(s.unallocated_sd)}}},
      {"fragment_pct_at_100", Number(s.frag_amount_median)},
      {"frag_ratio_pct_at_100", Number(s.frag_ratio_median)},
      {"failed_tasks_median", Number(s.failed_tasks_median)},
      {"wall_seconds_total", Number(s.wall_seconds_total, 3)},
  };
  if (with_curves) {
    j["curves"] = {{"unallocated_gpu_pct", CurveToJson(s.gpu_allocation, true)},
                   {"fragment_pct", CurveToJson(s.frag_amount)},
                   {"frag_ratio_pct", CurveToJson(s.frag_ratio)}};
  }
  if (expected != nullptr) {
    std::optional<Curve> allo = expected->Median(ExpectedMetric::kAllocation, workload, s.policy);
    std::optional<Curve> frag = expected->Median(ExpectedMetric::kFragAmount, workload, s.policy);
    std::optional<Curve> ratio = expected->Median(ExpectedMetric::kFragRatio, workload, s.policy);
    if (allo) {
      j["artifact"] = {
          {"unallocated_gpu_pct_at_100", Number(100.0 - allo->At(100))},
          {"fragment_pct_at_100", frag ? Number(frag->At(100)) : json(nullptr)},
          {"frag_ratio_pct_at_100", ratio ? Number(ratio->At(100)) : json(nullptr)},
      };
      j["unallocated_diff_vs_artifact"] = Number(s.unallocated_median - (100.0 - allo->At(100)));
    }
  }
  return j;
}

}  // namespace

json Number(double v, int digits) {
  if (std::isnan(v)) return nullptr;
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

json CurveToJson(const Curve& curve, bool as_unallocated) {
  json out = json::array();
  for (double v : curve.y) out.push_back(Number(as_unallocated ? 100.0 - v : v));
  return out;
}

json RunSummaryJson(const PaperRunResult& r, bool with_curves) {
  json j = {
      {"policy", r.policy},
      {"seed", r.seed},
      {"workload", r.workload},
      {"inflate", r.inflate},
      {"unallocated_gpu_pct_at_100", Number(100.0 - r.gpu_allocation.At(100))},
      {"fragment_pct_at_100", Number(r.frag_amount.At(100))},
      {"frag_ratio_pct_at_100", Number(r.frag_ratio.At(100))},
      {"arrived_tasks", r.arrived_tasks},
      {"clones", r.clones},
      {"removed", r.removed},
      {"failed_tasks", r.failed_tasks},
      {"arrived_gpu_milli", r.arrived_gpu_milli},
      {"failed_gpu_milli", r.failed_gpu_milli},
      {"failed_by_kind", r.failed_by_kind},
      {"failed_by_reason", r.failed_by_reason},
      {"final",
       {{"gpu_alloc_pct", Number(r.final_gpu_alloc_pct)},
        {"cpu_alloc_pct", Number(r.final_cpu_alloc_pct)},
        {"memory_alloc_pct", Number(r.final_memory_alloc_pct)},
        {"fragment_pct", Number(r.final_frag_pct)},
        {"frag_ratio_pct", Number(r.final_frag_ratio_pct)}}},
      {"wall_seconds", Number(r.wall_seconds, 3)},
  };
  if (with_curves) j["curves"] = AllCurves(r);
  return j;
}

namespace {

json BoundJson(std::span<const PackingBound> bounds) {
  json per_seed = json::array();
  for (const PackingBound& b : bounds) {
    per_seed.push_back({{"seed", b.seed},
                        {"unallocated_gpu_pct_at_100", Number(b.unallocated_pct_at_100)},
                        {"max_allocated_milli", Number(b.max_allocated_milli, 0)},
                        {"prefix_arrivals", b.prefix_arrivals},
                        {"prefix_gpu_milli", b.prefix_gpu_milli},
                        {"task_classes", b.task_classes},
                        {"node_types", b.node_types}});
  }
  return {{"method", "LP relaxation over node types and task classes (docs/simulator.md)"},
          {"unallocated_gpu_pct_at_100_median", Number(MedianBound(bounds))},
          {"per_seed", per_seed}};
}

}  // namespace

json SweepSummaryJson(const std::vector<PaperRunResult>& runs,
                      const std::vector<PolicySummary>& summaries, const ExpectedResults* expected,
                      bool with_curves, std::span<const PackingBound> bounds) {
  const std::string workload = runs.empty() ? "" : runs.front().workload;
  json seeds = json::array();
  for (const PaperRunResult& r : runs) {
    if (std::find(seeds.begin(), seeds.end(), json(r.seed)) == seeds.end()) seeds.push_back(r.seed);
  }
  json policies = json::array();
  for (const PolicySummary& s : summaries) {
    policies.push_back(PolicyJson(s, workload, expected, with_curves));
  }
  json run_list = json::array();
  for (const PaperRunResult& r : runs) run_list.push_back(RunSummaryJson(r, /*with_curves=*/false));
  double wall = 0;
  for (const PaperRunResult& r : runs) wall += r.wall_seconds;
  json out = {
      {"workload", workload}, {"inflate", runs.empty() ? 0.0 : runs.front().inflate},
      {"seeds", seeds},       {"run_seconds_total", Number(wall, 3)},
      {"policies", policies}, {"runs", run_list},
  };
  if (!bounds.empty()) out["packing_bound"] = BoundJson(bounds);
  return out;
}

void WriteCurvesCsv(const std::vector<PaperRunResult>& runs, std::ostream& out) {
  out << "workload,policy,seed,x,gpu_alloc_pct,unallocated_gpu_pct,fragment_pct,frag_ratio_pct,"
         "cpu_alloc_pct,memory_alloc_pct\n";
  for (const PaperRunResult& r : runs) {
    for (int32_t x = 0; x < kCurvePoints; ++x) {
      out << fmt::format("{},{},{},{},{},{},{},{},{},{}\n", r.workload, r.policy, r.seed, x,
                         CsvNumber(r.gpu_allocation.At(x)),
                         CsvNumber(100.0 - r.gpu_allocation.At(x)), CsvNumber(r.frag_amount.At(x)),
                         CsvNumber(r.frag_ratio.At(x)), CsvNumber(r.cpu_allocation.At(x)),
                         CsvNumber(r.memory_allocation.At(x)));
    }
  }
}

json CurvesJson(const std::vector<PaperRunResult>& runs) {
  json out = json::array();
  for (const PaperRunResult& r : runs) {
    out.push_back({{"workload", r.workload},
                   {"policy", r.policy},
                   {"seed", r.seed},
                   {"curves", AllCurves(r)}});
  }
  return out;
}

void WriteSamplesCsv(const std::vector<PaperRunResult>& runs, std::ostream& out) {
  out << "policy,seed,arrival,placed,arrived_pct,gpu_alloc_pct,cpu_alloc_pct,memory_alloc_pct,"
         "frag_milli,frag_pct,frag_ratio_pct,failed_tasks\n";
  for (const PaperRunResult& r : runs) {
    for (const ArrivalSample& s : r.samples) {
      out << fmt::format("{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.2f},{:.4f},{:.4f},{}\n",
                         r.policy, r.seed, s.arrival, s.placed ? 1 : 0, s.arrived_pct,
                         s.gpu_alloc_pct, s.cpu_alloc_pct, s.memory_alloc_pct, s.frag_milli,
                         s.frag_pct, s.frag_ratio_pct, s.failed_tasks);
    }
  }
}

}  // namespace tessera::sim::alibaba
