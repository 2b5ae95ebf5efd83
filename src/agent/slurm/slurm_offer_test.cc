#include "agent/slurm/slurm_offer.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::ElementsAre;

constexpr int64_t kGiB = int64_t{1} << 30;

// An 8-CPU, 64 GiB node with 4 GPUs, of which Slurm has allocated `allocated`.
SlurmNode Slurm(SlurmHeld allocated) {
  SlurmNode slurm;
  slurm.node.name = "n1";
  slurm.node.capacity = {.cpu = 8000, .memory = 64 * kGiB, .gpu = 4000};
  slurm.node.allocatable = slurm.node.capacity;
  for (int32_t i = 0; i < 4; ++i) slurm.node.gpus.push_back({.index = i, .model = "H100"});
  slurm.allocated = allocated;
  return slurm;
}

std::vector<bool> Healthy(const Node& node) {
  std::vector<bool> healthy;
  for (const GpuDevice& d : node.gpus) healthy.push_back(d.healthy);
  return healthy;
}

TEST(SlurmOfferTest, NothingAllocatedOffersTheCapacity) {
  const Node node = OfferedNode(Slurm({}), {});
  EXPECT_EQ(node.allocatable, node.capacity);
  EXPECT_THAT(Healthy(node), ElementsAre(true, true, true, true));
}

TEST(SlurmOfferTest, ForeignJobsAreTakenOut) {
  const Node node = OfferedNode(Slurm({.cpu = 6000, .memory = 4 * kGiB, .gpus = 2}), {});
  EXPECT_EQ(node.allocatable.cpu, 2000);
  EXPECT_EQ(node.allocatable.memory, 60 * kGiB);
  EXPECT_EQ(node.allocatable.gpu, 2000);
  EXPECT_EQ(node.capacity.cpu, 8000);
  EXPECT_THAT(Healthy(node), ElementsAre(true, true, false, false));
}

TEST(SlurmOfferTest, TesserasRunningJobsAreNotTakenOutTwice) {
  // Slurm's 5 CPUs, 6 GiB and 3 GPUs include Tessera's job of 2 CPUs, 2 GiB and 1 GPU.
  const TesseraOnNode tessera{.held = {.cpu = 2000, .memory = 2 * kGiB, .gpus = 1},
                              .devices = {3}};
  const Node node = OfferedNode(Slurm({.cpu = 5000, .memory = 6 * kGiB, .gpus = 3}), tessera);
  EXPECT_EQ(node.allocatable.cpu, 5000);
  EXPECT_EQ(node.allocatable.memory, 60 * kGiB);
  EXPECT_EQ(node.allocatable.gpu, 2000);
  // The devices Tessera's task does not hold are the ones marked taken.
  EXPECT_THAT(Healthy(node), ElementsAre(true, false, false, true));
}

TEST(SlurmOfferTest, TesserasJobsAloneLeaveTheCapacity) {
  // What Tessera requested covers what Slurm allocated: nothing is foreign (never below 0).
  const TesseraOnNode tessera{.held = {.cpu = 4000, .memory = 8 * kGiB, .gpus = 2},
                              .devices = {0, 1}};
  const Node node = OfferedNode(Slurm({.cpu = 4000, .memory = 4 * kGiB, .gpus = 2}), tessera);
  EXPECT_EQ(node.allocatable, node.capacity);
  EXPECT_THAT(Healthy(node), ElementsAre(true, true, true, true));
}

TEST(SlurmOfferTest, DevicesTesseraHoldsAreTakenLastAndNothingGoesBelowZero) {
  // Tessera's tasks hold devices 1 to 3 but none runs yet; others hold 3 GPUs and more CPUs and
  // memory than the node has.
  const TesseraOnNode tessera{.devices = {1, 2, 3}};
  const Node node = OfferedNode(Slurm({.cpu = 9000, .memory = 65 * kGiB, .gpus = 3}), tessera);
  EXPECT_EQ(node.allocatable.cpu, 0);
  EXPECT_EQ(node.allocatable.memory, 0);
  EXPECT_EQ(node.allocatable.gpu, 1000);
  EXPECT_THAT(Healthy(node), ElementsAre(false, true, false, false));
}

}  // namespace
}  // namespace tessera::agent
