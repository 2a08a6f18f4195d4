#include "kube/watch_stream.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "metrics_adapter/net/text.h"

namespace metrics_adapter::kube {
namespace {

constexpr std::size_t kQuotedBytes = 120;
// Events nest a few levels (object, metadata, labels); deeper input is not an event.
constexpr std::size_t kMaxDepth = 64;

}  // namespace

WatchEvent parseWatchEvent(std::string_view line, const std::string& request) {
  const auto malformed = [&](const std::string& why) {
    return KubeError(0, "the Kubernetes API watch " + request + " sent " + why + ": \"" +
                            net::sanitizeLine(line, kQuotedBytes) + "\"");
  };
  std::size_t depth = 0;
  bool too_deep = false;
  nlohmann::json parsed = nlohmann::json::parse(
      line.begin(), line.end(),
      [&](int, nlohmann::json::parse_event_t event, nlohmann::json&) {
        if (event == nlohmann::json::parse_event_t::object_start ||
            event == nlohmann::json::parse_event_t::array_start) {
          too_deep = too_deep || ++depth > kMaxDepth;
        } else if (event == nlohmann::json::parse_event_t::object_end ||
                   event == nlohmann::json::parse_event_t::array_end) {
          --depth;
        }
        return !too_deep;
      },
      /*allow_exceptions=*/false);
  if (too_deep) throw malformed("an event nested too deeply");
  if (parsed.is_discarded() || !parsed.is_object()) throw malformed("a line that is not JSON");
  auto type = parsed.find("type");
  if (type == parsed.end() || !type->is_string()) throw malformed("an event without a type");
  WatchEvent event{type->get<std::string>(), nullptr};
  if (auto object = parsed.find("object"); object != parsed.end()) {
    event.object = std::move(*object);
  }
  return event;
}

WatchStream::WatchStream(std::size_t max_line_bytes, std::string request)
    : max_line_bytes_(max_line_bytes), request_(std::move(request)) {}

bool WatchStream::feed(std::string_view bytes, const WatchHandler& on_event) {
  for (;;) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (partial_.size() + piece.size() > max_line_bytes_) {
      throw KubeError(0, "the Kubernetes API watch " + request_ + " sent an event longer than " +
                             std::to_string(max_line_bytes_) + " bytes");
    }
    if (newline == std::string_view::npos) {
      partial_.append(piece);
      return true;
    }
    bytes.remove_prefix(newline + 1);
    bool go_on = true;
    if (partial_.empty()) {
      go_on = emit(piece, on_event);
    } else {
      partial_.append(piece);
      const std::string line = std::move(partial_);
      partial_.clear();
      go_on = emit(line, on_event);
    }
    if (!go_on) return false;
  }
}

bool WatchStream::finish(const WatchHandler& on_event) {
  const std::string line = std::move(partial_);
  partial_.clear();
  return emit(line, on_event);
}

bool WatchStream::emit(std::string_view line, const WatchHandler& on_event) const {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return true;  // keep-alive
  return on_event(parseWatchEvent(line, request_));
}

}  // namespace metrics_adapter::kube
