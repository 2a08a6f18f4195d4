#pragma once

#include <span>

// Order statistics for the forecast model: medians and quantiles that ignore NaN, computed in
// place (the span's order is changed) in linear time.
namespace metrics_adapter::forecast::stats {

// The q-quantile (q in [0, 1]) of the finite values of `values`, interpolating linearly between
// the two nearest order statistics; NaN when there is no finite value. Reorders `values`.
double quantileInPlace(std::span<double> values, double q);

// quantileInPlace(values, 0.5).
double medianInPlace(std::span<double> values);

}  // namespace metrics_adapter::forecast::stats
