#include <string>
#include <string_view>

#include "metrics_adapter/config/config.h"

namespace metrics_adapter::config {
namespace {

// The line of `path`, else of its nearest recorded parent ("rules[3].name.as" falls back to
// "rules[3].name", then "rules[3]"), else 0.
int lineOf(const AdapterConfig& config, std::string_view path) {
  while (!path.empty()) {
    auto it = config.lines.find(path);
    if (it != config.lines.end()) return it->second;
    const std::size_t cut = path.find_last_of(".[");
    if (cut == std::string_view::npos) break;
    path = path.substr(0, cut);
  }
  return 0;
}

}  // namespace

std::string formatConfigError(const AdapterConfig& config, std::string_view path,
                              std::string_view problem) {
  std::string message = config.source;
  message += ": ";
  if (!path.empty()) {
    message += path;
    message += ": ";
  }
  message += problem;
  if (const int line = lineOf(config, path); line > 0) {
    message += " (line " + std::to_string(line) + ")";
  }
  return message;
}

}  // namespace metrics_adapter::config
