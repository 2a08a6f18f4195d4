#pragma once

#include <chrono>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "audit/policy.h"
#include "metrics_adapter/server/exchange_observer.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::audit {

// One audit.k8s.io/v1 Event, as views of the exchange it describes: it lives only during
// Auditor::record, which serialises it for every backend before the exchange's strings go (a
// batch backend queues the serialised text). No copies: one is made per answer on the I/O thread.
struct Event {
  Level level = Level::kMetadata;
  Stage stage = Stage::kResponseComplete;
  std::string_view audit_id;
  std::string_view request_uri;
  std::string_view verb;
  std::string_view user;
  std::string_view uid;
  std::span<const std::string> groups;
  const std::map<std::string, std::vector<std::string>>* extra = nullptr;  // null: none
  std::span<const std::string> source_ips;  // empty: none known (no sourceIPs member)
  std::string_view user_agent;
  bool has_object_ref = false;  // resource requests
  std::string_view resource;
  std::string_view namespace_name;
  std::string_view name;
  std::string_view api_group;
  std::string_view api_version;
  std::string_view subresource;
  int code = 0;  // 0: no responseStatus (RequestReceived)
  // The answer's body, kept when it is needed: for a failure's Status fields, and at level
  // RequestResponse of a resource request for responseObject.
  std::string_view body;
  bool response_object = false;  // write `body` as responseObject when it is JSON
  std::chrono::system_clock::time_point received;
  std::chrono::system_clock::time_point stage_time;
  std::string_view decision;
  std::string_view decision_reason;
  // A refused authentication's message: responseStatus is then {message, code} alone, as
  // upstream's failed-authentication handler writes it, not the Status body's fields.
  std::string_view failed_authentication;
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

// What every event of one request shares, worked out once for all its stages.
struct RequestOrigin {
  std::string_view audit_id;
  std::span<const std::string> source_ips;
};

// The event of `stage` for an exchange answered at `now`; received = now - latency.
Event makeEvent(const server::Exchange& exchange, const ParsedRequest& request, Level level,
                Stage stage, std::chrono::system_clock::time_point now,
                const RequestOrigin& origin);

// RFC 3339 with microseconds in UTC: 2024-05-01T10:00:00.123456Z (metav1.MicroTime).
std::string microTime(std::chrono::system_clock::time_point time);

// Appends the event as one compact JSON object (no newline); without responseObject when
// `with_bodies` is false.
void appendEventJson(std::string& out, const Event& event, bool with_bodies = true);
// Upstream's legacy log line (no newline):
// <RFC3339Nano> AUDIT: id="..." stage="..." ip="..." method="..." user="..." groups="..." ...
std::string legacyEventLine(const Event& event);

}  // namespace metrics_adapter::audit
