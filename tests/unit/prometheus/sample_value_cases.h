#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace metrics_adapter::prometheus {

// A sample value as Prometheus writes it and the double it stands for. The instant and range
// decoders read values with the same code, so their tests share one table of cases.
struct SampleValueCase {
  std::string text;
  double expected;
};

inline const std::vector<SampleValueCase> kSampleValueCases = {
    {"NaN", std::numeric_limits<double>::quiet_NaN()},
    {"+Inf", std::numeric_limits<double>::infinity()},
    {"-Inf", -std::numeric_limits<double>::infinity()},
    {"1e308", 1e308},
    {"-1e308", -1e308},
    {"1e400", std::numeric_limits<double>::infinity()},  // strtod overflows to infinity
    {"4.9e-324", 4.9e-324},
    {"9223372036854775794", 9223372036854775794.0},  // DCGM's blank sentinel
    {"0.001", 0.001},
    {"-0", -0.0},
};

// Whether `value` is what `c.text` stands for: NaN for NaN (which equals nothing), otherwise
// equal and of the same sign (-0 == 0, yet they are different values).
inline ::testing::AssertionResult isSampleValue(double value, const SampleValueCase& c) {
  const bool same = std::isnan(c.expected)
                        ? std::isnan(value)
                        : value == c.expected && std::signbit(value) == std::signbit(c.expected);
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << c.text << "\" read as " << value;
}

}  // namespace metrics_adapter::prometheus
