#include "sched/max_tree.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "tessera/common/rng.h"

namespace tessera {
namespace {

TEST(MaxTreeTest, EmptyHasNoBest) {
  MaxTree tree;
  EXPECT_EQ(tree.Best(), MaxTree::kNone);
  tree.Resize(5);
  EXPECT_EQ(tree.Best(), MaxTree::kNone);
}

// Against a linear scan: best, tie count and the k-th tie in index order, under random updates
// and growth.
TEST(MaxTreeTest, AgreesWithLinearScan) {
  Rng rng(3);
  MaxTree tree;
  std::vector<int64_t> values;
  for (int round = 0; round < 2000; ++round) {
    if (values.size() < 3000 && rng.Uniform(20) == 0) {
      const auto grow = static_cast<int32_t>(values.size() + 1 + rng.Uniform(400));
      values.resize(grow, MaxTree::kNone);
      tree.Resize(grow);
    }
    if (values.empty()) continue;
    const auto i = static_cast<int32_t>(rng.Uniform(values.size()));
    const int64_t v = rng.Uniform(5) == 0 ? MaxTree::kNone : static_cast<int64_t>(rng.Uniform(8));
    values[i] = v;
    if (rng.Uniform(10) == 0) {
      tree.SetLeaf(i, v);
      tree.Rebuild();
    } else {
      tree.Set(i, v);
    }

    const int64_t best = *std::max_element(values.begin(), values.end());
    ASSERT_EQ(tree.Best(), best);
    if (best == MaxTree::kNone) continue;
    std::vector<int32_t> ties;
    for (size_t k = 0; k < values.size(); ++k) {
      if (values[k] == best) ties.push_back(static_cast<int32_t>(k));
    }
    ASSERT_EQ(tree.BestCount(), static_cast<int64_t>(ties.size()));
    for (size_t k = 0; k < ties.size(); ++k)
      ASSERT_EQ(tree.KthBest(static_cast<int64_t>(k)), ties[k]);
  }
}

}  // namespace
}  // namespace tessera
