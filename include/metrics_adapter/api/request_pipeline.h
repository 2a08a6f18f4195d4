#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "metrics_adapter/api/router.h"
#include "metrics_adapter/auth/auth_filter.h"
#include "metrics_adapter/server/exchange_observer.h"
#include "metrics_adapter/server/https_server.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::api {

// Every API request goes through these stages, in this order:
//
//   limit        the HTTPS server: header/body size, connections, in-flight, deadline (429, 413,
//                431, 504 before or around everything below)
//   parse        the target, once, into the RequestInfo every later stage reads
//   authenticate AuthFilter (401, 503); skipped with --authentication-mode=none
//   authorize    AuthFilter, with the parsed attributes (403, 503); a target that could not be
//                parsed is answered 400 here, after authentication
//   route        Router: method, Accept, discovery, metric routes (404, 405, 406)
//   handle       the metric handlers (400, 404, 503 ...)
//   account      RequestAccounting, as the server's exchange observer: every answer the server
//                writes, the refused ones too, in the self-metrics and the access log
//
// The first six run in handle() on a worker thread; accounting runs when the answer is written.
// answerAtOnce() runs the same stages on the connection's I/O thread for what the router answers
// from memory (the discovery documents), as long as authentication and authorization can decide
// from their caches; otherwise it returns nullopt and the server gives the request to handle().
class RequestPipeline {
 public:
  // `auth` may be null: every request is let through (--authentication-mode=none).
  RequestPipeline(std::shared_ptr<const auth::AuthFilter> auth,
                  std::shared_ptr<const Router> router,
                  std::shared_ptr<telemetry::SelfMetrics> self_metrics);

  // The answer to `request`, with notes for accounting (route template, user, Prometheus time).
  server::HttpResponse handle(const server::HttpRequest& request) const;

  // The same answer when it needs no call (Prometheus, TokenReview, SubjectAccessReview), else
  // nullopt: for server::Handlers::at_once.
  std::optional<server::HttpResponse> answerAtOnce(const server::HttpRequest& request) const;

 private:
  // The stages; nullopt only with Reviews::kCachedOnly, when a stage would have to wait.
  std::optional<server::HttpResponse> run(const server::HttpRequest& request,
                                          auth::Reviews reviews) const;

  std::shared_ptr<const auth::AuthFilter> auth_;
  std::shared_ptr<const Router> router_;
  std::shared_ptr<telemetry::SelfMetrics> self_metrics_;
};

// The account stage: counts and times every answer by route template and code, writes the
// access-log line, and hands the answer to the audit log. Thread-safe.
class RequestAccounting : public server::ExchangeObserver {
 public:
  using AccessLog = std::function<void(const server::Exchange&)>;
  // false: the event could not be written and the answer must not go out (blocking-strict).
  using Audit = std::function<bool(const server::Exchange&)>;

  RequestAccounting(std::shared_ptr<telemetry::SelfMetrics> self_metrics, AccessLog access_log,
                    Audit audit = nullptr);

  bool observe(const server::Exchange& exchange) override;

 private:
  std::shared_ptr<telemetry::SelfMetrics> self_metrics_;
  AccessLog access_log_;
  Audit audit_;
};

}  // namespace metrics_adapter::api
