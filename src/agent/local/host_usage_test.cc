#include "agent/local/host_usage.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

namespace fs = std::filesystem;

TEST(HostUsageTest, ParsesCpuTicks) {
  absl::StatusOr<CpuTicks> ticks =
      ParseCpuTicks("cpu  100 5 50 800 20 3 2 1 0 0\ncpu0 50 2 25 400 10 1 1 0 0 0\n");
  ASSERT_TRUE(ticks.ok()) << ticks.status();
  EXPECT_EQ(ticks->busy, 100u + 5 + 50 + 3 + 2 + 1);
  EXPECT_EQ(ticks->total, ticks->busy + 800 + 20);
  EXPECT_FALSE(ParseCpuTicks("cpu0 1 2 3 4\n").ok());
  EXPECT_FALSE(ParseCpuTicks("cpu  1 x 3 4\n").ok());
  EXPECT_FALSE(ParseCpuTicks("").ok());
}

TEST(HostUsageTest, ParsesMemoryUsed) {
  absl::StatusOr<int64_t> used =
      ParseMemoryUsed("MemTotal:       16000 kB\nMemFree:  1000 kB\nMemAvailable:   6000 kB\n");
  ASSERT_TRUE(used.ok());
  EXPECT_EQ(*used, 10000 * 1024);
  EXPECT_FALSE(ParseMemoryUsed("MemTotal: 100 kB\n").ok());
  EXPECT_FALSE(ParseMemoryUsed("MemTotal: 100 kB\nMemAvailable: 200 kB\n").ok());
  EXPECT_FALSE(ParseMemoryUsed("MemTotalX: 100 kB\nMemAvailable: 50 kB\n").ok());
}

TEST(HostUsageTest, CpuMeterTurnsTicksIntoMillicores) {
  const fs::path root = fs::temp_directory_path() / ("host_usage_test_" + std::to_string(getpid()));
  fs::create_directories(root);
  const auto write = [&](const char* line) { std::ofstream(root / "stat") << line; };
  HostCpuMeter meter(4, root.string());
  write("cpu  100 0 0 900 0 0 0 0\n");
  EXPECT_FALSE(meter.Sample().has_value());  // the first reading has nothing to compare with
  write("cpu  150 0 0 950 0 0 0 0\n");       // half of the ticks busy
  EXPECT_EQ(meter.Sample(), 2000);
  write("cpu  150 0 0 950 0 0 0 0\n");       // no time passed
  EXPECT_FALSE(meter.Sample().has_value());
  fs::remove_all(root);
}

}  // namespace
}  // namespace tessera::agent
