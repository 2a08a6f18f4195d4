#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::server {

// One entry of a Status's details.causes.
struct StatusCause {
  std::string message;
};

// The `details` of a Status (Kubernetes' metav1.StatusDetails), written in upstream's order:
// name, group, kind, causes. A field is written when it is set (an empty string included), so
// that a caller gets exactly the object it describes: a default-constructed StatusDetails is
// written as `{}`, and `causes` is left out when empty.
struct StatusDetails {
  std::optional<std::string> name = std::nullopt;
  std::optional<std::string> group = std::nullopt;
  std::optional<std::string> kind = std::nullopt;
  std::vector<StatusCause> causes = {};
};

// The one writer of Kubernetes Status failure bodies (metav1.Status), compact, without a
// trailing newline:
// {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":...,
//  "reason":...,"details":{...},"code":N}, with "details" only when `details` is given.
// Strings go through jsonQuote, so invalid UTF-8 from clients becomes U+FFFD and never throws.
std::string statusJson(int code, std::string_view reason, std::string_view message,
                       const std::optional<StatusDetails>& details = std::nullopt);

// The JSON string literal for `text`, including the surrounding quotes. Escapes like Go's
// encoding/json: control characters, `"`, `\`, `<`, `>`, `&`, U+2028 and U+2029; each byte of
// invalid UTF-8 becomes \ufffd.
std::string jsonQuote(std::string_view text);
// The same, appended to `out`.
void appendJsonQuoted(std::string& out, std::string_view text);

}  // namespace metrics_adapter::server
