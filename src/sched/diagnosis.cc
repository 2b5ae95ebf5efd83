#include "tessera/sched/diagnosis.h"

#include <algorithm>

#include "fmt/format.h"

namespace tessera {

void Diagnosis::Add(const Reason* reason, int64_t nodes) {
  for (ReasonCount& c : counts_) {
    if (c.reason == reason) {
      c.nodes += nodes;
      return;
    }
  }
  counts_.push_back({reason, nodes});
}

void Diagnosis::Merge(const Diagnosis& other) {
  total_nodes_ += other.total_nodes_;
  for (const ReasonCount& count : other.counts_) {
    if (count.nodes > 0) Add(count.reason, count.nodes);
  }
}

std::vector<ReasonCount> Diagnosis::Counts() const {
  std::vector<ReasonCount> sorted = counts_;
  std::sort(sorted.begin(), sorted.end(), [](const ReasonCount& a, const ReasonCount& b) {
    if (a.reason->out_of_scope != b.reason->out_of_scope) return b.reason->out_of_scope;
    if (a.nodes != b.nodes) return a.nodes > b.nodes;
    return a.reason->detail < b.reason->detail;
  });
  return sorted;
}

std::string_view Diagnosis::TopCode() const {
  std::vector<ReasonCount> sorted = Counts();
  return sorted.empty() ? std::string_view() : sorted.front().reason->code;
}

std::string Diagnosis::ToString() const {
  std::string out = fmt::format("0/{} nodes", total_nodes_);
  if (total_nodes_ == 0) return out + ": no nodes in the inventory";
  std::vector<ReasonCount> sorted = Counts();
  for (size_t i = 0; i < sorted.size(); ++i) {
    out += fmt::format("{}{} {}", i == 0 ? ": " : ", ", sorted[i].nodes, sorted[i].reason->detail);
  }
  return out;
}

}  // namespace tessera
