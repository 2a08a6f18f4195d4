#include "forecast/robust_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace metrics_adapter::forecast::stats {

double quantileInPlace(std::span<double> values, double q) {
  // Move the finite values to the front; the rest is ignored.
  const auto finite_end =
      std::partition(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
  const auto count = static_cast<std::size_t>(finite_end - values.begin());
  if (count == 0) return std::numeric_limits<double>::quiet_NaN();
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(count - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const double fraction = position - static_cast<double>(lower);
  const auto lower_it = values.begin() + static_cast<std::ptrdiff_t>(lower);
  std::nth_element(values.begin(), lower_it, finite_end);
  const double lower_value = *lower_it;
  if (fraction == 0 || lower + 1 >= count) return lower_value;
  // After nth_element the next order statistic is the smallest value above `lower`.
  const double upper_value = *std::min_element(lower_it + 1, finite_end);
  return lower_value + fraction * (upper_value - lower_value);
}

double medianInPlace(std::span<double> values) { return quantileInPlace(values, 0.5); }

}  // namespace metrics_adapter::forecast::stats
