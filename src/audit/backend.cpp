#include "audit/backend.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace metrics_adapter::audit {

Backend::Backend(std::string name, std::unique_ptr<EventSink> sink, BatchOptions batch,
                 TruncateOptions truncate, std::shared_ptr<telemetry::SelfMetrics> metrics,
                 std::string error_reason, std::chrono::milliseconds stop_limit)
    : name_(std::move(name)),
      sink_(std::move(sink)),
      batch_(batch),
      truncate_(truncate),
      metrics_(std::move(metrics)),
      error_reason_(std::move(error_reason)),
      stop_limit_(stop_limit),
      tokens_(batch.throttle_burst),
      refilled_(std::chrono::steady_clock::now()) {
  if (batch_.mode == AuditMode::kBatch) worker_ = std::thread([this] { run(); });
}

Backend::~Backend() { stop(); }

bool Backend::submit(const Event& event) {
  try {
    std::string text;
    if (!serialize(event, text)) return batch_.mode != AuditMode::kBlockingStrict;
    if (batch_.mode != AuditMode::kBatch) {
      std::vector<std::string> events;
      events.push_back(std::move(text));
      std::lock_guard lock(deliver_mutex_);
      const bool written = deliverAll(events);
      return written || batch_.mode == AuditMode::kBlocking;
    }
    {
      std::lock_guard lock(mutex_);
      if (!stopping_ && queue_.size() < batch_.buffer_size) {
        queue_.push_back(std::move(text));
        if (queue_.size() == 1 || queue_.size() >= batch_.max_batch_size) wake_.notify_one();
        return true;
      }
    }
    metrics_->countAuditDropped(name_, "buffer_full");
    return true;
  } catch (const std::exception& e) {
    SPDLOG_WARN("audit {}: an event was lost: {}", name_, e.what());
    metrics_->countAuditDropped(name_, error_reason_);
    return batch_.mode != AuditMode::kBlockingStrict;
  }
}

void Backend::stop() {
  std::call_once(stopped_, [this] {
    if (!worker_.joinable()) return;
    std::unique_lock lock(mutex_);
    stopping_ = true;
    stop_deadline_ = std::chrono::steady_clock::now() + stop_limit_;
    wake_.notify_all();
    sink_->interrupt();
    if (!finished_.wait_until(lock, stop_deadline_, [this] { return done_; })) {
      sink_->cancel();  // the delivery under way ends now; what is left is dropped
    }
    lock.unlock();
    worker_.join();
  });
}

void Backend::throttle(std::unique_lock<std::mutex>& lock) {
  if (!batch_.throttle_enable || batch_.throttle_qps <= 0) return;
  const double burst = std::max(1, batch_.throttle_burst);
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    tokens_ = std::min(burst, tokens_ + std::chrono::duration<double>(now - refilled_).count() *
                                            batch_.throttle_qps);
    refilled_ = now;
    if (tokens_ >= 1 || stopping_) break;
    const auto wait = std::chrono::duration<double>((1 - tokens_) / batch_.throttle_qps);
    wake_.wait_for(lock, wait, [this] { return stopping_; });
  }
  tokens_ = std::max(0.0, tokens_ - 1);
}

void Backend::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and everything written
    if (!stopping_ && batch_.max_batch_wait.count() > 0 && queue_.size() < batch_.max_batch_size) {
      wake_.wait_for(lock, batch_.max_batch_wait,
                     [this] { return stopping_ || queue_.size() >= batch_.max_batch_size; });
    }
    throttle(lock);
    const std::size_t count = std::min(queue_.size(), batch_.max_batch_size);
    std::vector<std::string> events;
    events.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      events.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    if (stopping_ && std::chrono::steady_clock::now() >= stop_deadline_) {
      const std::size_t lost = events.size() + queue_.size();
      queue_.clear();
      lock.unlock();
      metrics_->countAuditDropped(name_, error_reason_, lost);
      SPDLOG_WARN("audit {}: {} events not written before shutdown's limit", name_, lost);
      lock.lock();
      break;
    }
    lock.unlock();
    try {
      deliverAll(events);
    } catch (const std::exception& e) {
      SPDLOG_WARN("audit {}: {} events lost: {}", name_, events.size(), e.what());
      metrics_->countAuditDropped(name_, error_reason_, events.size());
    }
    lock.lock();
  }
  done_ = true;
  finished_.notify_all();
}

bool Backend::serialize(const Event& event, std::string& text) {
  sink_->serialize(text, event, true);
  const auto limit = static_cast<std::size_t>(truncate_.max_event_size);
  if (!truncate_.enabled || text.size() <= limit) return true;
  if (event.response_object) {
    Event trimmed = event;
    trimmed.truncated = true;
    text.clear();
    sink_->serialize(text, trimmed, false);
  }
  if (text.size() <= limit) return true;
  metrics_->countAuditDropped(name_, "too_large");
  SPDLOG_DEBUG("audit {}: an event of {} bytes is over --audit-{}-truncate-max-event-size", name_,
               text.size(), name_);
  return false;
}

bool Backend::deliverAll(std::vector<std::string>& events) {
  if (events.empty()) return true;
  if (!truncate_.enabled) return deliverBatch(events);
  // Split so that no batch passes the batch size (each event alone fits: max event size is at
  // most max batch size).
  const auto batch_limit = static_cast<std::size_t>(truncate_.max_batch_size);
  bool all = true;
  std::vector<std::string> batch;
  std::size_t size = sink_->batchOverhead();
  for (std::string& text : events) {
    if (!batch.empty() && size + text.size() + 1 > batch_limit) {
      all = deliverBatch(batch) && all;
      batch.clear();
      size = sink_->batchOverhead();
    }
    size += text.size() + 1;
    batch.push_back(std::move(text));
  }
  return deliverBatch(batch) && all;
}

bool Backend::deliverBatch(const std::vector<std::string>& batch) {
  if (sink_->deliver(batch)) {
    metrics_->countAuditEvent(name_, batch.size());
    return true;
  }
  metrics_->countAuditDropped(name_, error_reason_, batch.size());
  return false;
}

}  // namespace metrics_adapter::audit
