#include "metrics_adapter/kube/rate_limited_kube_api.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

namespace metrics_adapter::kube {
namespace {

class CountingApi : public KubeApi {
 public:
  nlohmann::json get(const std::string& path, std::string_view,
                     std::chrono::milliseconds) override {
    ++calls;
    return {{"path", path}};
  }
  nlohmann::json post(const std::string& path, const nlohmann::json&,
                      std::chrono::milliseconds) override {
    ++calls;
    return {{"path", path}};
  }
  std::atomic<int> calls{0};
};

using std::chrono::milliseconds;

TEST(RateLimitedKubeApiTest, TheBurstGoesAtOnceAndThenOneCallPerQpsInterval) {
  RateLimitedKubeApi api(std::make_shared<CountingApi>(), 10, 3);  // 100 ms a token
  for (int i = 0; i < 3; ++i) EXPECT_EQ(api.reserve(), std::chrono::steady_clock::duration::zero());
  const auto fourth = api.reserve();
  const auto fifth = api.reserve();
  // Owed tokens: the fourth waits about one interval, the fifth about two.
  EXPECT_GT(fourth, milliseconds(0));
  EXPECT_LE(fourth, milliseconds(100));
  EXPECT_GT(fifth - fourth, milliseconds(50));  // one interval, less the time between calls
  EXPECT_LE(fifth - fourth, milliseconds(100));
}

TEST(RateLimitedKubeApiTest, CallsGoThroughAndWaitForTheirToken) {
  auto inner = std::make_shared<CountingApi>();
  RateLimitedKubeApi api(inner, 50, 1);  // 20 ms a token
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(api.get("/api/v1/pods", "application/json", milliseconds(1000))["path"],
            "/api/v1/pods");
  api.post("/apis/x", nlohmann::json::object(), milliseconds(1000));
  api.get("/api/v1/nodes", "application/json", milliseconds(1000));
  EXPECT_EQ(inner->calls, 3);
  // The second and third calls each waited for a token: at least 2 x 20 ms in all.
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(38));
}

}  // namespace
}  // namespace metrics_adapter::kube
