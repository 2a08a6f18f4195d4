#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace metrics_adapter::promql {

// Canonical DecimalSI string of an int64 number of milli-units (apimachinery's
// int64Amount.AsCanonicalBytes): 0 -> "0", 1500 -> "1500m", 2000000 -> "2k".
std::string formatMilliQuantity(std::int64_t milli);

// Canonical DecimalSI string of an int64 number of nano-units, as metrics-server writes CPU
// usage (NewScaledQuantity(nanocores, -9), DecimalSI): 0 -> "0", 1500 -> "1500n",
// 1000 -> "1u", 5000000 -> "5m", 1000000000 -> "1", 1000000000000 -> "1k".
std::string formatNanoQuantity(std::int64_t nanos);

// Canonical BinarySI string of an int64 number of bytes, as metrics-server writes memory
// usage (apimachinery's CanonicalizeBytes): below 1024 in magnitude the DecimalSI form
// (1000 -> "1k", 100 -> "100"); otherwise the largest power-of-1024 suffix that divides the
// value exactly (2048 -> "2Ki", 134217728 -> "128Mi"), else plain digits (1536 -> "1536").
std::string formatByteQuantity(std::int64_t bytes);

// trunc(value) toward zero as an int64, or nullopt for NaN, ±Inf and |value| >= 2^63 (which an
// int64 cannot hold; Go's conversion would give garbage there).
std::optional<std::int64_t> truncateToInt64(double value);

// Turns a Prometheus sample value into a Kubernetes quantity string.
// - NaN, +Inf, -Inf: nullopt (the caller skips the sample).
// - DCGM's int64 "blank" sentinels (9223372036854775792..9223372036854775807, which all
//   round to the double 2^63): nullopt.
// - |value * 1000| < 2^63: trunc(value * 1000) toward zero, formatted by formatMilliQuantity
//   (exactly prometheus-adapter's values).
// - larger magnitudes: the exact integer value of the double in canonical DecimalSI form
//   (trailing zeros folded into k/M/G/T/P/E suffixes), never an int64 overflow.
std::optional<std::string> sampleToQuantity(double value);

// A Kubernetes quantity ("40", "500m", "1.5k", "2Gi", "1e3") as an int64 number of milli-units,
// rounded up as apimachinery's Quantity.MilliValue() rounds (the HPA controller compares
// milli-values). nullopt for text that is no quantity and for magnitudes an int64 of milli-units
// cannot hold.
std::optional<std::int64_t> parseMilliQuantity(std::string_view text);

}  // namespace metrics_adapter::promql
