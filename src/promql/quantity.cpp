#include "metrics_adapter/promql/quantity.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

namespace metrics_adapter::promql {
namespace {

// 2^63 as a double: the smallest magnitude that does not fit an int64, and also the double
// that every DCGM int64 blank sentinel (9223372036854775792..807) rounds to.
constexpr double kTwoPow63 = 9223372036854775808.0;

// Decimal SI suffix for an exponent that is a multiple of 3 in [-9, 18].
std::string_view suffixFor(int exponent) {
  switch (exponent) {
    case -9:
      return "n";
    case -6:
      return "u";
    case -3:
      return "m";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      return "";
  }
}

// Canonical DecimalSI for the exact integer (no sign) spelled by `digits`, which has no
// leading zeros and is not "0": trailing zeros become an exponent rounded down to a multiple
// of 3 and capped at 18 (E, the largest suffix); the rest stay digits.
std::string formatIntegerDigits(std::string_view digits) {
  const std::size_t last_nonzero = digits.find_last_not_of('0');
  int exponent = static_cast<int>(digits.size() - 1 - last_nonzero);
  if (exponent > 18) exponent = 18;
  exponent -= exponent % 3;
  std::string out(digits.substr(0, digits.size() - static_cast<std::size_t>(exponent)));
  out += suffixFor(exponent);
  return out;
}

// Canonical DecimalSI of mantissa * 10^exponent (apimachinery's int64Amount.AsCanonicalBytes):
// trailing zeros move into the exponent, which is then lowered to a multiple of 3.
std::string formatDecimal(std::int64_t mantissa, int exponent) {
  if (mantissa == 0) return "0";
  while ((mantissa >= 10 || mantissa <= -10) && mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  // Restore zeros until the exponent is a multiple of 3; C++ `%` keeps the dividend's sign
  // like Go's. Cannot overflow: it never restores more zeros than the loop removed.
  const int remainder = exponent % 3;
  if (remainder == 1 || remainder == -2) {
    mantissa *= 10;
    exponent -= 1;
  } else if (remainder == 2 || remainder == -1) {
    mantissa *= 100;
    exponent -= 2;
  }
  std::string out = std::to_string(mantissa);
  out += suffixFor(exponent);
  return out;
}

}  // namespace

std::string formatMilliQuantity(std::int64_t milli) { return formatDecimal(milli, -3); }

std::string formatNanoQuantity(std::int64_t nanos) { return formatDecimal(nanos, -9); }

std::string formatByteQuantity(std::int64_t bytes) {
  if (bytes > -1024 && bytes < 1024) return formatDecimal(bytes, 0);
  // Go negates the value before removing factors; for the minimum that negation overflows to
  // itself and no factor is removed, so it prints as plain digits.
  if (bytes == std::numeric_limits<std::int64_t>::min()) return std::to_string(bytes);
  static constexpr std::array<std::string_view, 7> kBinarySuffixes = {"",   "Ki", "Mi", "Gi",
                                                                      "Ti", "Pi", "Ei"};
  std::size_t power = 0;
  // |int64| < 2^63 = 8 * 1024^6, so at most 6 factors of 1024 come out.
  while (bytes % 1024 == 0) {
    bytes /= 1024;
    ++power;
  }
  std::string out = std::to_string(bytes);
  out += kBinarySuffixes[power];
  return out;
}

std::optional<std::int64_t> truncateToInt64(double value) {
  if (!std::isfinite(value) || std::fabs(value) >= kTwoPow63) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

std::optional<std::string> sampleToQuantity(double value) {
  if (!std::isfinite(value) || value == kTwoPow63) return std::nullopt;
  // The product is rounded to a double exactly as Go's float64 `v*1000` is (x86-64 SSE, no
  // contraction possible with a single operation), so e.g. 12.345*1000 is exactly 12345.0 and
  // truncates to 12345, matching prometheus-adapter.
  const double milli = value * 1000.0;
  if (std::fabs(milli) < kTwoPow63) {
    return formatMilliQuantity(static_cast<std::int64_t>(milli));
  }
  // |value| >= 2^63 / 1000 > 2^53 here, so the double is an integer; print it exactly.
  char buffer[400];
  const auto [end, error] =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed, 0);
  if (error != std::errc()) return std::nullopt;
  std::string_view digits(buffer, static_cast<std::size_t>(end - buffer));
  const bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  // Built by appending: `"-" + std::string&&` trips GCC 12's -Wrestrict at -O3 (a false
  // positive that breaks Release builds under -Werror).
  std::string out(negative ? "-" : "");
  out += formatIntegerDigits(digits);
  return out;
}

namespace {

// The factor of a quantity suffix ("" = 1), or 0 for one Kubernetes does not know.
long double quantitySuffixFactor(std::string_view suffix) {
  static constexpr std::array<std::pair<std::string_view, long double>, 16> kFactors{{
      {"", 1.0L},
      {"n", 1e-9L},
      {"u", 1e-6L},
      {"m", 1e-3L},
      {"k", 1e3L},
      {"M", 1e6L},
      {"G", 1e9L},
      {"T", 1e12L},
      {"P", 1e15L},
      {"E", 1e18L},
      {"Ki", 1024.0L},
      {"Mi", 1048576.0L},
      {"Gi", 0x1p30L},
      {"Ti", 0x1p40L},
      {"Pi", 0x1p50L},
      {"Ei", 0x1p60L},
  }};
  for (const auto& [name, factor] : kFactors) {
    if (name == suffix) return factor;
  }
  return 0;
}

}  // namespace

std::optional<std::int64_t> parseMilliQuantity(std::string_view text) {
  // The number: an optional sign, digits with at most one '.', then an optional exponent
  // (e3, E-2), which Kubernetes accepts in place of a suffix.
  std::size_t end = 0;
  if (end < text.size() && (text[end] == '+' || text[end] == '-')) ++end;
  std::size_t digits = 0;
  bool dot = false;
  for (; end < text.size(); ++end) {
    if (text[end] >= '0' && text[end] <= '9') {
      ++digits;
    } else if (text[end] == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (digits == 0) return std::nullopt;
  std::string number(text.substr(0, end));
  std::string_view suffix = text.substr(end);
  long double factor = quantitySuffixFactor(suffix);  // "Ei" is exa-binary, "e3" an exponent
  if (factor == 0) {
    if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return std::nullopt;
    int exponent = 0;
    const char* first = suffix.data() + 1;
    if (*first == '+') ++first;
    auto [ptr, error] = std::from_chars(first, suffix.data() + suffix.size(), exponent);
    if (error != std::errc() || ptr != suffix.data() + suffix.size()) return std::nullopt;
    factor = std::pow(10.0L, exponent);
  }
  const long double milli = std::ceil(std::strtold(number.c_str(), nullptr) * factor * 1000.0L);
  if (!std::isfinite(milli) || std::fabs(milli) >= 0x1p63L) return std::nullopt;
  return static_cast<std::int64_t>(milli);
}

}  // namespace metrics_adapter::promql
