#include "sched/plugins/basic/priority_sort.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

struct SortCase {
  std::string name;
  int32_t priority_a;
  int64_t submit_a;  // milliseconds
  int64_t sequence_a;
  int32_t priority_b;
  int64_t submit_b;
  int64_t sequence_b;
  bool a_first;
};

class PrioritySortTest : public ::testing::TestWithParam<SortCase> {};

TEST_P(PrioritySortTest, Less) {
  const SortCase& c = GetParam();
  JobSpec spec_a;
  spec_a.priority = c.priority_a;
  JobSpec spec_b;
  spec_b.priority = c.priority_b;
  const QueuedJobInfo a{&spec_a, c.sequence_a, TimePoint(Duration(c.submit_a))};
  const QueuedJobInfo b{&spec_b, c.sequence_b, TimePoint(Duration(c.submit_b))};
  const PrioritySort sort;
  EXPECT_EQ(sort.Less(a, b), c.a_first);
  EXPECT_EQ(sort.Less(b, a), !c.a_first);  // a strict total order on distinct sequences
  EXPECT_FALSE(sort.Less(a, a));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PrioritySortTest,
    ::testing::Values(SortCase{"higher priority first", 10, 500, 9, 1, 100, 1, true},
                      SortCase{"lower priority later", 1, 100, 1, 10, 500, 9, false},
                      SortCase{"negative priority last", -5, 0, 0, 0, 900, 7, false},
                      SortCase{"earlier submission first", 3, 100, 9, 3, 200, 1, true},
                      SortCase{"later submission later", 3, 300, 1, 3, 200, 9, false},
                      SortCase{"lower sequence breaks ties", 3, 100, 4, 3, 100, 5, true},
                      SortCase{"higher sequence later", 3, 100, 6, 3, 100, 5, false}),
    [](const auto& info) {
      std::string name = info.param.name;
      for (char& ch : name) {
        if (ch == ' ') ch = '_';
      }
      return name;
    });

TEST(PrioritySortTest, NullSpecCountsAsPriorityZero) {
  JobSpec high;
  high.priority = 1;
  const PrioritySort sort;
  const QueuedJobInfo none{nullptr, 1, TimePoint()};
  const QueuedJobInfo with{&high, 2, TimePoint()};
  EXPECT_TRUE(sort.Less(with, none));
  EXPECT_FALSE(sort.Less(none, with));
}

TEST(PrioritySortTest, FactoryRejectsArguments) {
  EXPECT_TRUE(PrioritySort::New({}, Handle{}).ok());
  EXPECT_EQ(PrioritySort::New({{"order", "fifo"}}, Handle{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
