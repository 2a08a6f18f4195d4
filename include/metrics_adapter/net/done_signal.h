#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace metrics_adapter::net {

// A flag set once, from any thread, that others wait for with a deadline: how a blocking
// caller learns that a cpprestsdk continuation has run.
class DoneSignal {
 public:
  void set();
  // True once set; false when `deadline` passed first.
  bool waitUntil(std::chrono::steady_clock::time_point deadline);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool done_ = false;
};

}  // namespace metrics_adapter::net
