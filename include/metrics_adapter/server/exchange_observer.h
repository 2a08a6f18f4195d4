#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::server {

// What the request pipeline learned about a request, carried back with its response so that
// accounting can record it.
struct ResponseNotes {
  std::string user;  // who the caller turned out to be; "" when unknown
  // The rest of who the caller is, for the audit log (moved from the authenticated user, so
  // they cost no copy); empty when unknown.
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  // The authorization stage's decision, for the audit annotations: "allow", "forbid", or ""
  // when the request did not reach it (refused before, or answered by the server itself).
  // Static text only. decision_reason: why, when the authorizer said (e.g. a denial's message).
  std::string_view decision;
  std::string decision_reason;
  // Set when authentication refused the request (401): upstream's audit message for it
  // ("Authentication failed, attempted: bearer"); the event is then written at ResponseStarted.
  std::string failed_authentication;
  std::string route;  // the route template, a bounded label; "" when the pipeline did not set it
  std::optional<std::chrono::microseconds> backend_time;  // time spent waiting on Prometheus
};

// One request and the answer written for it.
struct Exchange {
  std::string_view method;  // "" when the request could not be read (413, 431, malformed)
  std::string_view target;  // the raw request target, "" likewise
  std::string_view remote;
  std::string_view user_agent;  // the User-Agent header, "" when none
  // The request's audit ID, also sent back as its Audit-Id header: the Audit-ID it came with,
  // else a fresh UUID; "" when the request could not be read (its events get a fresh one).
  std::string_view audit_id;
  // The proxy headers upstream reads the event's sourceIPs from (their first values), "" when
  // absent.
  std::string_view forwarded_for;  // X-Forwarded-For
  std::string_view real_ip;        // X-Real-Ip
  int code = 0;
  std::chrono::microseconds latency{0};  // from the end of the request header to the answer
  const ResponseNotes* notes = nullptr;  // never null
  std::string_view response_body;        // the bytes sent as the body (for the audit log)
};

// Sees every answer the server writes: the handler's and those the server gives itself (400 for
// malformed HTTP, 413, 429, 431, 503 while stopping, 504 when the handler runs late), before its
// bytes go out. Called on an I/O thread, so it must be quick; it must not throw.
class ExchangeObserver {
 public:
  virtual ~ExchangeObserver() = default;
  // false: this answer must not go out (an audit event that had to be written first could not
  // be: --audit-log-mode=blocking-strict); the server answers 500 instead, observed as well.
  virtual bool observe(const Exchange& exchange) = 0;
};

}  // namespace metrics_adapter::server
