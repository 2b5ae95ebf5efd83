#include "spec/priority_class.h"

namespace tessera::spec {

const PriorityClasses& BuiltinPriorityClasses() {
  static const PriorityClasses* const kClasses =
      new PriorityClasses{{"low", -100}, {"normal", 0}, {"high", 100}, {"critical", 1000}};
  return *kClasses;
}

}  // namespace tessera::spec
