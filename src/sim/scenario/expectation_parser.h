// ExpectationParser: the `expect:` list of a scenario file to Expectations.
//
// Each entry has one timing (`at: T`, `by: T`, `always: true`, `end: true`), one subject (`job`,
// `queue`, or `invariant`, which holds always) and, for a job or queue, one or more checks that
// must all hold at the same instant. Names of jobs, nodes, queues, clusters and pools are
// checked against the ScenarioIndex. Errors as YamlReader's: "FILE:LINE: expect[3].phase: …".
// Internal to the parser; not thread-safe.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_index.h"
#include "sim/scenario/yaml_reader.h"

namespace tessera::sim {

class ExpectationParser {
 public:
  ExpectationParser(const YamlReader& reader, const ScenarioIndex& index)
      : r_(reader), index_(index) {}

  absl::StatusOr<std::vector<Expectation>> ParseAll(const YAML::Node& list) const;

 private:
  absl::StatusOr<Expectation> ParseOne(const YAML::Node& n, const std::string& path) const;
  absl::Status ParseTiming(std::string_view key, const YAML::Node& v, const std::string& field,
                           Expectation& e) const;
  absl::StatusOr<Check> ParseJobCheck(std::string_view key, const YAML::Node& v,
                                      const std::string& field) const;
  absl::StatusOr<Bounds> ParseBounds(const YAML::Node& v, const std::string& field,
                                     bool durations) const;
  absl::StatusOr<ResourceBounds> ParseResourceBounds(const YAML::Node& v,
                                                     const std::string& field) const;
  absl::StatusOr<std::string> ExistingJob(const YAML::Node& v, const std::string& field) const;

  const YamlReader& r_;
  const ScenarioIndex& index_;
};

}  // namespace tessera::sim
