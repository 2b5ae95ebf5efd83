#include "agent/kubernetes/pod_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace tessera::agent::k8s {
namespace {

using ::testing::MatchesRegex;
using ::testing::StartsWith;

TEST(PodNameTest, ValidIdsAreKeptAndOthersAreCleanedAndHashed) {
  struct Case {
    std::string id;
    std::string expected_prefix;
    bool hashed;
  };
  const std::vector<Case> cases = {
      {"train7-worker-0-a1", "train7-worker-0-a1", false},
      {"Train7-worker-0-a1", "train7-worker-0-a1-", true},
      {"job_1.x-w-a1", "job-1-x-w-a1-", true},
      {"-lead-a1", "lead-a1-", true},
      {"..", "t-", true},
      {std::string(80, 'a'), std::string(50, 'a') + "-", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.id);
    const std::string name = PodNameForLaunch(c.id);
    EXPECT_TRUE(IsDnsLabel(name)) << name;
    if (c.hashed) {
      EXPECT_THAT(name, StartsWith(c.expected_prefix));
      EXPECT_THAT(name, MatchesRegex(".*-[0-9a-f]{12}"));
    } else {
      EXPECT_EQ(name, c.expected_prefix);
    }
    EXPECT_EQ(PodNameForLaunch(c.id), name);  // stable
  }
}

TEST(PodNameTest, IdsThatCleanAlikeGetDifferentNames) {
  std::set<std::string> names;
  for (std::string id : {"a.b-t-a1", "a_b-t-a1", "A-b-t-a1", "a-B-t-a1", "a-b-t-a1"}) {
    names.insert(PodNameForLaunch(id));
  }
  EXPECT_EQ(names.size(), 5u);
}

TEST(ServiceNameTest, ValidJobIdsAreKeptAndOthersBecomeDns1035Labels) {
  EXPECT_EQ(ServiceNameForJob("train7"), "train7");
  for (const std::string& id :
       std::vector<std::string>{"Train7", "job_1.x", "7train", "-x", "..", std::string(80, 'a')}) {
    SCOPED_TRACE(id);
    const std::string name = ServiceNameForJob(id);
    EXPECT_TRUE(IsDnsLabel(name)) << name;
    EXPECT_THAT(name, MatchesRegex("[a-z].*-[0-9a-f]{12}"));
    EXPECT_EQ(ServiceNameForJob(id), name);  // stable
  }
  EXPECT_THAT(ServiceNameForJob("7train"), StartsWith("j-7train-"));
  std::set<std::string> names;
  for (std::string id : {"a.b", "a_b", "A-b", "a-B", "a-b"}) names.insert(ServiceNameForJob(id));
  EXPECT_EQ(names.size(), 5u);
}

TEST(HostnameTest, TheServiceNameAndTheRank) {
  EXPECT_EQ(HostnameForRank("train7", 0), "train7-0");
  EXPECT_EQ(HostnameForRank("train7", 12), "train7-12");
  const std::string long_id(80, 'x');
  std::set<std::string> hosts;
  for (int32_t rank : {0, 1, 10, 1000}) {
    const std::string host = HostnameForRank(long_id, rank);
    EXPECT_TRUE(IsDnsLabel(host)) << host;
    EXPECT_THAT(host, testing::EndsWith("-" + std::to_string(rank)));
    hosts.insert(host);
  }
  EXPECT_EQ(hosts.size(), 4u);
  EXPECT_TRUE(IsDnsLabel(HostnameForRank("Job_1.x", 3)));
}

TEST(LabelValueTest, ValidValuesAreKeptAndOthersFit) {
  EXPECT_EQ(LabelValue("Train_7.w-a1"), "Train_7.w-a1");
  EXPECT_EQ(LabelValue(""), "");
  for (std::string text :
       {std::string(70, 'x'), std::string("_lead"), std::string("a/b"), std::string("end.")}) {
    SCOPED_TRACE(text);
    const std::string value = LabelValue(text);
    EXPECT_LE(value.size(), kMaxNameLength);
    EXPECT_THAT(value, MatchesRegex("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"));
    EXPECT_NE(value, text);
  }
}

TEST(DnsLabelTest, Rules) {
  EXPECT_TRUE(IsDnsLabel("tessera"));
  EXPECT_TRUE(IsDnsLabel("a-1"));
  EXPECT_FALSE(IsDnsLabel(""));
  EXPECT_FALSE(IsDnsLabel("-a"));
  EXPECT_FALSE(IsDnsLabel("a-"));
  EXPECT_FALSE(IsDnsLabel("A"));
  EXPECT_FALSE(IsDnsLabel("a.b"));
  EXPECT_FALSE(IsDnsLabel(std::string(64, 'a')));
}

}  // namespace
}  // namespace tessera::agent::k8s
