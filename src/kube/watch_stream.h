#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kube/watch_event.h"
#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::kube {

// Cuts the bytes of a watch stream, arriving in chunks of any size, into events: one JSON
// document per line, as the API server writes them. Not thread-safe; one per stream.
class WatchStream {
 public:
  // `max_line_bytes` bounds the one line held while it is incomplete; `request` names the call
  // in errors ("GET /api/v1/pods").
  WatchStream(std::size_t max_line_bytes, std::string request);

  // Hands every complete line in `bytes` to `on_event`. False once `on_event` returned false.
  // Throws KubeError for a line that is not a watch event or exceeds the bound.
  bool feed(std::string_view bytes, const WatchHandler& on_event);

  // The stream ended: a last line without its newline is still an event (false: stopped).
  bool finish(const WatchHandler& on_event);

 private:
  bool emit(std::string_view line, const WatchHandler& on_event) const;

  std::size_t max_line_bytes_;
  std::string request_;
  std::string partial_;  // the incomplete line, carried to the next chunk
};

// One watch line as an event. Throws KubeError when it is not JSON or has no string "type".
WatchEvent parseWatchEvent(std::string_view line, const std::string& request);

}  // namespace metrics_adapter::kube
