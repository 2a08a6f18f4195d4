#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/text/json_quote.h"

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

// The one JSON string escaper lives in the text module, below every module (logging too).
using text::appendJsonQuoted;
using text::jsonQuote;

}  // namespace metrics_adapter::server
