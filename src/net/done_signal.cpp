#include "metrics_adapter/net/done_signal.h"

namespace metrics_adapter::net {

void DoneSignal::set() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  changed_.notify_all();
}

bool DoneSignal::waitUntil(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, deadline, [&] { return done_; });
}

}  // namespace metrics_adapter::net
