#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::api {

// What a GET /apis asks for, by its Accept header (docs/api-contract.md "Aggregated discovery").
enum class DiscoveryFormat {
  kLegacy,             // APIGroupList, application/json
  kAggregatedV2,       // APIGroupDiscoveryList of apidiscovery.k8s.io/v2
  kAggregatedV2Beta1,  // the same, v2beta1 (served by 1.26-1.29 and still asked for)
};

// The first of the Accept header's media ranges (in order of q, then as written) that we can
// serve, as the apiserver's negotiation picks: application/json (or a wildcard) with
// g=apidiscovery.k8s.io;v=v2|v2beta1;as=APIGroupDiscoveryList is an aggregated document; without
// those parameters, the legacy list; any other conversion, protobuf, YAML and CBOR are skipped.
// An empty header is the legacy list; nullopt when nothing can be served (406). Allocates
// nothing.
std::optional<DiscoveryFormat> negotiateDiscovery(std::string_view accept);

// The Content-Type of an aggregated answer (static text).
std::string_view aggregatedContentType(DiscoveryFormat format);

// One entry of a legacy APIResourceList, as both discovery documents are made from it.
struct ApiResource {
  std::string name;  // "pods/duty_cycle_current", "queue_depth", "pods"
  bool namespaced = true;
  std::string_view kind;                // static text, e.g. "MetricValueList"
  std::vector<std::string_view> verbs;  // static text
};

// A group whose versions serve the same resources (true of every group we serve).
struct ApiGroupResources {
  std::string_view group;
  std::vector<std::string_view> versions;  // in the order listed; the first is preferred
  std::vector<ApiResource> resources;
};

// The APIGroupDiscoveryList (compact JSON) for `groups`, each version's resources converted as
// the aggregator converts a legacy APIResourceList (ConvertGroupVersionIntoToDiscovery):
// "<parent>/<sub>" names become subresources of a parent resource, made with an empty
// responseKind when the list has none, so a client reads the same resources from either
// document. An entry whose scope disagrees with its parent's is left out (the aggregator would
// drop the whole group-version; our lists never have one). Written straight to text: at 100,000
// metrics a JSON tree took seconds (docs/performance.md).
std::string renderAggregatedDiscovery(const std::vector<ApiGroupResources>& groups,
                                      DiscoveryFormat format);

}  // namespace metrics_adapter::api
