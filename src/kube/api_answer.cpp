#include "kube/api_answer.h"

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>

#include "metrics_adapter/net/text.h"

namespace metrics_adapter::kube {
namespace {

// Far beyond any object's managedFields; keeps hostile nesting away from recursive consumers.
constexpr std::size_t kMaxJsonDepth = 256;
constexpr std::size_t kMaxMessageBytes = 1024;
constexpr std::size_t kMaxSnippetBytes = 200;

// The deepest nesting of arrays and objects in `text`, brackets inside strings excluded.
std::size_t nestingDepth(std::string_view text) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// The message of a Kubernetes Status document, or "" when `body` is not one.
std::string statusMessage(std::string_view body) {
  if (nestingDepth(body) > kMaxJsonDepth) return "";
  const nlohmann::json document = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) return "";
  const auto kind = document.find("kind");
  if (kind == document.end() || *kind != "Status") return "";
  for (const char* field : {"message", "reason"}) {
    const auto it = document.find(field);
    if (it != document.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
      return it->get<std::string>();
    }
  }
  return "";
}

}  // namespace

nlohmann::json parseAnswer(int status, std::string_view body, const std::string& request) {
  const std::string prefix = "cannot decode the Kubernetes API answer to " + request + ": ";
  if (nestingDepth(body) > kMaxJsonDepth) {
    throw KubeError(
        status, prefix + "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    return nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw KubeError(status, prefix + net::sanitizeLine(e.what(), kMaxMessageBytes));
  }
}

KubeError errorForAnswer(int status, std::string_view body, const std::string& request) {
  std::string message =
      "Kubernetes API answered " + request + " with HTTP " + std::to_string(status);
  const std::string status_message = statusMessage(body);
  const std::string detail = status_message.empty()
                                 ? net::sanitizeLine(body, kMaxSnippetBytes)
                                 : net::sanitizeLine(status_message, kMaxMessageBytes);
  if (!detail.empty()) message += ": " + detail;
  return KubeError(status, message);
}

std::string formatTimeout(std::chrono::milliseconds timeout) {
  if (timeout.count() % 1000 == 0) return std::to_string(timeout.count() / 1000) + "s";
  return std::to_string(timeout.count()) + "ms";
}

}  // namespace metrics_adapter::kube
