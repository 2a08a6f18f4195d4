#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// Helpers shared by the fuzz targets: invariant checks that crash (so libFuzzer keeps the
// input) and small independent decoders used to verify what the code under test produced.
namespace metrics_adapter::fuzz {

// Aborts with `what` and the offending text when `condition` is false.
void check(bool condition, std::string_view what, std::string_view detail = {});

// Decodes a Go interpreted string literal ("..." with \a \b \f \n \r \t \v \\ \" \xNN \NNN
// \uNNNN \UNNNNNNNN); nullopt when `literal` is not exactly one such literal.
std::optional<std::string> goUnquote(std::string_view literal);

// True when `matcher` is `label OP "value"` as PromQL lexes it: a label of label-key
// characters, one of = != =~ !~, and one Go string literal that decodes to `value`.
bool isPromqlMatcher(std::string_view matcher, std::string_view value);

// A Kubernetes DecimalSI quantity as the adapter writes it: optional '-', digits without a
// leading zero, optional suffix m k M G T P E. Value = mantissa * 10^exponent.
struct DecimalQuantity {
  bool negative = false;
  std::string mantissa;  // decimal digits
  int exponent = 0;      // -3, 0, 3, ..., 18
};
std::optional<DecimalQuantity> parseDecimalQuantity(std::string_view text);

}  // namespace metrics_adapter::fuzz
