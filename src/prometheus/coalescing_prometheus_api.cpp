#include "metrics_adapter/prometheus/coalescing_prometheus_api.h"

#include <future>
#include <optional>
#include <stdexcept>
#include <utility>

#include "metrics_adapter/telemetry/self_metrics.h"
#include "prometheus/request_builder.h"

namespace metrics_adapter::prometheus {
namespace {

// Prometheus is sent evaluation times in milliseconds: equal here means equal on the wire.
std::chrono::milliseconds epochMillis(Clock::time_point at) {
  return std::chrono::floor<std::chrono::milliseconds>(at.time_since_epoch());
}

// Callers take their evaluation time just before calling, so one that was preempted in between
// arrives after callers with later times: answers are kept this much past their use so that such
// a straggler still finds the answer for its time instead of asking Prometheus again.
constexpr std::chrono::milliseconds kStragglerGrace{1000};

}  // namespace

// One call in flight. Its answer is null when the call failed; `failure` then says how, so that
// each waiter throws an exception of its own rather than all sharing the leader's object.
struct CoalescingPrometheusApi::Flight {
  struct Failure {
    bool from_prometheus = false;  // a PrometheusError, else another std::exception
    PrometheusError::Kind kind = PrometheusError::Kind::kUnreachable;
    int http_status = 0;
    std::string message;
    std::string detail;  // PrometheusError::detail()
  };
  std::optional<Failure> failure;  // written before the promise is fulfilled
  std::promise<std::shared_ptr<const QueryResult>> promise;
  std::shared_future<std::shared_ptr<const QueryResult>> answer = promise.get_future().share();
};

CoalescingPrometheusApi::CoalescingPrometheusApi(std::shared_ptr<PrometheusApi> inner,
                                                 CoalescingOptions options)
    : inner_(std::move(inner)), options_(options) {}

CoalescingPrometheusApi::~CoalescingPrometheusApi() = default;

QueryResult CoalescingPrometheusApi::query(const std::string& promql, Clock::time_point at,
                                           std::chrono::milliseconds timeout) {
  return *sharedQuery(promql, at, timeout);
}

std::shared_ptr<const QueryResult> CoalescingPrometheusApi::sharedQuery(
    const std::string& promql, Clock::time_point at, std::chrono::milliseconds timeout) {
  std::shared_ptr<const QueryResult> cached;
  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    std::lock_guard lock(mutex_);
    cached = cachedAnswer(promql, epochMillis(at));
    if (cached) {
      ++stats_.cached;
    } else {
      auto [running, inserted] = in_flight_.try_emplace(promql);
      if (inserted) running->second = std::make_shared<Flight>();
      flight = running->second;
      leader = inserted;
      ++(leader ? stats_.called : stats_.joined);
    }
  }
  if (cached) return cached;
  if (leader) return lead(promql, at, timeout, flight);
  return join(*flight, timeout);
}

std::shared_ptr<const QueryResult> CoalescingPrometheusApi::lead(
    const std::string& promql, Clock::time_point at, std::chrono::milliseconds timeout,
    const std::shared_ptr<Flight>& flight) {
  std::shared_ptr<const QueryResult> result;
  try {
    result = std::make_shared<const QueryResult>(inner_->query(promql, at, timeout));
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const PrometheusError*>(&e);
    flight->failure = Flight::Failure{
        error != nullptr, error ? error->kind() : PrometheusError::Kind::kUnreachable,
        error ? error->httpStatus() : 0, e.what(), error ? error->detail() : e.what()};
    finish(promql, at, *flight, nullptr);
    throw;
  } catch (...) {
    flight->failure = Flight::Failure{false, {}, 0, "the Prometheus query failed", ""};
    finish(promql, at, *flight, nullptr);
    throw;
  }
  finish(promql, at, *flight, result);
  return result;
}

void CoalescingPrometheusApi::finish(const std::string& promql, Clock::time_point at,
                                     Flight& flight, std::shared_ptr<const QueryResult> result) {
  {
    std::lock_guard lock(mutex_);
    in_flight_.erase(promql);
    if (result) remember(Answer{promql, epochMillis(at), result});
  }
  flight.promise.set_value(std::move(result));
}

std::shared_ptr<const QueryResult> CoalescingPrometheusApi::join(
    const Flight& flight, std::chrono::milliseconds timeout) {
  const auto began = std::chrono::steady_clock::now();
  // The leader's call has a deadline of its own, so waiting without one still ends.
  const bool answered =
      timeout.count() <= 0 || flight.answer.wait_for(timeout) == std::future_status::ready;
  // The time this request spent on Prometheus, for the access log, as if it had called itself.
  telemetry::PrometheusTimeOnThisThread::add(std::chrono::steady_clock::now() - began);
  if (!answered) {
    throw PrometheusError(PrometheusError::Kind::kTimeout, 0,
                          "Prometheus did not answer within " + formatPrometheusDuration(timeout));
  }
  if (auto answer = flight.answer.get()) return answer;
  const auto& failure = *flight.failure;
  if (failure.from_prometheus) {
    throw PrometheusError(failure.kind, failure.http_status, failure.message, failure.detail);
  }
  throw std::runtime_error(failure.message);
}

std::shared_ptr<const QueryResult> CoalescingPrometheusApi::cachedAnswer(
    const std::string& promql, std::chrono::milliseconds at_ms) {
  const auto oldest_useful = at_ms - options_.cache_ttl;
  // Answers are remembered roughly in time order: the front is the oldest.
  while (!answers_.empty() && answers_.front().evaluated_at < oldest_useful - kStragglerGrace) {
    forgetOldest();
  }
  auto found = answer_index_.find(promql);
  if (found == answer_index_.end() || found->second->evaluated_at < oldest_useful) return nullptr;
  return found->second->result;
}

void CoalescingPrometheusApi::remember(Answer answer) {
  if (auto found = answer_index_.find(answer.promql); found != answer_index_.end()) {
    // Keep the fresher answer: a slow leader may finish after a later one.
    if (found->second->evaluated_at > answer.evaluated_at) return;
    auto node = found->second;
    answer_index_.erase(found);
    answers_.erase(node);
  }
  auto node = answers_.insert(answers_.end(), std::move(answer));
  answer_index_.emplace(node->promql, node);
  while (answers_.size() > options_.max_cached_answers) forgetOldest();
}

void CoalescingPrometheusApi::forgetOldest() {
  answer_index_.erase(answers_.front().promql);
  answers_.pop_front();
}

CoalescingPrometheusApi::Stats CoalescingPrometheusApi::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

RangeResult CoalescingPrometheusApi::queryRange(const std::string& promql, Clock::time_point start,
                                                Clock::time_point end,
                                                std::chrono::milliseconds step,
                                                std::chrono::milliseconds timeout) {
  return inner_->queryRange(promql, start, end, step, timeout);
}

void CoalescingPrometheusApi::series(const std::string& selector, Clock::time_point start,
                                     std::chrono::milliseconds timeout,
                                     const SeriesVisitor& visitor) {
  inner_->series(selector, start, timeout, visitor);
}

}  // namespace metrics_adapter::prometheus
