#pragma once

#include <string>
#include <string_view>

namespace metrics_adapter::api {

// SHA-512 of `bytes` in upper-case hex, as kube-openapi and the aggregated discovery handler
// name a document's content: equal documents get equal tags on every replica.
std::string contentHash(std::string_view bytes);

// `hash` quoted, as the ETag header carries it.
std::string quotedEtag(std::string_view hash);

// Whether an If-None-Match header value names `etag` (quoted): "*", or a comma-separated list
// of entity tags compared weakly (a W/ prefix ignored), as Go's http.ServeContent does.
bool ifNoneMatch(std::string_view header, std::string_view etag);

// An HTTP date (RFC 9110 IMF-fixdate) `days` from now, for Expires.
std::string httpDateInDays(int days);

}  // namespace metrics_adapter::api
