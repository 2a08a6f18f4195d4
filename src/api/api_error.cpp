#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {

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
