#include "metrics_adapter/net/call_canceller.h"

#include "metrics_adapter/net/http_call.h"

namespace metrics_adapter::net {

void CallCanceller::cancelAll() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
  // Under the lock: a call removes itself before it is destroyed, so each pointer is alive.
  for (HttpCall* call : calls_) call->interrupt();
}

bool CallCanceller::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

bool CallCanceller::add(HttpCall* call) {
  std::lock_guard lock(mutex_);
  if (cancelled_) return false;
  calls_.insert(call);
  return true;
}

void CallCanceller::remove(HttpCall* call) {
  std::lock_guard lock(mutex_);
  calls_.erase(call);
}

}  // namespace metrics_adapter::net
