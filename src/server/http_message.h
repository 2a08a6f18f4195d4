#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/server/https_server.h"

namespace metrics_adapter::server {

// One answer as it goes on the wire: the head (status line and header fields) rendered as text,
// and the body written from where the response holds it. A connection keeps one and renders each
// answer into it, so the head's buffer is reused and an answer allocates nothing here (Beast's
// message type allocated every header field; docs/performance.md, round 4).
struct WireResponse {
  std::string head;
  std::string_view body;  // into `response`; empty for HEAD, 204 and 304
  // Owns the body while it is written. Destroyed, not assigned, once written: a string assigned
  // an empty one keeps its buffer, and a connection kept every large answer's (a 3 MB
  // PodMetricsList) alive beside the next one.
  std::optional<HttpResponse> response;

  void clear();  // frees the response; the head keeps its capacity
};

// Renders `response` into `wire`: Content-Type, Content-Length, `X-Content-Type-Options:
// nosniff`, `Cache-Control: no-cache, private` (unless the handler set one), `Connection: close`
// when the connection ends after it, and the handler's extra headers. For HEAD the body is
// dropped but Content-Length still describes it. A status outside 200..599 becomes a 500
// (logged); header lines containing CR, LF or NUL are dropped (logged), and so are the handler's
// Content-Length, Transfer-Encoding and Connection: the framing is this function's. A non-empty
// `audit_id` is sent as `Audit-Id` (upstream's header name as Go writes it).
void renderResponse(HttpResponse response, bool head_request, bool keep_alive, WireResponse& wire,
                    std::string_view audit_id = {});

// A response carrying a Kubernetes Status failure body.
HttpResponse statusResponse(int code, std::string_view reason, std::string_view message);

}  // namespace metrics_adapter::server
