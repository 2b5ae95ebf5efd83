#include "sched/queue/queue_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace tessera {
namespace {

using Int = absl::int128;

// Larger than any sum of int64 quantities of 2^31 queues: stands for "unbounded".
const Int kUnbounded = absl::MakeInt128(int64_t{1} << 40, 0);

constexpr std::string_view kGpuModelPrefix = "gpu:";

template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (out.append(fmt::format("{}", args)), ...);
  return out;
}

// Abseil here has its own string_view: hashed lookups take one.
absl::string_view AsKey(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsResourceName(std::string_view name) {
  if (name == "cpu" || name == "memory" || name == "gpu") return true;
  return name.starts_with(kGpuModelPrefix) && name.size() > kGpuModelPrefix.size();
}

void AddTo(ResourceList& list, std::string_view name, int64_t value) {
  if (value == 0) return;
  auto it = list.find(name);
  if (it == list.end()) it = list.emplace(std::string(name), 0).first;
  it->second += value;
  if (it->second == 0) list.erase(it);
}

// A number with at most 3 decimals, trailing zeros dropped: 2.5, 16, 0.125.
std::string Decimal(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string FormatInt(std::string_view resource, Int value) {
  if (value >= kUnbounded) return "unbounded";
  if (value > std::numeric_limits<int64_t>::max()) return "more than 9.2e18";
  if (value < std::numeric_limits<int64_t>::min()) return "less than -9.2e18";
  return FormatQuantity(resource, static_cast<int64_t>(value));
}

}  // namespace

ResourceList JobCharge(std::span<const TaskRequest> tasks) {
  ResourceList charge;
  for (const TaskRequest& task : tasks) {
    AddTo(charge, "cpu", task.cpu);
    AddTo(charge, "memory", task.memory);
    AddTo(charge, "gpu", task.TotalGpuMilli());
    if (task.gpu_models.size() == 1) {
      AddTo(charge, Cat(kGpuModelPrefix, task.gpu_models.front()), task.TotalGpuMilli());
    }
  }
  return charge;
}

ResourceList JobCharge(const JobSpec& spec) {
  ResourceList charge;
  for (const TaskGroup& group : spec.tasks) {
    const ResourceList one = JobCharge(std::span<const TaskRequest>(&group.request, 1));
    for (const auto& [name, value] : one) AddTo(charge, name, value * group.replicas);
  }
  return charge;
}

std::string FormatQuantity(std::string_view resource, int64_t value) {
  const double v = static_cast<double>(value);
  if (resource == "cpu") return Decimal(v / 1000) + (value == 1000 ? " core" : " cores");
  if (resource == "memory") return Decimal(v / (1024.0 * 1024 * 1024)) + " GiB";
  if (resource == "gpu" || resource.starts_with(kGpuModelPrefix)) {
    return Decimal(v / 1000) + (value == 1000 ? " GPU" : " GPUs");
  }
  return std::to_string(value);
}

absl::StatusOr<QueueTree> QueueTree::Create(std::span<const QueueSpec> specs) {
  if (specs.empty()) return absl::InvalidArgumentError("queues: at least one queue is required");
  QueueTree tree;
  tree.specs_.assign(specs.begin(), specs.end());
  absl::Status status = tree.Build();
  if (!status.ok()) return status;
  return tree;
}

absl::Status QueueTree::Build() {
  const int32_t n = size();
  const auto field = [](int32_t q, std::string_view name) { return Cat("queues[", q, "].", name); };
  std::vector<std::string> resources;
  for (int32_t q = 0; q < n; ++q) {
    const QueueSpec& s = specs_[q];
    if (s.name.empty()) return absl::InvalidArgumentError(field(q, "name: required"));
    if (!by_name_.emplace(s.name, q).second) {
      return absl::InvalidArgumentError(Cat(field(q, "name"), ": \"", s.name, "\" given twice"));
    }
    if (s.weight < 1) return absl::InvalidArgumentError(field(q, "weight: must be >= 1"));
    for (const auto& [list_name, list] :
         {std::pair{"guaranteed", &s.guaranteed}, std::pair{"borrowing_limit", &s.borrowing_limit},
          std::pair{"lending_limit", &s.lending_limit}}) {
      for (const auto& [resource, value] : *list) {
        const std::string at = Cat(field(q, list_name), ".", resource);
        if (!IsResourceName(resource)) {
          return absl::InvalidArgumentError(
              Cat(at, ": unknown resource (cpu, memory, gpu, gpu:<model>)"));
        }
        if (value < 0) return absl::InvalidArgumentError(Cat(at, ": must be >= 0"));
        resources.push_back(resource);
      }
    }
  }
  // Parents, then cycles.
  parent_.assign(n, n);
  children_.assign(n + 1, {});
  for (int32_t q = 0; q < n; ++q) {
    const std::string& p = specs_[q].parent;
    if (p.empty()) continue;
    auto it = by_name_.find(p);
    if (it == by_name_.end()) {
      return absl::InvalidArgumentError(Cat(field(q, "parent"), ": unknown queue \"", p, "\""));
    }
    parent_[q] = it->second;
  }
  for (int32_t q = 0; q < n; ++q) {
    std::vector<int32_t> chain = {q};
    for (int32_t a = parent_[q]; a != n; a = parent_[a]) {
      if (a == q || chain.size() > static_cast<size_t>(n)) {
        std::vector<std::string> names;
        for (int32_t c : chain) names.push_back(specs_[c].name);
        names.push_back(specs_[q].name);
        return absl::InvalidArgumentError(
            Cat(field(q, "parent"), ": cycle ", fmt::format("{}", fmt::join(names, " -> "))));
      }
      chain.push_back(a);
    }
  }
  for (int32_t q = 0; q < n; ++q) children_[parent_[q]].push_back(q);
  paths_.assign(n, {});
  for (int32_t q : TreeOrder()) {
    if (parent_[q] != n) paths_[q] = paths_[parent_[q]];
    paths_[q].push_back(q);
  }

  // Managed resources and their quota columns.
  std::sort(resources.begin(), resources.end());
  resources.erase(std::unique(resources.begin(), resources.end()), resources.end());
  managed_ = std::move(resources);
  for (size_t r = 0; r < managed_.size(); ++r) managed_index_[managed_[r]] = static_cast<int>(r);
  const size_t cells = static_cast<size_t>(n + 1) * managed_.size();
  guaranteed_.assign(cells, 0);
  cap_.assign(cells, kUnbounded);
  lending_.assign(cells, kUnbounded);
  used_.assign(cells, 0);
  child_occupy_.assign(cells, 0);
  empty_max_.assign(cells, 0);
  usage_.assign(n + 1, {});
  std::vector<int32_t> order = TreeOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {  // children before parents
    const int32_t q = *it;
    const QueueSpec& s = specs_[q];
    for (size_t r = 0; r < managed_.size(); ++r) {
      const int ri = static_cast<int>(r);
      auto g = s.guaranteed.find(managed_[r]);
      if (g != s.guaranteed.end()) {
        At(guaranteed_, q, ri) = g->second;
      } else {
        Int sum = 0;
        for (int32_t c : children_[q]) sum += At(guaranteed_, c, ri);
        At(guaranteed_, q, ri) = sum;
      }
      auto b = s.borrowing_limit.find(managed_[r]);
      if (b != s.borrowing_limit.end()) At(cap_, q, ri) = At(guaranteed_, q, ri) + b->second;
      auto l = s.lending_limit.find(managed_[r]);
      if (l != s.lending_limit.end()) At(lending_, q, ri) = l->second;
    }
  }
  // The cohort of the roots: its capacity is the sum of their guarantees.
  for (size_t r = 0; r < managed_.size(); ++r) {
    const int ri = static_cast<int>(r);
    Int sum = 0;
    for (int32_t root : children_[n]) sum += At(guaranteed_, root, ri);
    At(guaranteed_, n, ri) = sum;
    At(cap_, n, ri) = sum;
  }
  for (int32_t q = 0; q < n; ++q) {
    for (size_t r = 0; r < managed_.size(); ++r) {
      At(child_occupy_, parent_[q], static_cast<int>(r)) += Occupy(q, static_cast<int>(r));
    }
  }
  // maxU with nothing admitted, top-down.
  for (size_t r = 0; r < managed_.size(); ++r) {
    const int ri = static_cast<int>(r);
    At(empty_max_, n, ri) = At(guaranteed_, n, ri);
    for (int32_t q : order) {
      const int32_t p = parent_[q];
      const Int others = At(child_occupy_, p, ri) - Occupy(q, ri);
      At(empty_max_, q, ri) = std::min(At(cap_, q, ri), At(empty_max_, p, ri) - others);
    }
  }
  history_.assign(n + 1, 0.0);
  RebuildCapacityUse();
  return absl::OkStatus();
}

int32_t QueueTree::Find(std::string_view name) const {
  auto it = by_name_.find(AsKey(name));
  return it == by_name_.end() ? -1 : it->second;
}

int32_t QueueTree::parent(int32_t q) const { return parent_[q] == size() ? -1 : parent_[q]; }

std::vector<int32_t> QueueTree::TreeOrder() const {
  std::vector<int32_t> order;
  order.reserve(size());
  std::vector<int32_t> stack(children_.back().rbegin(), children_.back().rend());
  while (!stack.empty()) {
    const int32_t q = stack.back();
    stack.pop_back();
    order.push_back(q);
    stack.insert(stack.end(), children_[q].rbegin(), children_[q].rend());
  }
  return order;
}

ResourceList QueueTree::Guaranteed(int32_t q) const {
  ResourceList out;
  for (size_t r = 0; r < managed_.size(); ++r) {
    const Int g = At(guaranteed_, q, static_cast<int>(r));
    out[managed_[r]] = g > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max()
                                                               : static_cast<int64_t>(g);
  }
  return out;
}

int QueueTree::ManagedIndex(std::string_view resource) const {
  auto it = managed_index_.find(AsKey(resource));
  return it == managed_index_.end() ? -1 : it->second;
}

Int QueueTree::Occupy(int32_t q, int r) const {
  return std::max(At(used_, q, r), At(guaranteed_, q, r) - At(lending_, q, r));
}

void QueueTree::MaxUse(int32_t leaf, int r, bool empty, PathValues& out) const {
  const std::vector<int32_t>& path = paths_[leaf];
  out.resize(path.size());
  if (empty) {
    for (size_t i = 0; i < path.size(); ++i) out[i] = At(empty_max_, path[i], r);
    return;
  }
  Int parent_max = At(guaranteed_, size(), r);
  for (size_t i = 0; i < path.size(); ++i) {
    const int32_t q = path[i];
    const Int others = At(child_occupy_, parent_[q], r) - Occupy(q, r);
    out[i] = std::min(At(cap_, q, r), parent_max - others);
    parent_max = out[i];
  }
}

QueueTree::Verdict QueueTree::Check(int32_t leaf, const ResourceList& charge, bool empty) const {
  PathValues max_use;
  const std::vector<int32_t>& path = paths_[leaf];
  for (const auto& [resource, amount] : charge) {
    const int r = ManagedIndex(resource);
    if (r < 0 || amount <= 0) continue;
    MaxUse(leaf, r, empty, max_use);
    // From the root down: the first queue that fails names the constraint that binds (a leaf's
    // maxU already includes what its ancestors leave it).
    for (size_t i = 0; i < path.size(); ++i) {
      const int32_t q = path[i];
      const Int used = empty ? Int(0) : At(used_, q, r);
      if (used + amount <= max_use[i]) continue;
      const QueueSpec& s = specs_[q];
      const Int g = At(guaranteed_, q, r);
      const Int cap = At(cap_, q, r);
      const std::string limits =
          Cat("guaranteed ", FormatInt(resource, g), ", borrowing limit ",
              cap >= kUnbounded ? "unbounded" : FormatInt(resource, cap - g));
      Verdict v{.fits = false};
      if (empty) {
        v.message = Cat("queue \"", s.name, "\" ", resource, ": needs ",
                        FormatQuantity(resource, amount), ", more than the queue can ever use (",
                        FormatInt(resource, std::max(max_use[i], Int(0))), ": ", limits, ")");
      } else {
        v.message =
            Cat("queue \"", s.name, "\" ", resource, ": needs ", FormatQuantity(resource, amount),
                ", ", FormatInt(resource, std::max(max_use[i] - used, Int(0))), " available (",
                FormatInt(resource, used), " admitted, may use ",
                FormatInt(resource, std::max(max_use[i], Int(0))), " now: ", limits, ")");
      }
      return v;
    }
  }
  return Verdict{};
}

QueueTree::Verdict QueueTree::CanAdmit(int32_t leaf, const ResourceList& charge) const {
  return Check(leaf, charge, false);
}

QueueTree::Verdict QueueTree::CanEverAdmit(int32_t leaf, const ResourceList& charge) const {
  return Check(leaf, charge, true);
}

void QueueTree::Add(int32_t leaf, const ResourceList& charge, int64_t sign) {
  const std::vector<int32_t>& path = paths_[leaf];
  const size_t columns = capacity_.size();
  for (const auto& [resource, amount] : charge) {
    const int64_t delta = sign * amount;
    for (int32_t q : path) AddTo(usage_[q], resource, delta);
    AddTo(usage_[size()], resource, delta);
    if (auto c = capacity_index_.find(AsKey(resource)); c != capacity_index_.end()) {
      for (int32_t q : path) capacity_use_[q * columns + c->second] += delta;
    }
    const int r = ManagedIndex(resource);
    if (r < 0) continue;
    for (int32_t q : path) {
      const Int before = Occupy(q, r);
      At(used_, q, r) += delta;
      At(child_occupy_, parent_[q], r) += Occupy(q, r) - before;
    }
    At(used_, size(), r) += delta;
  }
}

void QueueTree::Admit(int32_t leaf, const ResourceList& charge) { Add(leaf, charge, 1); }

void QueueTree::Release(int32_t leaf, const ResourceList& charge) { Add(leaf, charge, -1); }

bool QueueTree::IsBorrowing(int32_t q) const {
  for (size_t r = 0; r < managed_.size(); ++r) {
    const int ri = static_cast<int>(r);
    if (At(used_, q, ri) > At(guaranteed_, q, ri)) return true;
  }
  return false;
}

bool QueueTree::IsBorrowing(int32_t q, std::string_view resource) const {
  const int r = ManagedIndex(resource);
  return r >= 0 && At(used_, q, r) > At(guaranteed_, q, r);
}

bool QueueTree::WithinOwnGuarantee(int32_t q, std::string_view resource, int64_t amount) const {
  const int r = ManagedIndex(resource);
  return r >= 0 && At(used_, q, r) + amount <= At(guaranteed_, q, r);
}

bool QueueTree::WithinGuarantee(int32_t leaf, const ResourceList& charge) const {
  for (const auto& [resource, amount] : charge) {
    const int r = ManagedIndex(resource);
    if (r < 0) continue;
    for (int32_t q : paths_[leaf]) {
      if (At(used_, q, r) + amount > At(guaranteed_, q, r)) return false;
    }
  }
  return true;
}

void QueueTree::SetCapacity(const ResourceList& total) {
  capacity_names_.clear();
  capacity_.clear();
  capacity_index_.clear();
  for (const auto& [resource, value] : total) {
    if (value <= 0) continue;
    capacity_index_[resource] = static_cast<int>(capacity_.size());
    capacity_names_.push_back(resource);
    capacity_.push_back(static_cast<double>(value));
  }
  RebuildCapacityUse();
}

void QueueTree::RebuildCapacityUse() {
  const size_t columns = capacity_.size();
  capacity_use_.assign((specs_.size() + 1) * columns, 0);
  for (size_t q = 0; q <= specs_.size(); ++q) {
    for (size_t c = 0; c < columns; ++c) {
      auto it = usage_[q].find(capacity_names_[c]);
      if (it != usage_[q].end()) capacity_use_[q * columns + c] = it->second;
    }
  }
}

void QueueTree::Configure(FairShareMode mode, Duration half_life) {
  mode_ = mode;
  half_life_ = std::max(half_life, Duration::zero());
  std::fill(history_.begin(), history_.end(), 0.0);
  has_time_ = false;
}

double QueueTree::DominantShare(int32_t q) const {
  const size_t columns = capacity_.size();
  double share = 0;
  for (size_t c = 0; c < columns; ++c) {
    share = std::max(share, static_cast<double>(capacity_use_[q * columns + c]) / capacity_[c]);
  }
  return share;
}

void QueueTree::AdvanceTime(TimePoint now) {
  if (!has_time_ || half_life_ <= Duration::zero()) {
    has_time_ = true;
    last_time_ = now;
    return;
  }
  if (now <= last_time_) return;
  // An exponential moving average of the dominant share, exact for use constant in between.
  const double dt = static_cast<double>((now - last_time_).count());
  const double keep = std::exp2(-dt / static_cast<double>(half_life_.count()));
  for (int32_t q = 0; q < size(); ++q) {
    history_[q] = history_[q] * keep + DominantShare(q) * (1 - keep);
  }
  last_time_ = now;
}

double QueueTree::Share(int32_t q) const {
  return (DominantShare(q) + history_[q]) / specs_[q].weight;
}

}  // namespace tessera
