#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace metrics_adapter::promql {

// Canonical DecimalSI string of an int64 number of milli-units (apimachinery's
// int64Amount.AsCanonicalBytes): 0 -> "0", 1500 -> "1500m", 2000000 -> "2k".
std::string formatMilliQuantity(std::int64_t milli);

// Turns a Prometheus sample value into a Kubernetes quantity string.
// - NaN, +Inf, -Inf: nullopt (the caller skips the sample).
// - DCGM's int64 "blank" sentinels (9223372036854775792..9223372036854775807, which all
//   round to the double 2^63): nullopt.
// - |value * 1000| < 2^63: trunc(value * 1000) toward zero, formatted by formatMilliQuantity
//   (exactly prometheus-adapter's values).
// - larger magnitudes: the exact integer value of the double in canonical DecimalSI form
//   (trailing zeros folded into k/M/G/T/P/E suffixes), never an int64 overflow.
std::optional<std::string> sampleToQuantity(double value);

}  // namespace metrics_adapter::promql
