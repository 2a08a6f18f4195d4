#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/config/config.h"

namespace re2 {
class RE2;
}

namespace metrics_adapter::discovery {

// Decides which series a rule takes (seriesFilters + the implicit name.matches filter) and
// the API metric name of each (name.matches / name.as with Go regexp.Expand semantics:
// unanchored search, $1 ${1} $name ${name} $$, longest-identifier references, unknown -> "").
// Immutable after construction; thread-safe.
class SeriesNamer {
 public:
  // Throws config::ConfigError with `path` (e.g. "config.yaml: rules[2]") as prefix of the
  // field names: "...: rules[2].name.as: ..." or "...: rules[2].seriesFilters[1].isNot: ...".
  SeriesNamer(const config::DiscoveryRule& rule, const std::string& path);
  ~SeriesNamer();
  SeriesNamer(SeriesNamer&&) noexcept;
  SeriesNamer& operator=(SeriesNamer&&) noexcept;

  // The API metric name for `series_name`, or nullopt when a filter rejects it.
  std::optional<std::string> metricName(std::string_view series_name) const;

 private:
  struct Filter;
  std::vector<Filter> filters_;
  std::unique_ptr<re2::RE2> matches_;
  std::string as_;
};

}  // namespace metrics_adapter::discovery
