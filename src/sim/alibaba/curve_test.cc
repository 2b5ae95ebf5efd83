#include "sim/alibaba/curve.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::sim::alibaba {
namespace {

TEST(CurveTest, BucketMeanByRoundedArrivedPercent) {
  CurveBuilder b;
  b.Add(0.2, 10);
  b.Add(0.4, 20);  // bucket 0
  b.Add(0.6, 30);  // bucket 1
  b.Add(1.4, 50);  // bucket 1
  const Curve c = b.Build();
  EXPECT_DOUBLE_EQ(c.At(0), 15);
  EXPECT_DOUBLE_EQ(c.At(1), 40);
}

TEST(CurveTest, HalvesRoundToEvenLikePython) {
  CurveBuilder b;
  b.Add(0.5, 1);  // -> 0
  b.Add(1.5, 2);  // -> 2
  b.Add(2.5, 3);  // -> 2
  const Curve c = b.Build();
  EXPECT_DOUBLE_EQ(c.At(0), 1);
  EXPECT_DOUBLE_EQ(c.At(2), 2.5);
}

TEST(CurveTest, EmptyBucketTakesTheMeanOverItsNeighboursSamples) {
  CurveBuilder b;
  b.Add(3, 10);
  b.Add(3.2, 20);  // bucket 3: two samples
  b.Add(5, 60);    // bucket 5: one sample
  const Curve c = b.Build();
  EXPECT_DOUBLE_EQ(c.At(4), 30);  // (10 + 20 + 60) / 3: samples, not bucket means
  EXPECT_DOUBLE_EQ(c.At(2), 15);  // only bucket 3 is near
  EXPECT_FALSE(c.Has(0));         // nothing within one point
  EXPECT_FALSE(c.Has(7));
  EXPECT_DOUBLE_EQ(c.At(6), 60);
}

TEST(CurveTest, TheLastPointSeesSamplesJustPastIt) {
  CurveBuilder b;
  b.Add(131.2, 7);
  b.Add(200, 99);  // beyond the axis: dropped
  const Curve c = b.Build();
  EXPECT_DOUBLE_EQ(c.At(kMaxArrivedPct), 7);
}

TEST(CurveTest, MedianSkipsMissingValuesAndAveragesTheMiddlePair) {
  Curve a, b, c, d;
  a.y[10] = 1;
  b.y[10] = 4;
  c.y[10] = 2;
  d.y[10] = 10;
  a.y[11] = 5;
  const std::vector<Curve> curves = {a, b, c, d};
  const Curve m = MedianCurve(curves);
  EXPECT_DOUBLE_EQ(m.At(10), 3);  // (2 + 4) / 2
  EXPECT_DOUBLE_EQ(m.At(11), 5);
  EXPECT_FALSE(m.Has(12));
}

TEST(CurveTest, QuantileInterpolatesLinearly) {
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.25), 2);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.25), 1.75);
  EXPECT_TRUE(std::isnan(Quantile({}, 0.5)));
}

}  // namespace
}  // namespace tessera::sim::alibaba
