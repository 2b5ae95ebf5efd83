#include "sched/profile.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

TEST(ProfileTest, ParsesEveryPoint) {
  auto p = ParseProfile(R"(
name: custom
tieBreak: first
queueSort: PrioritySort
preFilter: [NodeResourcesFit]
filter: [NodeUnschedulable, NodeResourcesFit]
score: [{name: LeastAllocated, weight: 2}, TaintToleration]
reserve: [FGD]
permit: [Gang]
bind: [DefaultBinder]
pluginArgs: {LeastAllocated: {resources: "cpu=1,gpu=3"}}
)",
                        "custom.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "custom");
  EXPECT_EQ(p->tie_break, TieBreak::kFirst);
  EXPECT_EQ(p->filter.size(), 2u);
  ASSERT_EQ(p->score.size(), 2u);
  EXPECT_EQ(p->score[0].weight, 2);
  EXPECT_EQ(p->score[1].weight, 1);
  EXPECT_EQ(p->plugin_args.at("LeastAllocated").at("resources"), "cpu=1,gpu=3");
}

TEST(ProfileTest, ErrorsNameFileLineAndField) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"name: x\nfilters: [A]\n", "p.yaml:2: filters: unknown key"},
      {"score: [{name: A, weight: 0}]\n", "p.yaml:1: score[0].weight: must be an integer >= 1"},
      {"score: [{weight: 2}]\n", "p.yaml:1: score[0].name: is required"},
      {"filter: A\n", "p.yaml:1: filter: must be a list of plugin names"},
      {"tieBreak: lowest\n", "p.yaml:1: tieBreak: must be random or first"},
      {"filter: [A\n", "p.yaml:2: invalid YAML: "},
  };
  for (const Case& c : cases) {
    auto p = ParseProfile(c.yaml, "p.yaml");
    ASSERT_FALSE(p.ok()) << c.yaml;
    EXPECT_THAT(std::string(p.status().message()), ::testing::StartsWith(c.error)) << c.yaml;
  }
}

TEST(ProfileTest, EveryBuiltinProfileParses) {
  for (const std::string& name : BuiltinProfileNames()) {
    auto p = BuiltinProfile(name);
    ASSERT_TRUE(p.ok()) << name << ": " << p.status();
    EXPECT_EQ(p->name, name);
    EXPECT_FALSE(p->score.empty());
  }
  EXPECT_EQ(BuiltinProfile("nope").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessera
