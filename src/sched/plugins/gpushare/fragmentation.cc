#include "sched/plugins/gpushare/fragmentation.h"

#include <algorithm>

namespace tessera::gpushare {
namespace {

bool IsCpuOnly(const TaskRequest& task) { return !task.NeedsGpu() || task.gpu_milli == 0; }

// Adds class `c`'s share of the node's free GPU to its case's bin. `allowed` says whether the
// node's model is allowed for c; `fitting` and `short_milli` are c's threshold state.
void AddClass(const PreparedClass& c, bool allowed, int64_t free_cpu, int64_t free_gpu,
              int32_t fitting, int64_t short_milli, FragmentBins& bins) {
  const bool cpu_fits = free_cpu >= c.cpu;
  FragmentCase what;
  if (c.gpu_count == 0) {
    what = cpu_fits ? FragmentCase::kCpuOnlyFits : FragmentCase::kCpuOnlyLacksCpu;
  } else if (!allowed) {
    what = FragmentCase::kNoAccess;
  } else if (fitting >= c.gpu_count) {
    if (cpu_fits) {
      // Q3: only the devices that cannot take one unit of the class are fragment.
      bins.milli[static_cast<int>(FragmentCase::kLackGpu)] +=
          c.probability * static_cast<double>(short_milli);
      bins.milli[static_cast<int>(FragmentCase::kSatisfied)] +=
          c.probability * static_cast<double>(free_gpu - short_milli);
      return;
    }
    what = FragmentCase::kLackCpu;
  } else {
    what = cpu_fits ? FragmentCase::kLackGpu : FragmentCase::kLackBoth;
  }
  bins.milli[static_cast<int>(what)] += c.probability * static_cast<double>(free_gpu);
}

}  // namespace

double FragmentBins::Fragment() const {
  double out = 0;
  for (int i = 0; i < kNumFragmentCases; ++i) {
    if (i != static_cast<int>(FragmentCase::kSatisfied)) out += milli[i];
  }
  return out;
}

double FragmentBins::Total() const {
  double out = 0;
  for (double v : milli) out += v;
  return out;
}

FragmentBins& FragmentBins::operator+=(const FragmentBins& other) {
  for (int i = 0; i < kNumFragmentCases; ++i) milli[i] += other.milli[i];
  return *this;
}

PreparedWorkload::PreparedWorkload(const TargetWorkload& workload) {
  classes_.reserve(workload.classes.size());
  for (const TaskClassShare& share : workload.classes) {
    const TaskRequest& r = share.request;
    PreparedClass c;
    c.cpu = r.cpu;
    c.probability = share.probability;
    if (!IsCpuOnly(r)) {
      c.gpu_milli = r.gpu_milli;
      c.gpu_count = r.gpu_count;
      thresholds_.push_back(r.gpu_milli);
    }
    classes_.push_back(c);
    for (const std::string& model : r.gpu_models) model_masks_.try_emplace(model);
  }
  std::sort(thresholds_.begin(), thresholds_.end());
  thresholds_.erase(std::unique(thresholds_.begin(), thresholds_.end()), thresholds_.end());
  for (PreparedClass& c : classes_) {
    if (c.gpu_count == 0) continue;
    c.threshold =
        static_cast<int32_t>(std::lower_bound(thresholds_.begin(), thresholds_.end(), c.gpu_milli) -
                             thresholds_.begin());
  }

  unnamed_model_mask_.resize(classes_.size());
  for (auto& [model, mask] : model_masks_) mask.resize(classes_.size());
  for (size_t i = 0; i < classes_.size(); ++i) {
    const TaskRequest& r = workload.classes[i].request;
    unnamed_model_mask_[i] = r.gpu_models.empty();
    for (auto& [model, mask] : model_masks_) mask[i] = r.AllowsModel(model);
  }
}

const PreparedWorkload::ClassMask& PreparedWorkload::AllowedClasses(std::string_view model) const {
  auto it = model_masks_.find(absl::string_view(model.data(), model.size()));
  return it == model_masks_.end() ? unnamed_model_mask_ : it->second;
}

int64_t ClassFragmentation(const Node& node, const TaskRequest& task_class) {
  int64_t free_gpu = 0;
  for (const GpuDevice& d : node.gpus) free_gpu += d.FreeMilli();
  if (IsCpuOnly(task_class) || !task_class.AllowsModel(node.GpuModel())) return free_gpu;
  int32_t fitting = 0;
  int64_t short_milli = 0;
  for (const GpuDevice& d : node.gpus) {
    if (d.FreeMilli() >= task_class.gpu_milli) {
      ++fitting;
    } else {
      short_milli += d.FreeMilli();
    }
  }
  const bool fits = node.FreeCpu() >= task_class.cpu && fitting >= task_class.gpu_count;
  return fits ? short_milli : free_gpu;
}

FragmentBins NodeFragmentationBins(const Node& node, const PreparedWorkload& workload) {
  return NodeFragmentationDelta(node, workload).BeforeBins();
}

double NodeFragmentation(const Node& node, const PreparedWorkload& workload) {
  return NodeFragmentationDelta(node, workload).Before();
}

NodeFragmentationDelta::NodeFragmentationDelta(const Node& node, const PreparedWorkload& workload)
    : node_(node),
      workload_(workload),
      allowed_(workload.AllowedClasses(node.GpuModel())),
      free_cpu_(node.FreeCpu()) {
  const std::span<const int64_t> thresholds = workload.thresholds();
  states_.resize(thresholds.size());
  for (const GpuDevice& d : node.gpus) {
    const int64_t free = d.FreeMilli();
    free_gpu_ += free;
    for (size_t t = 0; t < thresholds.size(); ++t) {
      if (free >= thresholds[t]) {
        ++states_[t].fitting_devices;
      } else {
        states_[t].short_milli += free;
      }
    }
  }
  before_ = BeforeBins().Fragment();
}

FragmentBins NodeFragmentationDelta::BeforeBins() const {
  return Bins(free_cpu_, free_gpu_, states_);
}

NodeFragmentationDelta::ThresholdStates NodeFragmentationDelta::StatesAfter(
    const HypotheticalPlacement& placement, int64_t* free_gpu) const {
  const std::span<const int64_t> thresholds = workload_.thresholds();
  ThresholdStates states = states_;
  *free_gpu = free_gpu_;
  for (int32_t index : placement.devices) {
    const int64_t was = node_.gpus[index].FreeMilli();
    const int64_t now = was - placement.gpu_milli;
    *free_gpu -= placement.gpu_milli;
    for (size_t t = 0; t < thresholds.size(); ++t) {
      const int64_t th = thresholds[t];
      ThresholdState& s = states[t];
      s.fitting_devices += static_cast<int32_t>(now >= th) - static_cast<int32_t>(was >= th);
      s.short_milli += (now < th ? now : 0) - (was < th ? was : 0);
    }
  }
  return states;
}

FragmentBins NodeFragmentationDelta::AfterBins(const HypotheticalPlacement& placement) const {
  int64_t free_gpu = 0;
  const ThresholdStates states = StatesAfter(placement, &free_gpu);
  return Bins(free_cpu_ - placement.cpu, free_gpu, states);
}

double NodeFragmentationDelta::CpuAwareBefore(double stranded_weight) const {
  return CpuAware(free_cpu_, free_gpu_, states_, stranded_weight);
}

double NodeFragmentationDelta::CpuAwareAfter(const HypotheticalPlacement& placement,
                                             double stranded_weight) const {
  int64_t free_gpu = 0;
  const ThresholdStates states = StatesAfter(placement, &free_gpu);
  return CpuAware(free_cpu_ - placement.cpu, free_gpu, states, stranded_weight);
}

double NodeFragmentationDelta::CpuAware(int64_t free_cpu, int64_t free_gpu,
                                        const ThresholdStates& states,
                                        double stranded_weight) const {
  double fragment = 0;
  const std::span<const PreparedClass> classes = workload_.classes();
  for (size_t i = 0; i < classes.size(); ++i) {
    const PreparedClass& c = classes[i];
    int64_t usable = 0;
    int64_t stranded = 0;
    if (c.gpu_count > 0 && allowed_[i] != 0 && free_cpu >= c.cpu &&
        states[c.threshold].fitting_devices >= c.gpu_count) {
      usable = free_gpu - states[c.threshold].short_milli;
      if (c.cpu > 0) {
        const int64_t copies_take = free_cpu / c.cpu * c.gpu_count * c.gpu_milli;
        stranded = usable - std::min(usable, copies_take);
      }
    }
    fragment += c.probability * (static_cast<double>(free_gpu - usable) +
                                 stranded_weight * static_cast<double>(stranded));
  }
  return fragment;
}

FragmentBins NodeFragmentationDelta::Bins(int64_t free_cpu, int64_t free_gpu,
                                          const ThresholdStates& states) const {
  FragmentBins bins;
  const std::span<const PreparedClass> classes = workload_.classes();
  for (size_t i = 0; i < classes.size(); ++i) {
    const PreparedClass& c = classes[i];
    const ThresholdState s = c.threshold >= 0 ? states[c.threshold] : ThresholdState{};
    AddClass(c, allowed_[i] != 0, free_cpu, free_gpu, s.fitting_devices, s.short_milli, bins);
  }
  return bins;
}

double ClusterFragmentation::Ratio() const {
  return free_milli > 0 ? bins.Fragment() / static_cast<double>(free_milli) : 0.0;
}

ClusterFragmentation MeasureCluster(std::span<const Node> nodes, const PreparedWorkload& workload) {
  ClusterFragmentation out;
  for (const Node& node : nodes) {
    if (node.removed) continue;
    out.bins += NodeFragmentationBins(node, workload);
    for (const GpuDevice& d : node.gpus) out.free_milli += d.FreeMilli();
  }
  return out;
}

}  // namespace tessera::gpushare
