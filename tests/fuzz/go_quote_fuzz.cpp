// Go quoting of arbitrary bytes (label values come from clients and from Prometheus): the
// PromQL string literal must decode back to exactly the input, and escaped regex text must
// match itself literally.
#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "metrics_adapter/promql/label_matchers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using metrics_adapter::fuzz::check;
  namespace promql = metrics_adapter::promql;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string quoted = promql::quoteGoString(text);
  const auto unquoted = metrics_adapter::fuzz::goUnquote(quoted);
  check(unquoted && *unquoted == text, "quoteGoString round-trips", quoted);
  check(metrics_adapter::fuzz::isPromqlMatcher("l=" + quoted, text),
        "a quoted value is one literal", quoted);
  RE2::Options options;
  options.set_log_errors(false);
  options.set_encoding(RE2::Options::EncodingLatin1);  // any bytes, one character each
  RE2 literal(promql::escapeRegex(text), options);
  check(literal.ok() && RE2::FullMatch(text, literal), "escapeRegex matches literally", text);
  return 0;
}
