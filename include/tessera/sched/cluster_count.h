// ClusterCount: how many clusters the nodes of the state belong to, as the framework tells
// plugins through the CycleState.
//
// Before PreFilter and PreScore of every attempt on a state whose nodes belong to several
// clusters (Node::cluster), the framework writes kClusterCountKey; with a single cluster it
// writes nothing (Read returns nullptr: one cluster). Cluster-level plugins use it to step aside
// where they cannot tell nodes apart: a scorer whose score is equal over the nodes of a cluster
// (ClusterScore's cost tiers) returns Skip from PreScore with one cluster, which makes the
// framework skip its Score for the attempt. The framework drops its cached scores whenever the
// state goes from one cluster to several, so such a skip never mixes with cached scores.
// A value type; read on the scheduling thread.
#pragma once

#include <cstdint>

#include "tessera/sched/cycle_state.h"

namespace tessera {

struct ClusterCount {
  int32_t clusters = 1;
};

inline constexpr StateKey<ClusterCount> kClusterCountKey{"Framework/clusters"};

}  // namespace tessera
