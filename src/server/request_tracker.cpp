#include "server/request_tracker.h"

namespace metrics_adapter::server {

RequestTracker::Token& RequestTracker::Token::operator=(Token&& other) noexcept {
  if (this != &other) {
    reset();
    tracker_ = other.tracker_;
    other.tracker_ = nullptr;
  }
  return *this;
}

void RequestTracker::Token::reset() {
  if (tracker_ != nullptr) {
    tracker_->end();
    tracker_ = nullptr;
  }
}

RequestTracker::Token RequestTracker::begin() {
  std::lock_guard lock(mutex_);
  ++active_;
  return Token(this);
}

void RequestTracker::end() {
  std::lock_guard lock(mutex_);
  if (--active_ == 0) idle_.notify_all();
}

bool RequestTracker::waitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return idle_.wait_until(lock, deadline, [this] { return active_ == 0; });
}

std::size_t RequestTracker::active() const {
  std::lock_guard lock(mutex_);
  return active_;
}

}  // namespace metrics_adapter::server
