#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "audit/event.h"
#include "metrics_adapter/audit/audit_options.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::audit {

// Where a backend's events go: the log file or the webhook. Called from one thread at a time,
// except interrupt() and cancel(), which may come from any thread.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Appends the event as this sink writes it, without a newline; without its bodies
  // (responseObject) when `with_bodies` is false.
  virtual void serialize(std::string& out, const Event& event, bool with_bodies) const = 0;
  // Writes or sends serialised events together; false when they were lost.
  virtual bool deliver(const std::vector<std::string>& events) = 0;
  // Bytes a batch adds to its events (an envelope), for --audit-*-truncate-max-batch-size.
  virtual std::size_t batchOverhead() const { return 0; }
  // Shutdown has begun: stop waiting between retries, give up after the attempt under way.
  virtual void interrupt() {}
  // Shutdown's time is up: end the delivery under way at once.
  virtual void cancel() {}
};

// One backend ("log" or "webhook"): the mode (blocking, blocking-strict, batch), truncation,
// throttling, and the self-metrics of what was written and lost. Thread-safe.
class Backend {
 public:
  // `error_reason`: how a failed delivery is counted ("write_error" or "send_error").
  // `stop_limit`: how long stop() spends writing what is queued.
  Backend(std::string name, std::unique_ptr<EventSink> sink, BatchOptions batch,
          TruncateOptions truncate, std::shared_ptr<telemetry::SelfMetrics> metrics,
          std::string error_reason, std::chrono::milliseconds stop_limit = std::chrono::seconds(5));
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // Serialises the event on this thread (it is a view of the exchange, gone after the call);
  // blocking modes deliver it now, batch mode queues its text (or drops it, when the buffer is
  // full). False only when blocking-strict could not deliver. Never throws.
  bool submit(const Event& event);
  // Delivers what is queued within stop_limit, drops (and counts) the rest, joins. Idempotent.
  void stop();

  const std::string& name() const { return name_; }
  AuditMode mode() const { return batch_.mode; }

 private:
  void run();
  // The event's text, without its bodies when it would pass the maximum event size; false (and
  // counted) when it is still too large.
  bool serialize(const Event& event, std::string& text);
  // Splits serialised events into batches under the maximum batch size and delivers them; true
  // when nothing was lost.
  bool deliverAll(std::vector<std::string>& events);
  bool deliverBatch(const std::vector<std::string>& batch);
  // Waits for a throttle token; returns early when stopping began meanwhile.
  void throttle(std::unique_lock<std::mutex>& lock);

  std::string name_;
  std::unique_ptr<EventSink> sink_;
  BatchOptions batch_;
  TruncateOptions truncate_;
  std::shared_ptr<telemetry::SelfMetrics> metrics_;
  std::string error_reason_;
  std::chrono::milliseconds stop_limit_;

  std::mutex deliver_mutex_;  // blocking modes: one delivery at a time

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::deque<std::string> queue_;  // serialised events
  bool stopping_ = false;
  bool done_ = false;
  std::chrono::steady_clock::time_point stop_deadline_;
  double tokens_ = 0;
  std::chrono::steady_clock::time_point refilled_;
  std::thread worker_;
  std::once_flag stopped_;
};

}  // namespace metrics_adapter::audit
