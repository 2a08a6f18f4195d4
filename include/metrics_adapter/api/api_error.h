#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace metrics_adapter::api {

// Output JSON keeps insertion order, so answers read like upstream's.
using Json = nlohmann::ordered_json;

// A request failure with its Kubernetes Status code and reason, e.g. (404, "NotFound").
// what() is the message the client sees: it must help the user and leak no secrets.
class ApiError : public std::runtime_error {
 public:
  ApiError(int code, std::string reason, const std::string& message, Json details = nullptr)
      : std::runtime_error(message),
        code_(code),
        reason_(std::move(reason)),
        details_(std::move(details)) {}

  int code() const { return code_; }
  const std::string& reason() const { return reason_; }
  const Json& details() const { return details_; }

  static ApiError badRequest(const std::string& message) { return {400, "BadRequest", message}; }
  static ApiError notFound(const std::string& message) { return {404, "NotFound", message}; }
  static ApiError internal(const std::string& message) {
    return {500, "InternalError", "Internal error occurred: " + message,
            Json{{"causes", Json::array({{{"message", message}}})}}};
  }
  static ApiError unavailable(const std::string& message) {
    return {503, "ServiceUnavailable", message};
  }

 private:
  int code_;
  std::string reason_;
  Json details_;
};

// "<message> (similar metrics: a b)" when there are close names, else the message.
inline std::string withSimilarNames(std::string message, const std::vector<std::string>& names) {
  if (names.empty()) return message;
  message += " (similar metrics:";
  for (const auto& name : names) message += " " + name;
  return message + ")";
}

// The Kubernetes Status object for an error (api.md §4.7).
Json statusObject(int code, const std::string& reason, const std::string& message,
                  const Json& details = nullptr);

}  // namespace metrics_adapter::api
