#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::prometheus {

// One series as a series parser's visitor saw it, copied out of the parser's buffers.
struct Seen {
  std::string name;
  std::vector<std::string> labels;
  bool operator==(const Seen&) const = default;
};

// A visitor that appends every series to `seen`.
inline SeriesVisitor collectInto(std::vector<Seen>& seen) {
  return [&seen](std::string_view name, const std::vector<std::string_view>& labels) {
    seen.push_back({std::string(name), {labels.begin(), labels.end()}});
  };
}

}  // namespace metrics_adapter::prometheus
