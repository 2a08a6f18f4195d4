#pragma once

#include <optional>
#include <string_view>

#include "metrics_adapter/api/api_error.h"

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
// An empty header is the legacy list; nullopt when nothing can be served (406).
std::optional<DiscoveryFormat> negotiateDiscovery(std::string_view accept);

// The Content-Type of an aggregated answer (static text).
std::string_view aggregatedContentType(DiscoveryFormat format);

// The APIGroupDiscoveryList for the group-versions `legacy` describes: `legacy` holds, for each
// group in the order listed, {"name": group, "versions": [APIResourceList...]}, each version's
// resources converted as the aggregator converts a legacy APIResourceList
// (ConvertGroupVersionIntoToDiscovery): "<parent>/<sub>" names become subresources of a parent
// resource, made with an empty responseKind when the list has none. So a client reads the same
// resources from either document. An entry whose scope disagrees with its parent's is left out
// (the aggregator would drop the whole group-version; our lists never have one).
Json aggregatedDiscovery(const Json& legacy, DiscoveryFormat format);

}  // namespace metrics_adapter::api
