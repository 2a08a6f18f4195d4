#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace metrics_adapter::app {

// Runs `work` every `interval` on its own thread until stopped (first run after one interval).
// `work` must not throw; stop() waits for a running `work` to return.
class PeriodicTask {
 public:
  PeriodicTask(std::chrono::milliseconds interval, std::function<void()> work);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  void start();
  void stop();

 private:
  std::chrono::milliseconds interval_;
  std::function<void()> work_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace metrics_adapter::app
