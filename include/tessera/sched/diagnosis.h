// Diagnosis: why a task found no node, counted per reason.
//
// Every node that was rejected is counted under the Reason its first failing filter gave, so
// the answer to "why is my job pending" is exact: "0/1213 nodes: 1100 insufficient gpu,
// 113 gpu model not allowed". Reasons are ordered by count (descending), then by detail, except
// that out-of-scope reasons (Reason::out_of_scope: nodes of clusters the job does not select)
// come after every other: "0/1214 nodes: 1 insufficient cpu, 1213 cluster not selected".
// A value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/sched/sched_status.h"

namespace tessera {

struct ReasonCount {
  const Reason* reason = nullptr;
  int64_t nodes = 0;
};

class Diagnosis {
 public:
  void Add(const Reason* reason, int64_t nodes = 1);
  // Adds another diagnosis over other nodes (another cluster): totals and counts add up;
  // reasons counted on no node are dropped.
  void Merge(const Diagnosis& other);
  void set_total_nodes(int64_t n) { total_nodes_ = n; }

  int64_t total_nodes() const { return total_nodes_; }
  // Reasons in scope first, then out-of-scope ones; each part by count (descending), then
  // detail.
  std::vector<ReasonCount> Counts() const;
  // The code of the first of Counts(): the most common reason among the nodes in the job's
  // scope ("InsufficientResources"), or, when every rejected node was out of scope, the most
  // common of those ("NodeSelectorMismatch"); empty when none.
  std::string_view TopCode() const;
  // "0/1213 nodes: 1100 insufficient gpu, 113 gpu model not allowed" (in Counts() order);
  // "0/0 nodes: no nodes in the inventory" when there are none.
  std::string ToString() const;

 private:
  std::vector<ReasonCount> counts_;  // few distinct reasons: a flat vector beats a map
  int64_t total_nodes_ = 0;
};

}  // namespace tessera
