#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>

namespace metrics_adapter::text {

// `text` as a finite decimal number when the whole of it is one ("1.5", "-2", "1e3"); nullopt
// for anything else (empty, trailing characters, NaN, infinities, out of range). The one parse
// of numbers in flags, query parameters and config values.
inline std::optional<double> parseFiniteNumber(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

}  // namespace metrics_adapter::text
