#pragma once

#include <string>
#include <string_view>

namespace metrics_adapter::server {

// A Kubernetes Status failure body (api.md §4.7) without `details`:
// {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":...,
//  "reason":...,"code":N}. Strings are JSON-escaped; invalid UTF-8 becomes U+FFFD.
std::string statusJson(int code, std::string_view reason, std::string_view message);

// The JSON string literal for `text`, including the surrounding quotes. Escapes like Go's
// encoding/json: control characters, `"`, `\`, `<`, `>`, `&`, U+2028 and U+2029; each byte of
// invalid UTF-8 becomes \ufffd.
std::string jsonQuote(std::string_view text);

}  // namespace metrics_adapter::server
