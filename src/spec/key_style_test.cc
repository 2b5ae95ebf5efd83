#include "spec/key_style.h"

#include "gtest/gtest.h"

namespace tessera::spec {
namespace {

TEST(KeyStyleTest, SnakeCaseSpellsTheScenarioKeys) {
  EXPECT_EQ(StyleKey("minAvailable", KeyStyle::kSnakeCase), "min_available");
  EXPECT_EQ(StyleKey("clusterAntiAffinity", KeyStyle::kSnakeCase), "cluster_anti_affinity");
  EXPECT_EQ(StyleKey("terminationGracePeriod", KeyStyle::kSnakeCase), "termination_grace");
  EXPECT_EQ(StyleKey("bestEffortFifo", KeyStyle::kSnakeCase), "best_effort_fifo");
  EXPECT_EQ(StyleKey("queue", KeyStyle::kSnakeCase), "queue");
  EXPECT_EQ(StyleKey("minAvailable", KeyStyle::kCamelCase), "minAvailable");
}

TEST(KeyStyleTest, IsSpelledAsAgreesWithStyleKey) {
  const char* const camel[] = {"minAvailable", "terminationGracePeriod", "gpu", "gpuModel", ""};
  const char* const written[] = {"min_available",
                                 "minAvailable",
                                 "termination_grace",
                                 "termination_grace_period",
                                 "gpu",
                                 "gpu_",
                                 "gpu_model",
                                 "gpu_Model",
                                 "gpumodel",
                                 "",
                                 "_"};
  for (const KeyStyle style : {KeyStyle::kCamelCase, KeyStyle::kSnakeCase}) {
    for (const char* c : camel) {
      for (const char* w : written) {
        EXPECT_EQ(IsSpelledAs(c, w, style), StyleKey(c, style) == w) << c << " " << w;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::spec
