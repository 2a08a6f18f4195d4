// Sample values (any double Prometheus can send) to Kubernetes quantities: the output parses
// as a canonical DecimalSI quantity and means the value it came from.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_check.h"
#include "metrics_adapter/promql/quantity.h"

namespace {

using metrics_adapter::fuzz::check;
using metrics_adapter::fuzz::DecimalQuantity;

DecimalQuantity parsed(const std::string& text) {
  const auto quantity = metrics_adapter::fuzz::parseDecimalQuantity(text);
  check(quantity.has_value(), "the quantity parses", text);
  // Canonical: no zero with a sign or suffix, no mantissa that a bigger suffix could shorten.
  if (quantity->mantissa == "0") {
    check(text == "0", "zero is \"0\"", text);
  } else if (quantity->exponent < 18) {
    const auto& m = quantity->mantissa;
    check(m.size() < 4 || m.compare(m.size() - 3, 3, "000") != 0, "canonical suffix", text);
  }
  return *quantity;
}

// mantissa * 10^(exponent + 3) as a 128-bit integer; the mantissa has at most 19 digits and
// exponent + 3 <= 21 for any value below 2^63 milli-units.
__int128 milliOf(const DecimalQuantity& q) {
  __int128 value = 0;
  for (const char digit : q.mantissa) value = value * 10 + (digit - '0');
  for (int e = 0; e < q.exponent + 3; ++e) value *= 10;
  return q.negative ? -value : value;
}

void checkMilli(std::int64_t milli) {
  const std::string text = metrics_adapter::promql::formatMilliQuantity(milli);
  const DecimalQuantity q = parsed(text);
  check(q.mantissa.size() + static_cast<std::size_t>(q.exponent + 3) <= 40, "bounded", text);
  check(milliOf(q) == milli, "formatMilliQuantity keeps the value", text);
}

void checkSample(double value) {
  const auto text = metrics_adapter::promql::sampleToQuantity(value);
  if (!std::isfinite(value) || value == 9223372036854775808.0) {
    check(!text.has_value(), "NaN, infinities and DCGM blanks are skipped", text.value_or(""));
    return;
  }
  check(text.has_value(), "every finite value has a quantity");
  const DecimalQuantity q = parsed(*text);
  const double milli = value * 1000.0;
  if (std::fabs(milli) < 9223372036854775808.0) {
    check(milliOf(q) == static_cast<std::int64_t>(milli), "values truncate to milli-units", *text);
    return;
  }
  // Large values are printed exactly: parsing the decimal gives back the same double.
  const std::string decimal =
      (q.negative ? "-" : "") + q.mantissa + "e" + std::to_string(q.exponent);
  check(std::strtod(decimal.c_str(), nullptr) == value, "large values round-trip", *text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < sizeof(double)) return 0;
  double value;
  std::memcpy(&value, data, sizeof(value));
  checkSample(value);
  std::int64_t milli;
  std::memcpy(&milli, data, sizeof(milli));
  checkMilli(milli);
  // Values as Prometheus writes them: text after the first 8 bytes, parsed by strtod.
  if (size > sizeof(double)) {
    const std::string text(reinterpret_cast<const char*>(data) + sizeof(double),
                           size - sizeof(double));
    checkSample(std::strtod(text.c_str(), nullptr));
  }
  return 0;
}
