#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::kube {

// --client-qps / --client-burst: every call (a GET, a POST, the start of a watch) takes a token
// from a bucket that refills at `qps` a second and holds `burst`; a call finding it empty waits
// for the next token, as client-go's token-bucket limiter does. Thread-safe.
class RateLimitedKubeApi : public KubeApi {
 public:
  RateLimitedKubeApi(std::shared_ptr<KubeApi> inner, double qps, int burst);

  nlohmann::json get(const std::string& path, std::string_view accept,
                     std::chrono::milliseconds timeout) override;
  nlohmann::json post(const std::string& path, const nlohmann::json& body,
                      std::chrono::milliseconds timeout) override;
  void watch(const WatchRequest& request, const WatchHandler& on_event) override;

  // Takes a token (or owes one) and says how long its call must wait; waitForToken sleeps that.
  std::chrono::steady_clock::duration reserve();

 private:
  void waitForToken();

  std::shared_ptr<KubeApi> inner_;
  double qps_;
  double burst_;
  std::mutex mutex_;
  double tokens_;
  std::chrono::steady_clock::time_point refilled_;
};

}  // namespace metrics_adapter::kube
