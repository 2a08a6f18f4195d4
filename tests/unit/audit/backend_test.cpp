#include "audit/backend.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "unit/audit/audit_test_support.h"

namespace metrics_adapter::audit {
namespace {

using testing::sample;

// Records each delivery; while `hold` is set, a delivery waits until release().
class GatedSink : public EventSink {
 public:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    bool hold = false;
    int waiting = 0;
    std::vector<std::vector<std::string>> deliveries;
  };
  explicit GatedSink(std::shared_ptr<State> state) : state_(std::move(state)) {}
  void serialize(std::string& out, const Event& event, bool with_bodies) const override {
    appendEventJson(out, event, with_bodies);
  }
  bool deliver(const std::vector<std::string>& events) override {
    std::unique_lock lock(state_->mutex);
    ++state_->waiting;
    state_->changed.notify_all();
    state_->changed.wait(lock, [this] { return !state_->hold; });
    --state_->waiting;
    state_->deliveries.push_back(events);
    state_->changed.notify_all();
    return true;
  }

 private:
  std::shared_ptr<State> state_;
};

// `uri` must outlive the event (a view).
Event eventNamed(std::string_view uri) {
  Event event;
  event.audit_id = "id";
  event.request_uri = uri;
  event.verb = "get";
  event.code = 200;
  return event;
}

TEST(BackendTest, FullBufferDropsAndCountsWithoutBlocking) {
  auto state = std::make_shared<GatedSink::State>();
  state->hold = true;
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  BatchOptions batch;
  batch.mode = AuditMode::kBatch;
  batch.buffer_size = 5;
  batch.max_batch_size = 1;
  Backend backend("webhook", std::make_unique<GatedSink>(state), batch, TruncateOptions{}, metrics,
                  "send_error");
  ASSERT_TRUE(backend.submit(eventNamed("/0")));
  {
    std::unique_lock lock(state->mutex);  // the worker is now stuck in the first delivery
    state->changed.wait(lock, [&] { return state->waiting == 1; });
  }
  const auto started = std::chrono::steady_clock::now();
  for (int i = 1; i <= 8; ++i) {
    const std::string uri = "/" + std::to_string(i);
    EXPECT_TRUE(backend.submit(eventNamed(uri)));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(500));
  const std::string dropped =
      R"(metrics_adapter_audit_events_dropped_total{backend="webhook",reason="buffer_full"})";
  EXPECT_EQ(sample(*metrics, dropped), 3);  // 8 offered, 5 fit
  {
    std::lock_guard lock(state->mutex);
    state->hold = false;
  }
  state->changed.notify_all();
  backend.stop();
  std::vector<std::string> uris;
  for (const auto& delivery : state->deliveries) {
    ASSERT_EQ(delivery.size(), 1u);
    uris.push_back(nlohmann::json::parse(delivery[0])["requestURI"]);
  }
  EXPECT_EQ(uris, (std::vector<std::string>{"/0", "/1", "/2", "/3", "/4", "/5"}));
  EXPECT_EQ(sample(*metrics, R"(metrics_adapter_audit_events_total{backend="webhook"})"), 6);
}

TEST(BackendTest, TruncationDropsBodiesThenEventsAndSplitsBatches) {
  auto state = std::make_shared<GatedSink::State>();
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  BatchOptions batch;
  batch.mode = AuditMode::kBatch;
  batch.max_batch_size = 10;
  batch.max_batch_wait = std::chrono::seconds(10);  // stop() sends what is there
  TruncateOptions truncate;
  truncate.enabled = true;
  truncate.max_event_size = 800;
  truncate.max_batch_size = 1000;
  Backend backend("log", std::make_unique<GatedSink>(state), batch, truncate, metrics,
                  "write_error");
  Event with_body = eventNamed("/with-body");
  with_body.level = Level::kRequestResponse;
  with_body.has_object_ref = true;
  with_body.resource = "pods";
  with_body.response_object = true;
  const std::string body = R"({"items":")" + std::string(2000, 'a') + R"("})";
  with_body.body = body;
  const std::string long_uri = "/" + std::string(1000, 'b');
  const Event too_large = eventNamed(long_uri);
  const Event small = eventNamed("/small");
  std::string small_text;
  appendEventJson(small_text, small);
  ASSERT_LT(small_text.size() * 3 + 3, 1000u);  // three small events fit one batch
  EXPECT_TRUE(backend.submit(with_body));
  EXPECT_TRUE(backend.submit(too_large));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(backend.submit(small));
  backend.stop();
  std::vector<std::size_t> sizes;
  std::vector<nlohmann::json> events;
  for (const auto& delivery : state->deliveries) {
    std::size_t bytes = 0;
    for (const std::string& text : delivery) {
      bytes += text.size() + 1;
      EXPECT_LE(text.size(), 800u);
      events.push_back(nlohmann::json::parse(text));
    }
    EXPECT_LE(bytes, 1000u);
    sizes.push_back(delivery.size());
  }
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["requestURI"], "/with-body");
  EXPECT_FALSE(events[0].contains("responseObject"));
  EXPECT_EQ(events[0]["annotations"]["audit.k8s.io/truncated"], "true");
  EXPECT_GT(sizes.size(), 1u);  // split to stay under the batch size
  EXPECT_EQ(
      sample(*metrics,
             R"(metrics_adapter_audit_events_dropped_total{backend="log",reason="too_large"})"),
      1);
  EXPECT_EQ(sample(*metrics, R"(metrics_adapter_audit_events_total{backend="log"})"), 4);
}

TEST(BackendTest, ThrottleSpacesBatches) {
  auto state = std::make_shared<GatedSink::State>();
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  BatchOptions batch;
  batch.mode = AuditMode::kBatch;
  batch.max_batch_size = 1;
  batch.throttle_enable = true;
  batch.throttle_qps = 20;
  batch.throttle_burst = 1;
  Backend backend("webhook", std::make_unique<GatedSink>(state), batch, TruncateOptions{}, metrics,
                  "send_error");
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(backend.submit(eventNamed("/t")));
  {
    std::unique_lock lock(state->mutex);
    state->changed.wait(lock, [&] { return state->deliveries.size() == 4; });
  }
  // A burst of 1 and 20 per second: the fourth batch waits about 3 × 50 ms.
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(140));
  backend.stop();
}

}  // namespace
}  // namespace metrics_adapter::audit
