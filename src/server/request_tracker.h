#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace metrics_adapter::server {

// Counts requests between "fully read" and "response written" so shutdown can drain them.
// Thread-safe.
class RequestTracker {
 public:
  // Marks one request active for its lifetime. Move-only; the tracker must outlive it.
  class Token {
   public:
    Token() = default;
    explicit Token(RequestTracker* tracker) : tracker_(tracker) {}
    Token(Token&& other) noexcept : tracker_(other.tracker_) { other.tracker_ = nullptr; }
    Token& operator=(Token&& other) noexcept;
    Token(const Token&) = delete;
    Token& operator=(const Token&) = delete;
    ~Token() { reset(); }

    void reset();

   private:
    RequestTracker* tracker_ = nullptr;
  };

  Token begin();
  // Waits until no request is active or `deadline` passes; returns whether none is active.
  bool waitIdle(std::chrono::steady_clock::time_point deadline);
  std::size_t active() const;

 private:
  void end();

  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t active_ = 0;
};

}  // namespace metrics_adapter::server
