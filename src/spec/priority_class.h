// Priority classes: names a job spec may give instead of a number (`priorityClass: high`).
//
// A class is a name for a priority value; the spec stores only the number, so a job rendered
// back shows `priority: 100`. The built-in classes are
//   low -100, normal 0 (the default priority), high 100, critical 1000;
// a server may pass its own table in ParseOptions (jobspec.h).
// Thread-safe: the built-in table is immutable.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace tessera::spec {

using PriorityClasses = std::map<std::string, int32_t, std::less<>>;

const PriorityClasses& BuiltinPriorityClasses();

}  // namespace tessera::spec
