#include "server/node_admin.h"

#include "gtest/gtest.h"

namespace tessera::server {
namespace {

using S = NodeAdminState;
using A = NodeAction;

struct TransitionCase {
  S from;
  A action;
  S to;
};

class NodeAdminTransitionTest : public ::testing::TestWithParam<TransitionCase> {};

TEST_P(NodeAdminTransitionTest, FollowsTheTable) {
  EXPECT_EQ(NextAdminState(GetParam().from, GetParam().action), GetParam().to)
      << NodeAdminStateName(GetParam().from) << " " << NodeActionName(GetParam().action);
}

INSTANTIATE_TEST_SUITE_P(Table, NodeAdminTransitionTest,
                         ::testing::Values(TransitionCase{S::kReady, A::kCordon, S::kCordoned},
                                           TransitionCase{S::kCordoned, A::kCordon, S::kCordoned},
                                           TransitionCase{S::kDraining, A::kCordon, S::kDraining},
                                           TransitionCase{S::kDrained, A::kCordon, S::kDrained},
                                           TransitionCase{S::kReady, A::kDrain, S::kDraining},
                                           TransitionCase{S::kCordoned, A::kDrain, S::kDraining},
                                           TransitionCase{S::kDraining, A::kDrain, S::kDraining},
                                           TransitionCase{S::kDrained, A::kDrain, S::kDrained},
                                           TransitionCase{S::kReady, A::kUncordon, S::kReady},
                                           TransitionCase{S::kCordoned, A::kUncordon, S::kReady},
                                           TransitionCase{S::kDraining, A::kUncordon, S::kReady},
                                           TransitionCase{S::kDrained, A::kUncordon, S::kReady}));

TEST(NodeAdminTest, ApplyKeepsTheTimeOfAnUnchangedStateAndTakesANewReason) {
  NodeAdmin record{.cluster = "east", .node = "gpu-1"};
  const TimePoint t0(Duration(1'000));
  EXPECT_TRUE(ApplyNodeAction(record, A::kDrain, "bad DIMM", Duration(5'000), "ops", t0));
  EXPECT_EQ(record.state, S::kDraining);
  EXPECT_EQ(record.since, t0);
  EXPECT_EQ(record.grace, Duration(5'000));

  // Draining again: same state and time; a new reason replaces the old, an empty one does not.
  EXPECT_FALSE(ApplyNodeAction(record, A::kDrain, "", std::nullopt, "ops2", t0 + Duration(9)));
  EXPECT_EQ(record.reason, "bad DIMM");
  EXPECT_EQ(record.since, t0);
  EXPECT_EQ(record.by, "ops2");
  EXPECT_FALSE(ApplyNodeAction(record, A::kCordon, "DIMM ordered", std::nullopt, "ops", t0));
  EXPECT_EQ(record.reason, "DIMM ordered");
  EXPECT_EQ(record.state, S::kDraining);

  // Leaving Draining clears the drain's grace and the reason.
  EXPECT_TRUE(ApplyNodeAction(record, A::kUncordon, "", std::nullopt, "ops", t0 + Duration(7)));
  EXPECT_EQ(record.state, S::kReady);
  EXPECT_EQ(record.reason, "");
  EXPECT_EQ(record.since, t0 + Duration(7));
  EXPECT_FALSE(record.grace.has_value());
}

TEST(NodeAdminTest, ActionNamesRoundTrip) {
  for (A action : {A::kCordon, A::kUncordon, A::kDrain}) {
    EXPECT_EQ(ParseNodeAction(NodeActionName(action)), action);
  }
  EXPECT_FALSE(ParseNodeAction("resume").has_value());
  EXPECT_FALSE(OutOfService(S::kReady));
  EXPECT_TRUE(OutOfService(S::kCordoned));
  EXPECT_TRUE(OutOfService(S::kDrained));
}

TEST(NodeAdminTest, RecordsRoundTripAndBadOnesAreDataLoss) {
  const NodeAdmin record{.cluster = "east",
                         .node = "gpu-1",
                         .state = S::kDraining,
                         .reason = "replace GPU 3",
                         .by = "ops",
                         .since = TimePoint(Duration(1'795'946'700'000)),
                         .grace = Duration(90'000)};
  const std::string key = NodeAdminKey("east", "gpu-1");
  EXPECT_EQ(key, "/tessera/nodes/east/gpu-1");
  absl::StatusOr<NodeAdmin> decoded = DecodeNodeAdmin(key, EncodeNodeAdmin(record));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->cluster, "east");
  EXPECT_EQ(decoded->node, "gpu-1");
  EXPECT_EQ(decoded->state, S::kDraining);
  EXPECT_EQ(decoded->reason, "replace GPU 3");
  EXPECT_EQ(decoded->by, "ops");
  EXPECT_EQ(decoded->since, record.since);
  EXPECT_EQ(decoded->grace, Duration(90'000));

  NodeAdmin cordoned = record;
  cordoned.state = S::kCordoned;
  cordoned.grace.reset();
  decoded = DecodeNodeAdmin(key, EncodeNodeAdmin(cordoned));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_FALSE(decoded->grace.has_value());

  EXPECT_EQ(DecodeNodeAdmin("/tessera/nodes/west/gpu-1", EncodeNodeAdmin(record)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeNodeAdmin(key, "{").status().code(), absl::StatusCode::kDataLoss);
  const absl::Status unknown =
      DecodeNodeAdmin(key,
                      R"({"cluster":"east","node":"gpu-1","state":"Resting","reason":"","by":"",)"
                      R"("since":0,"graceMillis":null})")
          .status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(unknown.message().find("state"), std::string_view::npos);
}

}  // namespace
}  // namespace tessera::server
