#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "metrics_adapter/server/status.h"

namespace metrics_adapter::api {

// Output JSON keeps insertion order, so answers read like upstream's.
using Json = nlohmann::ordered_json;

// A request failure with its Kubernetes Status code and reason, e.g. (404, "NotFound").
// what() is the message the client sees: it must help the user and leak no secrets.
class ApiError : public std::runtime_error {
 public:
  ApiError(int code, std::string reason, const std::string& message,
           std::optional<server::StatusDetails> details = std::nullopt)
      : std::runtime_error(message),
        code_(code),
        reason_(std::move(reason)),
        details_(std::move(details)) {}

  int code() const { return code_; }
  const std::string& reason() const { return reason_; }
  const std::optional<server::StatusDetails>& statusDetails() const { return details_; }

  // The Status body the client gets for this error (server::statusJson), compact, without a
  // trailing newline.
  std::string toStatusJson() const;

  static ApiError badRequest(const std::string& message) { return {400, "BadRequest", message}; }
  static ApiError notFound(const std::string& message) { return {404, "NotFound", message}; }
  static ApiError internal(const std::string& message) {
    return {500, "InternalError", "Internal error occurred: " + message,
            server::StatusDetails{.causes = {{message}}}};
  }
  static ApiError unavailable(const std::string& message) {
    return {503, "ServiceUnavailable", message};
  }

 private:
  int code_;
  std::string reason_;
  std::optional<server::StatusDetails> details_;
};

// "<message> (similar metrics: a b)" when there are close names, else the message.
inline std::string withSimilarNames(std::string message, const std::vector<std::string>& names) {
  if (names.empty()) return message;
  message += " (similar metrics:";
  for (const auto& name : names) message += " " + name;
  return message + ")";
}

}  // namespace metrics_adapter::api
