// ScenarioIndex: the names a scenario file defines, for the parser's cross-reference checks.
//
// Filled while the file is parsed (clusters, nodes, pools, queues, jobs, in file order) and read
// when a later section names one of them: an event or expectation that names a node, job or
// queue that does not exist is an error of the file. A value type, internal to the parser.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace tessera::sim {

struct ScenarioIndex {
  std::set<std::string, std::less<>> clusters;
  std::map<std::string, int32_t, std::less<>> nodes;  // node -> its number of GPUs
  std::set<std::string, std::less<>> pools;
  std::map<std::string, bool, std::less<>> queues;   // queue -> is a leaf
  std::map<std::string, int32_t, std::less<>> jobs;  // job -> index in Scenario::jobs
};

}  // namespace tessera::sim
