#pragma once

#include <string>
#include <string_view>

namespace metrics_adapter::text {

// The JSON string literal for `text`, including the surrounding quotes. Escapes like Go's
// encoding/json: control characters, `"`, `\`, `<`, `>`, `&`, U+2028 and U+2029; each byte of
// invalid UTF-8 becomes \ufffd. The one JSON string escaper: Status bodies, answers, audit
// events and JSON log lines.
std::string jsonQuote(std::string_view text);
// The same, appended to `out`.
void appendJsonQuoted(std::string& out, std::string_view text);

}  // namespace metrics_adapter::text
