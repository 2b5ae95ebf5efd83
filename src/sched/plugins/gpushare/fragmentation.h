// Fragmentation: how much of a node's free GPU the typical tasks of a workload cannot use.
//
// The measure of the FGD paper (Weng et al., "Beware of Fragmentation", USENIX ATC'23), with the
// semantics of its artifact (hkust-adsl/kubernetes-scheduler-simulator, pkg/utils/frag.go). All
// quantities are milli-GPU (1000 = one GPU) and millicores. For a node n and a task class m:
//
//   F_n(m) = free_gpu(n)                           when m is CPU-only (gpu_milli == 0 or no GPU)
//          = free_gpu(n)                           when n's GPU model is not allowed for m
//          = sum of free on devices with free < m.gpu_milli
//                                                  when m fits: free cpu >= m.cpu and at least
//                                                  m.gpu_count devices have free >= m.gpu_milli
//          = free_gpu(n)                           otherwise (too little GPU, CPU, or both)
//
//   F_n(M) = sum over classes m of p_m * F_n(m)    (the expected unusable free GPU of n)
//
// Memory (host and device) is ignored, as in the paper. A node's GPU model is Node::GpuModel()
// (the artifact's nodes have one model each). An unhealthy device counts as having nothing free.
//
// Every case (the paper's quadrants) accumulates into a bin of its own, and F_n(M) is the sum of
// the bins other than "satisfied", in bin order — exactly as the artifact sums them, so that the
// FGD score, which truncates 100 * sigmoid(-delta / 1000) to an integer, ties where the
// artifact's ties.
//
// PreparedWorkload precomputes what the hot path needs (classes grouped by their per-device
// milli-GPU, allowed-class masks per GPU model), and NodeFragmentationDelta evaluates F after a
// hypothetical placement on a node without copying the node: FGD scores each of up to 8
// candidate devices on each of ~1,200 nodes against ~35 classes per task.
//
// Thread-safety: every function is pure; a PreparedWorkload is immutable once built and may be
// shared by threads.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/job.h"
#include "core/node.h"
#include "core/target_workload.h"

namespace tessera::gpushare {

// The case a (node, task class) pair falls in; names after the paper's quadrants.
enum class FragmentCase : int32_t {
  kLackBoth = 0,         // Q1: neither the CPU nor the GPUs fit: all free GPU is fragment
  kLackGpu = 1,          // Q2: the CPU fits, the GPUs do not: all free GPU is fragment
  kSatisfied = 2,        // Q3: the class fits: the devices below its gpu_milli are fragment
  kLackCpu = 3,          // Q4: the GPUs fit, the CPU does not: all free GPU is fragment
  kCpuOnlyFits = 4,      // XL: a CPU-only class that fits: it never uses GPUs, all is fragment
  kCpuOnlyLacksCpu = 5,  // XR: a CPU-only class that does not fit: all is fragment
  kNoAccess = 6,         // the node's GPU model is not allowed for the class: all is fragment
};
inline constexpr int kNumFragmentCases = 7;

// Milli-GPU per case, weighted by class probability. bins[kSatisfied] holds the free GPU that
// satisfied classes can use; the part of a satisfied class's free GPU that it cannot use
// (devices below its gpu_milli) is counted under kLackGpu, as the artifact does.
struct FragmentBins {
  std::array<double, kNumFragmentCases> milli{};

  // Sum of every bin except kSatisfied, in bin order: F_n(M).
  double Fragment() const;
  // Sum of every bin: the free GPU of the node(s), times the sum of class probabilities.
  double Total() const;
  FragmentBins& operator+=(const FragmentBins& other);
};

// One task class reduced to what the measure reads.
struct PreparedClass {
  int64_t cpu = 0;         // millicores
  int64_t gpu_milli = 0;   // per device; 0 for CPU-only classes
  int32_t gpu_count = 0;   // 0 for CPU-only classes
  int32_t threshold = -1;  // index into PreparedWorkload::thresholds(); -1 when CPU-only
  double probability = 0;
};

// A TargetWorkload prepared for fast evaluation. Immutable; cheap to share by const reference.
class PreparedWorkload {
 public:
  // Per-model class masks: mask[i] != 0 when class i may use devices of the model.
  using ClassMask = std::vector<uint8_t>;

  explicit PreparedWorkload(const TargetWorkload& workload);

  std::span<const PreparedClass> classes() const { return classes_; }
  // The distinct gpu_milli values of the GPU classes, ascending.
  std::span<const int64_t> thresholds() const { return thresholds_; }
  // Which classes may use a node whose devices are of `model` ("" for a node without GPUs).
  const ClassMask& AllowedClasses(std::string_view model) const;

 private:
  std::vector<PreparedClass> classes_;
  std::vector<int64_t> thresholds_;
  ClassMask unnamed_model_mask_;  // for models no class names: the classes that allow any model
  absl::flat_hash_map<std::string, ClassMask> model_masks_;
};

// F_n(m) for one task class, in milli-GPU. The reference definition, without preparation.
int64_t ClassFragmentation(const Node& node, const TaskRequest& task_class);

// F_n(M) and its split into cases.
FragmentBins NodeFragmentationBins(const Node& node, const PreparedWorkload& workload);
double NodeFragmentation(const Node& node, const PreparedWorkload& workload);

// A hypothetical placement on a node: `cpu` millicores, and `gpu_milli` taken from each of
// `devices` (distinct indices on the node; empty for CPU-only tasks).
struct HypotheticalPlacement {
  int64_t cpu = 0;
  std::span<const int32_t> devices;
  int64_t gpu_milli = 0;
};

// Evaluates F_n(M) of one node before and after hypothetical placements, without copying the
// node: built once per node (O(thresholds x devices)), then each After() costs
// O(classes + thresholds x |devices|) and allocates nothing for up to 32 distinct thresholds.
class NodeFragmentationDelta {
 public:
  NodeFragmentationDelta(const Node& node, const PreparedWorkload& workload);

  // F_n(M) of the node as it is, and its split into cases.
  double Before() const { return before_; }
  FragmentBins BeforeBins() const;
  // The split into cases after `placement` (see After()).
  FragmentBins AfterBins(const HypotheticalPlacement& placement) const;
  // F_n(M) after `placement`. REQUIRES: the placement fits the node's free cpu and devices.
  double After(const HypotheticalPlacement& placement) const {
    return AfterBins(placement).Fragment();
  }
  // After(placement) - Before().
  double Delta(const HypotheticalPlacement& placement) const { return After(placement) - before_; }

  // The CPU-aware measure of the FGD-CPU policy (fgd_cpu.h), as the node is and after
  // `placement`: F_n(M) plus, weighted by `stranded_weight`, the GPU that a class m counts
  // usable but that more copies of m than the node's free cpu admits would need,
  //
  //   S_n(m)  = U_n(m) - min(U_n(m), floor(free_cpu(n) / m.cpu) * m.gpu_count * m.gpu_milli)
  //   F~_n(m) = F_n(m) + stranded_weight * S_n(m)
  //
  // where U_n(m) = free_gpu(n) - F_n(m) is what the paper's measure counts usable (S is 0 when
  // m.cpu is 0). F~_n(M) = sum over classes of p_m * F~_n(m); with weight 0 it is F_n(M).
  double CpuAwareBefore(double stranded_weight) const;
  double CpuAwareAfter(const HypotheticalPlacement& placement, double stranded_weight) const;

 private:
  // Per distinct gpu_milli threshold: devices with free >= threshold, and the free milli-GPU of
  // the devices below it.
  struct ThresholdState {
    int32_t fitting_devices = 0;
    int64_t short_milli = 0;
  };
  using ThresholdStates = absl::InlinedVector<ThresholdState, 32>;

  FragmentBins Bins(int64_t free_cpu, int64_t free_gpu, const ThresholdStates& states) const;
  // The threshold states and free milli-GPU after `placement`'s devices lose its milli-GPU.
  ThresholdStates StatesAfter(const HypotheticalPlacement& placement, int64_t* free_gpu) const;
  double CpuAware(int64_t free_cpu, int64_t free_gpu, const ThresholdStates& states,
                  double stranded_weight) const;

  const Node& node_;
  const PreparedWorkload& workload_;
  const PreparedWorkload::ClassMask& allowed_;
  int64_t free_cpu_ = 0;
  int64_t free_gpu_ = 0;
  ThresholdStates states_;
  double before_ = 0;
};

// The cluster measures of the paper: F(M) = sum of F_n(M) over the nodes that are not removed,
// and the free milli-GPU of those nodes.
struct ClusterFragmentation {
  FragmentBins bins;       // summed over nodes, per case
  int64_t free_milli = 0;  // total free milli-GPU

  double FragmentMilli() const { return bins.Fragment(); }
  // F(M) / free milli-GPU, in [0, 1] when the probabilities sum to 1; 0 when nothing is free.
  double Ratio() const;
};
ClusterFragmentation MeasureCluster(std::span<const Node> nodes, const PreparedWorkload& workload);

}  // namespace tessera::gpushare
