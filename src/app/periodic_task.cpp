#include "app/periodic_task.h"

namespace metrics_adapter::app {

PeriodicTask::PeriodicTask(std::chrono::milliseconds interval, std::function<void()> work)
    : interval_(interval), work_(std::move(work)) {}

PeriodicTask::~PeriodicTask() { stop(); }

void PeriodicTask::start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wakeup_.wait_for(lock, interval_, [this] { return stopping_; })) {
      lock.unlock();
      work_();
      lock.lock();
    }
  });
}

void PeriodicTask::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace metrics_adapter::app
