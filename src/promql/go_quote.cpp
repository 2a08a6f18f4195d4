#include <string>
#include <string_view>

#include "metrics_adapter/promql/label_matchers.h"
#include "promql/go_strings.h"

namespace metrics_adapter::promql {

std::string quoteGoString(std::string_view text) {
  return go::quote(text, {.quote = '"', .ascii_only = false, .escape_rune_error = true});
}

}  // namespace metrics_adapter::promql
