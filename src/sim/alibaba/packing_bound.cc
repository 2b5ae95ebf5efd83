#include "sim/alibaba/packing_bound.h"

#include <glpk.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "fmt/format.h"
#include "sim/alibaba/curve.h"
#include "sim/alibaba/inflation.h"
#include "tessera/common/rng.h"

namespace tessera::sim::alibaba {
namespace {

// The amounts the LP constrains, per node (node types) or per task (task classes).
enum Dimension { kCpu = 0, kMemory, kGpuMilli, kDeviceMemory, kDevices, kDimensions };

struct NodeType {
  std::string model;
  int32_t nodes = 0;
  std::array<double, kDimensions> capacity{};  // per node
};

struct TaskClass {
  const TaskRequest* request = nullptr;  // a representative
  int32_t tasks = 0;
  std::array<double, kDimensions> demand{};  // per task
};

using NodeKey = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>;

std::vector<NodeType> GroupNodes(const std::vector<Node>& nodes) {
  std::map<NodeKey, NodeType> types;
  for (const Node& node : nodes) {
    if (node.removed) continue;
    int64_t device_memory = 0;
    for (const GpuDevice& d : node.gpus) device_memory += d.memory;
    const NodeKey key{node.GpuModel(), static_cast<int64_t>(node.gpus.size()), node.allocatable.cpu,
                      node.allocatable.memory, device_memory};
    NodeType& t = types[key];
    t.model = node.GpuModel();
    ++t.nodes;
    t.capacity = {static_cast<double>(node.allocatable.cpu),
                  static_cast<double>(node.allocatable.memory),
                  static_cast<double>(node.allocatable.gpu), static_cast<double>(device_memory),
                  static_cast<double>(node.gpus.size())};
  }
  std::vector<NodeType> out;
  for (auto& [key, type] : types) out.push_back(std::move(type));
  return out;
}

// The devices a task occupies alone: g for g whole GPUs, 1 for a share above half a GPU (no
// device holds two), 0 for smaller shares and CPU-only tasks.
double ExclusiveDevices(const TaskRequest& r) {
  if (!r.NeedsGpu() || r.gpu_milli == 0) return 0;
  if (r.gpu_milli >= kMilliGpuPerDevice) return r.gpu_count;
  return 2 * r.gpu_milli > kMilliGpuPerDevice ? 1 : 0;
}

std::vector<TaskClass> GroupTasks(const std::vector<TraceTask>& tasks,
                                  const std::vector<Arrival>& arrivals) {
  using Key = std::tuple<int64_t, int64_t, int32_t, int64_t, int64_t, std::string>;
  std::map<Key, TaskClass> classes;
  for (const Arrival& a : arrivals) {
    const TraceTask& t = tasks[a.task];
    const TaskRequest& r = t.request;
    const int64_t milli = r.NeedsGpu() ? r.gpu_milli : 0;
    const Key key{r.cpu, r.memory, r.gpu_count, milli, r.gpu_memory, t.gpu_spec};
    TaskClass& c = classes[key];
    c.request = &r;
    ++c.tasks;
    c.demand = {static_cast<double>(r.cpu), static_cast<double>(r.memory),
                static_cast<double>(r.gpu_count * milli),
                static_cast<double>(r.gpu_count * r.gpu_memory), ExclusiveDevices(r)};
  }
  std::vector<TaskClass> out;
  for (auto& [key, c] : classes) out.push_back(std::move(c));
  return out;
}

// True when one task of `c` fits an empty node of `t`.
bool FitsEmpty(const TaskClass& c, const NodeType& t) {
  const TaskRequest& r = *c.request;
  if (r.NeedsGpu() && (r.gpu_count > t.capacity[kDevices] || !r.AllowsModel(t.model))) {
    return false;
  }
  for (int d = 0; d < kDevices; ++d) {
    if (c.demand[d] > t.capacity[d]) return false;
  }
  return true;
}

// The arrived milli-GPU after each arrival whose sample the curve's value at x = 100 averages
// (curve.cc): those rounding to 100, or when there are none, to 99-101. `cut` is the index of the
// last of them (-1 when there are none).
struct Bucket {
  std::vector<int64_t> arrived;
  int32_t cut = -1;
};

Bucket BucketAt100(const std::vector<TraceTask>& tasks, const std::vector<Arrival>& arrivals,
                   int64_t capacity_milli) {
  Bucket exact, around;
  int64_t arrived = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(arrivals.size()); ++i) {
    arrived += tasks[arrivals[i].task].request.TotalGpuMilli();
    // As the run buckets its samples (paper_runner.cc, curve.cc).
    const double bucket =
        std::nearbyint(100.0 * static_cast<double>(arrived) / static_cast<double>(capacity_milli));
    if (bucket > 101) break;
    if (bucket < 99) continue;
    Bucket& b = bucket == 100 ? exact : around;
    b.arrived.push_back(arrived);
    b.cut = i;
  }
  return exact.cut >= 0 ? exact : around;
}

struct GlpProblem {
  glp_prob* lp = glp_create_prob();
  ~GlpProblem() { glp_delete_prob(lp); }
};

// Builds and solves the LP; returns its optimum (milli-GPU).
absl::StatusOr<double> SolveLp(const std::vector<TaskClass>& classes,
                               const std::vector<NodeType>& types) {
  GlpProblem p;
  glp_set_obj_dir(p.lp, GLP_MAX);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  auto add_row = [&](double upper) {
    const int row = glp_add_rows(p.lp, 1);
    glp_set_row_bnds(p.lp, row, GLP_UP, 0.0, upper);
    return row;
  };
  // Rows: one per class, then per type: 5 capacity rows and 3 "more than half" rows.
  std::vector<int> class_row(classes.size());
  for (size_t c = 0; c < classes.size(); ++c) class_row[c] = add_row(classes[c].tasks);
  constexpr int kHalfRows = 3;  // cpu, memory, milli-GPU
  std::vector<std::array<int, kDimensions + kHalfRows>> type_rows(types.size());
  for (size_t t = 0; t < types.size(); ++t) {
    for (int d = 0; d < kDimensions; ++d)
      type_rows[t][d] = add_row(types[t].nodes * types[t].capacity[d]);
    for (int h = 0; h < kHalfRows; ++h) type_rows[t][kDimensions + h] = add_row(types[t].nodes);
  }
  for (size_t c = 0; c < classes.size(); ++c) {
    for (size_t t = 0; t < types.size(); ++t) {
      if (!FitsEmpty(classes[c], types[t])) continue;
      const int col = glp_add_cols(p.lp, 1);
      glp_set_col_bnds(p.lp, col, GLP_LO, 0.0, 0.0);
      glp_set_obj_coef(p.lp, col, classes[c].demand[kGpuMilli]);
      auto put = [&](int row, double value) {
        if (value == 0) return;
        ia.push_back(row);
        ja.push_back(col);
        ar.push_back(value);
      };
      put(class_row[c], 1);
      for (int d = 0; d < kDimensions; ++d) put(type_rows[t][d], classes[c].demand[d]);
      for (int h = 0; h < kHalfRows; ++h) {
        put(type_rows[t][kDimensions + h], 2 * classes[c].demand[h] > types[t].capacity[h] ? 1 : 0);
      }
    }
  }
  if (glp_get_num_cols(p.lp) == 0) return 0.0;
  glp_load_matrix(p.lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_ON;
  const int ret = glp_simplex(p.lp, &params);
  if (ret != 0 || glp_get_status(p.lp) != GLP_OPT) {
    return absl::InternalError(fmt::format(
        "packing bound: GLPK simplex failed (code {}, status {})", ret, glp_get_status(p.lp)));
  }
  return glp_get_obj_val(p.lp);
}

std::mutex& GlpkMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

absl::StatusOr<PackingBound> ComputePackingBound(const TraceInput& input, uint64_t seed,
                                                 double inflate) {
  // The same draws as the run's: the arrival order comes first from the seeded Rng.
  Rng rng(seed);
  const ArrivalOrder order =
      BuildArrivalOrder(input.pods.tasks, input.nodes.total_gpu_milli, inflate, rng);
  PackingBound bound;
  bound.seed = seed;
  bound.unallocated_pct_at_100 = std::nan("");
  const Bucket bucket = BucketAt100(input.pods.tasks, order.arrivals, input.nodes.total_gpu_milli);
  if (bucket.cut < 0) return bound;
  const std::vector<Arrival> prefix(order.arrivals.begin(),
                                    order.arrivals.begin() + bucket.cut + 1);
  bound.prefix_arrivals = bucket.cut + 1;
  bound.prefix_gpu_milli = bucket.arrived.back();
  const std::vector<NodeType> types = GroupNodes(input.nodes.nodes);
  const std::vector<TaskClass> classes = GroupTasks(input.pods.tasks, prefix);
  bound.node_types = static_cast<int32_t>(types.size());
  bound.task_classes = static_cast<int32_t>(classes.size());
  absl::StatusOr<double> optimum;
  {
    std::lock_guard<std::mutex> lock(GlpkMutex());
    optimum = SolveLp(classes, types);
  }
  if (!optimum.ok()) return optimum.status();
  // Rounded up past the simplex's tolerance, so that it cannot push the bound above the truth.
  bound.max_allocated_milli = std::ceil(*optimum * (1 + 1e-9)) + 1;
  // Each sample of the bucket holds at most what had arrived by then and at most the optimum.
  double allocated_sum = 0;
  for (int64_t arrived : bucket.arrived) {
    allocated_sum += std::min(static_cast<double>(arrived), bound.max_allocated_milli);
  }
  const double mean = allocated_sum / static_cast<double>(bucket.arrived.size());
  bound.unallocated_pct_at_100 =
      std::max(0.0, 100.0 - 100.0 * mean / static_cast<double>(input.nodes.total_gpu_milli));
  return bound;
}

absl::StatusOr<std::vector<PackingBound>> ComputePackingBounds(const TraceInput& input,
                                                               const std::vector<uint64_t>& seeds,
                                                               double inflate) {
  std::vector<PackingBound> out;
  for (uint64_t seed : seeds) {
    absl::StatusOr<PackingBound> b = ComputePackingBound(input, seed, inflate);
    if (!b.ok()) return b.status();
    out.push_back(*b);
  }
  return out;
}

double MedianBound(std::span<const PackingBound> bounds) {
  std::vector<double> values;
  for (const PackingBound& b : bounds) values.push_back(b.unallocated_pct_at_100);
  return Quantile(std::move(values), 0.5);
}

}  // namespace tessera::sim::alibaba
