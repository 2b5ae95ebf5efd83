#include "sim/alibaba/curve.h"

#include <algorithm>

namespace tessera::sim::alibaba {

void CurveBuilder::Add(double arrived_pct, double value) {
  // nearbyint rounds ties to even in the default rounding mode, like Python's round().
  const double bucket = std::nearbyint(arrived_pct);
  if (!(bucket >= 0) || bucket > kCurvePoints) return;  // also drops NaN
  const auto b = static_cast<size_t>(bucket);
  sum_[b] += value;
  ++count_[b];
}

Curve CurveBuilder::Build() const {
  Curve curve;
  for (int32_t x = 0; x < kCurvePoints; ++x) {
    if (count_[x] > 0) {
      curve.y[x] = sum_[x] / static_cast<double>(count_[x]);
      continue;
    }
    double sum = 0;
    int64_t count = 0;
    for (int32_t n = std::max(0, x - 1); n <= x + 1; ++n) {
      sum += sum_[n];
      count += count_[n];
    }
    if (count > 0) curve.y[x] = sum / static_cast<double>(count);
  }
  return curve;
}

double Quantile(std::vector<double> values, double q) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }),
               values.end());
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

Curve MedianCurve(std::span<const Curve> curves) {
  Curve out;
  std::vector<double> at_x;
  for (int32_t x = 0; x < kCurvePoints; ++x) {
    at_x.clear();
    for (const Curve& c : curves) at_x.push_back(c.y[x]);
    out.y[x] = Quantile(at_x, 0.5);
  }
  return out;
}

}  // namespace tessera::sim::alibaba
