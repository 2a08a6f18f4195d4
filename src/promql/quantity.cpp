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

// A quantity suffix as a power of ten and a binary factor: "k" is 10^3, "Ki" 2^10; false for
// one Kubernetes does not know.
bool quantitySuffixScale(std::string_view suffix, int& exponent10, int& exponent2) {
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal{{{"", 0},
                                                                              {"n", -9},
                                                                              {"u", -6},
                                                                              {"m", -3},
                                                                              {"k", 3},
                                                                              {"M", 6},
                                                                              {"G", 9},
                                                                              {"T", 12},
                                                                              {"P", 15},
                                                                              {"E", 18}}};
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary{
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  for (const auto& [name, power] : kDecimal) {
    if (name == suffix) {
      exponent10 += power;
      return true;
    }
  }
  for (const auto& [name, power] : kBinary) {
    if (name == suffix) {
      exponent2 = power;
      return true;
    }
  }
  // "e3", "E-2": an exponent in place of a suffix.
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return false;
  const char* first = suffix.data() + 1;
  if (*first == '+') ++first;
  int exponent = 0;
  auto [end, error] = std::from_chars(first, suffix.data() + suffix.size(), exponent);
  if (error != std::errc() || end != suffix.data() + suffix.size()) return false;
  exponent10 += exponent;
  return true;
}

}  // namespace

std::optional<std::int64_t> parseMilliQuantity(std::string_view text) {
  // Exact decimal arithmetic: "0.1" is 100 milli-units, not 100.00000000000001 rounded up.
  constexpr std::size_t kMaxDigits = 30;  // the mantissa fits an __int128 with room to scale
  constexpr __int128 kLimit = static_cast<__int128>(1) << 63;
  std::size_t end = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) ++end;
  __int128 mantissa = 0;
  std::size_t digits = 0;
  int exponent10 = 3;  // milli-units
  bool dot = false;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c >= '0' && c <= '9') {
      if (++digits > kMaxDigits) return std::nullopt;
      mantissa = mantissa * 10 + (c - '0');
      if (dot) --exponent10;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  int exponent2 = 0;
  if (digits == 0 || !quantitySuffixScale(text.substr(end), exponent10, exponent2)) {
    return std::nullopt;
  }
  if (exponent2 > 0 && mantissa >= (static_cast<__int128>(1) << (126 - exponent2))) {
    return std::nullopt;  // far beyond an int64 of milli-units
  }
  mantissa <<= exponent2;
  if (negative) mantissa = -mantissa;
  for (; exponent10 > 0; --exponent10) {
    mantissa *= 10;
    if (mantissa >= kLimit || mantissa < -kLimit) return std::nullopt;
  }
  if (exponent10 < 0) {
    // MilliValue() rounds up: toward +Inf.
    __int128 divisor = 1;
    for (; exponent10 < 0 && divisor < kLimit * 1000; ++exponent10) divisor *= 10;
    if (exponent10 < 0) return std::int64_t{mantissa > 0 ? 1 : 0};  // far below one milli
    const __int128 quotient = mantissa / divisor;
    mantissa = quotient + (mantissa % divisor > 0 ? 1 : 0);
  }
  if (mantissa >= kLimit || mantissa < -kLimit) return std::nullopt;
  return static_cast<std::int64_t>(mantissa);
}

}  // namespace metrics_adapter::promql
