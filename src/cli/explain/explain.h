#pragma once

#include <cstddef>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/check_config/check_config.h"
#include "metrics_adapter/app/flags.h"

namespace metrics_adapter::cli {

// Why no rule serves a metric, in the order explain checks them.
enum class MissReason {
  kOtherResource,  // the name is served, but not for the requested resource
  kNoSeries,       // no rule's seriesQuery returned a series within max-age
  kFilteredOut,    // series with that name exist, every rule's filters/name.matches reject them
  kNoRuleNamesIt,  // series exist, but no rule turns any of them into that name
};

// What explain observed about a metric no rule serves.
struct MissFacts {
  std::vector<std::string> other_resources;  // resources the name is served for
  std::size_t series_seen = 0;               // series the rules' seriesQueries returned
  std::size_t related_series_rejected = 0;   // series named like the metric that no rule took
  std::size_t related_series_accepted = 0;   // series named like the metric some rule took
};

MissReason classifyMiss(const MissFacts& facts);

// True when a series name is "named like" `metric`: equal, or containing it (upstream rules
// usually strip a prefix or a _total suffix).
bool seriesNamedLike(std::string_view series_name, std::string_view metric);

// The `limit` names of `names` closest to `metric` by edit distance (names containing it
// first), best first, ties by name.
std::vector<std::string> closestNames(std::string_view metric,
                                      const std::vector<std::string>& names, std::size_t limit);

// The words of `metrics-adapter explain`: the request to explain, and the server's Prometheus
// client flags and --metrics-max-age.
struct ExplainOptions {
  std::string config_file;
  std::string metric;
  std::string resource = "pods";
  std::string namespace_name;
  std::string name;
  std::string selector;
  std::string metric_selector;
  bool external = false;
  bool resource_metrics = false;  // a metrics.k8s.io request of --name
  std::string version = "v1beta2";
  app::AdapterOptions
      shared;  // what parseToolFlags reads: prometheus, query_timeout, relist.max_age
};

// The request an HPA would send: `segments` under `prefix`, `query` pairs with values (empty
// ones left out), as the raw target (escaped as client-go escapes it) and as the readable line
// the tools print.
struct HpaRequest {
  std::string target;
  std::string line;
};
HpaRequest hpaRequest(const std::string& prefix, const std::vector<std::string>& segments,
                      const std::vector<std::pair<std::string, std::string>>& query);

// Everything explain can say about a metric no rule serves for `group_resource` ("" with
// options.external): the `reason:` line (MissReason), the closest served names and each rule's
// series count. Reads options.metric, options.external and options.shared.relist.max_age.
void explainMiss(std::ostream& out, const ExplainOptions& options, const DiscoveryRun& run,
                 const std::string& group_resource);

// Throws FlagError for unknown flags and a missing --config, --prometheus-url or --metric.
ExplainOptions parseExplainFlags(std::span<const std::string> args);

// `metrics-adapter explain ...`; `args` are the words after "explain". Returns the exit code:
// 0 when the request would succeed, 2 when it would fail, 1 for bad flags or config.
int runExplain(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// explain's usage and flags, for --help and for an error.
std::string explainUsage();

}  // namespace metrics_adapter::cli
