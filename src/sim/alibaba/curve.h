// Curves over arrived workload (§2.7 of the FGD paper's definitions): per-arrival samples
// bucketed by integer "arrived %" (0..130), and the per-x median over runs.
//
// After every arrival a run records x = arrived milli-GPU / cluster milli-GPU x 100 (all arrived
// tasks, placed or failed) and some values y (allocation %, fragmentation, ...). x is rounded to
// the nearest integer, ties to even (as the artifact's pandas `round` does). The curve's value
// at an integer x is the mean of y over the samples in that bucket; when the bucket is empty,
// the mean over the samples whose bucket is x-1, x or x+1; when those are empty too, the value
// is missing (NaN).
// Thread-safety: value types and pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace tessera::sim::alibaba {

inline constexpr int32_t kMaxArrivedPct = 130;
inline constexpr int32_t kCurvePoints = kMaxArrivedPct + 1;

// y at x = 0..130; NaN where missing.
struct Curve {
  std::vector<double> y = std::vector<double>(kCurvePoints, std::nan(""));

  double At(int32_t x) const { return y[x]; }
  bool Has(int32_t x) const { return !std::isnan(y[x]); }
};

// Accumulates (x, y) samples of one run and buckets them.
class CurveBuilder {
 public:
  // `arrived_pct` is the unrounded x of the sample.
  void Add(double arrived_pct, double value);
  Curve Build() const;

 private:
  // Buckets 0..kCurvePoints (one past the end, as a neighbour of 130).
  std::vector<double> sum_ = std::vector<double>(kCurvePoints + 1, 0.0);
  std::vector<int64_t> count_ = std::vector<int64_t>(kCurvePoints + 1, 0);
};

// The median at each x over the curves that have a value there (the mean of the two middle
// values for an even count); NaN where none has.
Curve MedianCurve(std::span<const Curve> curves);

// The q-quantile (0..1) with linear interpolation, like pandas' default; NaN for no values.
double Quantile(std::vector<double> values, double q);

}  // namespace tessera::sim::alibaba
