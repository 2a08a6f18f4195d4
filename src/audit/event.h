#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "audit/policy.h"
#include "metrics_adapter/server/exchange_observer.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::audit {

// One audit.k8s.io/v1 Event before it is written: plain copies of what the exchange said, so a
// batch backend can queue it and serialise it on its own thread.
struct Event {
  Level level = Level::kMetadata;
  Stage stage = Stage::kResponseComplete;
  std::string audit_id;
  std::string request_uri;
  std::string verb;
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  std::string source_ip;  // "" when the connection's address is unknown
  std::string user_agent;
  bool has_object_ref = false;  // resource requests
  std::string resource;
  std::string namespace_name;
  std::string name;
  std::string api_group;
  std::string api_version;
  std::string subresource;
  int code = 0;  // 0: no responseStatus (RequestReceived)
  // The answer's body, kept when it is needed: for a failure's Status fields, and at level
  // RequestResponse of a resource request for responseObject.
  std::string body;
  bool response_object = false;  // write `body` as responseObject when it is JSON
  std::chrono::system_clock::time_point received;
  std::chrono::system_clock::time_point stage_time;
  std::string decision;
  std::string decision_reason;
  bool truncated = false;  // responseObject dropped to fit --audit-*-truncate-max-event-size
};

// The request's attributes as the policy and the events read them: the RequestInfo when the
// target could be parsed, otherwise a non-resource request with the lower-case method as verb.
struct ParsedRequest {
  const server::RequestInfo* info = nullptr;  // null when the target could not be parsed
  std::string verb;                           // used when info is null
  std::string_view path;                      // used when info is null
};

RequestAttributes attributesOf(const server::Exchange& exchange, const ParsedRequest& request);

// The event of `stage` for an exchange answered at `now`; received = now - latency.
Event makeEvent(const server::Exchange& exchange, const ParsedRequest& request, Level level,
                Stage stage, std::chrono::system_clock::time_point now, std::string_view audit_id);

// A random (version 4) UUID, as upstream's auditID.
std::string newAuditId();

// The address without its port: "10.0.0.1:5443" -> "10.0.0.1", "[::1]:443" -> "::1"; "" for
// "unknown" and "".
std::string sourceIp(std::string_view remote);

// RFC 3339 with microseconds in UTC: 2024-05-01T10:00:00.123456Z (metav1.MicroTime).
std::string microTime(std::chrono::system_clock::time_point time);

// Appends the event as one compact JSON object (no newline); without responseObject when
// `with_bodies` is false.
void appendEventJson(std::string& out, const Event& event, bool with_bodies = true);
// Upstream's legacy log line (no newline):
// <RFC3339Nano> AUDIT: id="..." stage="..." ip="..." method="..." user="..." groups="..." ...
std::string legacyEventLine(const Event& event);

}  // namespace metrics_adapter::audit
