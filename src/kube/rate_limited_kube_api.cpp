#include "metrics_adapter/kube/rate_limited_kube_api.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

namespace metrics_adapter::kube {

RateLimitedKubeApi::RateLimitedKubeApi(std::shared_ptr<KubeApi> inner, double qps, int burst)
    : inner_(std::move(inner)),
      qps_(qps),
      burst_(std::max(1, burst)),
      tokens_(burst_),
      refilled_(std::chrono::steady_clock::now()) {}

std::chrono::steady_clock::duration RateLimitedKubeApi::reserve() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  tokens_ =
      std::min(burst_, tokens_ + std::chrono::duration<double>(now - refilled_).count() * qps_);
  refilled_ = now;
  tokens_ -= 1;  // taken now, or owed: the wait below pays it back
  if (tokens_ >= 0) return std::chrono::steady_clock::duration::zero();
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

void RateLimitedKubeApi::waitForToken() {
  if (qps_ <= 0) return;
  const auto wait = reserve();
  if (wait > std::chrono::steady_clock::duration::zero()) std::this_thread::sleep_for(wait);
}

nlohmann::json RateLimitedKubeApi::get(const std::string& path, std::string_view accept,
                                       std::chrono::milliseconds timeout) {
  waitForToken();
  return inner_->get(path, accept, timeout);
}

nlohmann::json RateLimitedKubeApi::post(const std::string& path, const nlohmann::json& body,
                                        std::chrono::milliseconds timeout) {
  waitForToken();
  return inner_->post(path, body, timeout);
}

void RateLimitedKubeApi::watch(const WatchRequest& request, const WatchHandler& on_event) {
  waitForToken();
  inner_->watch(request, on_event);
}

}  // namespace metrics_adapter::kube
