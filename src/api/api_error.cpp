#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {

std::string ApiError::toStatusJson() const {
  return server::statusJson(code_, reason_, what(), details_);
}

Json ApiError::details() const {
  if (!details_) return nullptr;
  Json details = Json::object();
  if (details_->name) details["name"] = *details_->name;
  if (details_->group) details["group"] = *details_->group;
  if (details_->kind) details["kind"] = *details_->kind;
  if (!details_->causes.empty()) {
    details["causes"] = Json::array();
    for (const auto& cause : details_->causes) {
      details["causes"].push_back({{"message", cause.message}});
    }
  }
  return details;
}

std::optional<server::StatusDetails> ApiError::statusDetailsFromJson(const Json& details) {
  if (!details.is_object()) return std::nullopt;
  server::StatusDetails out;
  const auto text = [&](const char* key) -> std::optional<std::string> {
    auto it = details.find(key);
    if (it == details.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  out.name = text("name");
  out.group = text("group");
  out.kind = text("kind");
  if (auto causes = details.find("causes"); causes != details.end() && causes->is_array()) {
    for (const auto& cause : *causes) {
      auto message = cause.find("message");
      out.causes.push_back(
          {message != cause.end() && message->is_string() ? message->get<std::string>() : ""});
    }
  }
  return out;
}

Json statusObject(int code, const std::string& reason, const std::string& message,
                  const Json& details) {
  Json status = {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason}};
  if (!details.is_null()) status["details"] = details;
  status["code"] = code;
  return status;
}

}  // namespace metrics_adapter::api
