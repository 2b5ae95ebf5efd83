#include "agent/local/host_limits.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kGiB = int64_t{1} << 30;

// A fake /proc and /sys/fs/cgroup under a temporary directory.
class FakeHost {
 public:
  FakeHost() {
    std::string dir =
        (std::filesystem::path(::testing::TempDir()) / "host_XXXXXX").lexically_normal();
    root_ = ::mkdtemp(dir.data());
    paths_ = {.proc_root = root_ + "/proc", .cgroup_root = root_ + "/cgroup"};
    Write("proc/meminfo", "MemTotal:       16384000 kB\nMemFree:  1 kB\n");
  }
  void Write(const std::string& rel, const std::string& text) {
    const std::filesystem::path path = std::filesystem::path(root_) / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  const HostPaths& paths() const { return paths_; }

 private:
  std::string root_;
  HostPaths paths_;
};

TEST(HostLimitsParseTest, ProcCgroupV1AndV2) {
  const ProcCgroup cgroup = ParseProcCgroup(
      "12:cpu,cpuacct:/kube/pod1\n4:memory:/kube/pod1\n1:name=systemd:/x\n0::/user.slice/a:b\n");
  EXPECT_EQ(cgroup.unified, "/user.slice/a:b");
  EXPECT_EQ(cgroup.v1.at("cpu"), "/kube/pod1");
  EXPECT_EQ(cgroup.v1.at("cpuacct"), "/kube/pod1");
  EXPECT_EQ(cgroup.v1_mount.at("cpu"), "cpu,cpuacct");
  EXPECT_EQ(cgroup.v1.at("memory"), "/kube/pod1");
}

TEST(HostLimitsParseTest, CpuAndMemoryFiles) {
  EXPECT_EQ(*ParseCpuMax("max 100000\n"), std::nullopt);
  EXPECT_EQ(*ParseCpuMax("150000 100000\n"), 1500);
  EXPECT_EQ(*ParseCfsQuota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(*ParseCfsQuota("50000", "100000"), 500);
  EXPECT_EQ(*ParseMemoryLimit("max\n"), std::nullopt);
  EXPECT_EQ(*ParseMemoryLimit("1073741824\n"), kGiB);
  EXPECT_EQ(*ParseMemTotal("MemTotal:       16384000 kB\n"), int64_t{16384000} * 1024);
  for (absl::Status status :
       {ParseCpuMax("garbage").status(), ParseCpuMax("1 0").status(),
        ParseMemoryLimit("lots").status(), ParseMemTotal("MemFree: 1 kB").status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  }
}

TEST(HostLimitsTest, NoCgroupLimits) {
  FakeHost host;
  absl::StatusOr<HostLimits> limits = ReadHostLimits(host.paths(), 8);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->cpu, 8000);
  EXPECT_EQ(limits->memory, int64_t{16384000} * 1024);
  EXPECT_THAT(limits->notes, IsEmpty());
}

TEST(HostLimitsTest, CgroupV2LimitsAlongTheChain) {
  FakeHost host;
  host.Write("proc/self/cgroup", "0::/slice/job\n");
  host.Write("cgroup/cgroup.controllers", "cpu memory\n");
  host.Write("cgroup/slice/cpu.max", "250000 100000\n");      // 2.5 CPUs on the parent
  host.Write("cgroup/slice/job/cpu.max", "max 100000\n");     // none on the leaf
  host.Write("cgroup/slice/memory.max", "8589934592\n");      // 8 GiB on the parent
  host.Write("cgroup/slice/job/memory.max", "4294967296\n");  // 4 GiB on the leaf
  absl::StatusOr<HostLimits> limits = ReadHostLimits(host.paths(), 8);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->cpu, 2500);
  EXPECT_EQ(limits->memory, 4 * kGiB);
  EXPECT_THAT(limits->notes,
              ElementsAre("cpu: cgroup quota 2500m", "memory: cgroup limit 4294967296 bytes"));
}

TEST(HostLimitsTest, QuotaAboveTheAffinityMaskChangesNothing) {
  FakeHost host;
  host.Write("proc/self/cgroup", "0::/\n");
  host.Write("cgroup/cgroup.controllers", "cpu memory\n");
  host.Write("cgroup/cpu.max", "1600000 100000\n");
  absl::StatusOr<HostLimits> limits = ReadHostLimits(host.paths(), 4);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->cpu, 4000);
}

TEST(HostLimitsTest, CgroupV1WithCombinedControllerDirectory) {
  FakeHost host;
  host.Write("proc/self/cgroup", "3:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n");
  host.Write("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "150000\n");
  host.Write("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  host.Write("cgroup/memory/docker/abc/memory.limit_in_bytes", "2147483648\n");
  host.Write("cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");  // unlimited
  absl::StatusOr<HostLimits> limits = ReadHostLimits(host.paths(), 16);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->cpu, 1500);
  EXPECT_EQ(limits->memory, 2 * kGiB);
}

TEST(HostLimitsTest, PrivateCgroupNamespaceReadsTheMountRoot) {
  FakeHost host;
  host.Write("proc/self/cgroup", "0::/not/visible/here\n");
  host.Write("cgroup/cgroup.controllers", "cpu memory\n");
  host.Write("cgroup/memory.max", "1073741824\n");
  absl::StatusOr<HostLimits> limits = ReadHostLimits(host.paths(), 2);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->memory, kGiB);
}

TEST(HostLimitsTest, BadFilesAreNamed) {
  FakeHost host;
  host.Write("proc/self/cgroup", "0::/\n");
  host.Write("cgroup/cgroup.controllers", "cpu\n");
  host.Write("cgroup/cpu.max", "lots\n");
  absl::StatusOr<HostLimits> limits = ReadHostLimits(host.paths(), 2);
  EXPECT_EQ(limits.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(limits.status().message()), HasSubstr("cpu.max"));

  EXPECT_EQ(ReadHostLimits({.proc_root = "/nonexistent"}, 1).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(HostLimitsTest, ThisMachine) {
  absl::StatusOr<HostLimits> limits = ReadHostLimits({}, AffinityCpuCount());
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_GE(limits->cpu, 1);
  EXPECT_GT(limits->memory, 0);
}

}  // namespace
}  // namespace tessera::agent
