#include "api/jobspec/priority_class.h"

namespace tessera::api {

const PriorityClasses& BuiltinPriorityClasses() {
  static const PriorityClasses* const kClasses =
      new PriorityClasses{{"low", -100}, {"normal", 0}, {"high", 100}, {"critical", 1000}};
  return *kClasses;
}

}  // namespace tessera::api
