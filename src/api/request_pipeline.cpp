#include "metrics_adapter/api/request_pipeline.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::api {
namespace {

// The in-flight gauge counts a request from the start of its stages to their end.
class InFlight {
 public:
  explicit InFlight(telemetry::SelfMetrics& metrics) : metrics_(metrics) {
    metrics_.requestStarted();
  }
  ~InFlight() { metrics_.requestFinished(); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  telemetry::SelfMetrics& metrics_;
};

// The rest of who the caller is, for the audit log: moved, not copied (the name is there).
void keepCaller(auth::UserInfo&& user, server::ResponseNotes& notes) {
  notes.uid = std::move(user.uid);
  notes.groups = std::move(user.groups);
  notes.extra = std::move(user.extra);
}

}  // namespace

RequestPipeline::RequestPipeline(std::shared_ptr<const auth::AuthFilter> auth,
                                 std::shared_ptr<const Router> router,
                                 std::shared_ptr<telemetry::SelfMetrics> self_metrics)
    : auth_(std::move(auth)), router_(std::move(router)), self_metrics_(std::move(self_metrics)) {}

server::HttpResponse RequestPipeline::handle(const server::HttpRequest& request) const {
  return *run(request, auth::Reviews::kMayAsk);
}

std::optional<server::HttpResponse> RequestPipeline::answerAtOnce(
    const server::HttpRequest& request) const {
  return run(request, auth::Reviews::kCachedOnly);
}

std::optional<server::HttpResponse> RequestPipeline::run(const server::HttpRequest& request,
                                                         auth::Reviews reviews) const {
  const bool at_once = reviews == auth::Reviews::kCachedOnly;
  server::ResponseNotes notes;
  // One RequestInfo per thread, parsed into again by each request: its strings keep their
  // capacity, so a discovery request allocates nothing to be parsed.
  thread_local std::optional<server::RequestInfo> parsed;
  // A target of up to the header limit (1 MiB) grows it: made anew then (emplace destroys the
  // old one; an assignment would keep its strings' buffers).
  constexpr std::size_t kKeptTargetBytes = 16384;
  if (!parsed || parsed->path.capacity() > kKeptTargetBytes) parsed.emplace();
  const server::RequestInfo* info = nullptr;
  std::string invalid_target;
  try {
    server::parseRequestInfo(request.method, request.target, *parsed);
    info = &*parsed;
    notes.route = routeLabel(*info);
  } catch (const server::InvalidRequestTarget& error) {
    invalid_target = error.what();
    notes.route = "other";
  }
  // At once: only what the router answers from memory. Anything else is parsed again on the
  // worker (about a microsecond, against the hundreds a metric answer takes).
  if (at_once && (!info || !Router::answersFromMemory(*info))) return std::nullopt;

  InFlight in_flight(*self_metrics_);
  telemetry::PrometheusTimeOnThisThread::reset();
  std::optional<server::HttpResponse> response = [&]() -> std::optional<server::HttpResponse> {
    auth::UserInfo user;
    if (auth_) {
      auto identity = auth_->authenticate(request, reviews);
      if (std::holds_alternative<auth::AuthFilter::NeedsReview>(identity)) return std::nullopt;
      if (auto* refusal = std::get_if<server::HttpResponse>(&identity)) {
        notes.failed_authentication = std::move(refusal->notes.failed_authentication);
        return std::move(*refusal);
      }
      user = std::get<auth::UserInfo>(std::move(identity));
      notes.user = user.name;
    }
    if (!info) return errorResponse(ApiError::badRequest(invalid_target));
    if (auth_) {
      auto permission = auth_->authorize(user, request, *info, reviews);
      if (std::holds_alternative<auth::AuthFilter::NeedsReview>(permission)) return std::nullopt;
      if (auto* refusal = std::get_if<server::HttpResponse>(&permission)) {
        // 403 is the authorizer's denial; a 503 (review unavailable) decided nothing.
        notes.decision = refusal->notes.decision;
        notes.decision_reason = std::move(refusal->notes.decision_reason);
        keepCaller(std::move(user), notes);
        return std::move(*refusal);
      }
      notes.decision_reason = std::move(std::get<auth::AuthFilter::Allowed>(permission).reason);
    }
    notes.decision = "allow";
    keepCaller(std::move(user), notes);
    return router_->route(request, *info);
  }();
  if (!response) return std::nullopt;

  if (auto waited = telemetry::PrometheusTimeOnThisThread::total(); waited.count() > 0) {
    notes.backend_time = std::chrono::duration_cast<std::chrono::microseconds>(waited);
  }
  response->notes = std::move(notes);
  return response;
}

RequestAccounting::RequestAccounting(std::shared_ptr<telemetry::SelfMetrics> self_metrics,
                                     AccessLog access_log, Audit audit)
    : self_metrics_(std::move(self_metrics)),
      access_log_(std::move(access_log)),
      audit_(std::move(audit)) {}

bool RequestAccounting::observe(const server::Exchange& exchange) {
  std::string_view route = exchange.notes->route;
  std::string parsed_route;
  if (route.empty()) {
    // An answer the server gave itself (429, 504, ...): the pipeline did not label it.
    try {
      parsed_route = routeLabel(server::parseRequestInfo(exchange.method, exchange.target));
    } catch (const server::InvalidRequestTarget&) {
      parsed_route = "other";
    }
    route = parsed_route;
  }
  self_metrics_->observeRequest(route, exchange.code, exchange.latency);
  if (access_log_) access_log_(exchange);
  return !audit_ || audit_(exchange);
}

}  // namespace metrics_adapter::api
