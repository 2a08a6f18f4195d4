#include "server/worker_pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <system_error>
#include <utility>

namespace metrics_adapter::server {

WorkerPool::WorkerPool(unsigned threads, std::size_t max_in_flight)
    : max_threads_(std::max(threads, 1u)), max_in_flight_(std::max<std::size_t>(max_in_flight, 1)) {
  threads_.reserve(max_threads_);
}

WorkerPool::~WorkerPool() { stop(); }

bool WorkerPool::trySubmit(std::function<void()> work, std::function<void()> then) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() + running_ >= max_in_flight_) return false;
    queue_.push_back(Task{std::move(work), std::move(then)});
    if (waiting_ < queue_.size() && threads_.size() < max_threads_) {
      try {
        threads_.emplace_back([this] { run(); });
      } catch (const std::system_error& e) {
        SPDLOG_WARN("could not start a worker thread: {}", e.what());
        if (threads_.empty()) {  // nothing would ever run the task
          queue_.pop_back();
          return false;
        }
      }
    }
  }
  wake_.notify_one();
  return true;
}

void WorkerPool::stop() {
  std::deque<Task> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_all();
  // Destroyed outside the lock: a task's captures may run arbitrary destructors.
  dropped.clear();
  // No thread starts once stopping_ is set: threads_ no longer changes.
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

std::size_t WorkerPool::inFlight() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + running_;
}

bool WorkerPool::isStopping() const {
  std::lock_guard lock(mutex_);
  return stopping_;
}

std::size_t WorkerPool::threadCount() const {
  std::lock_guard lock(mutex_);
  return threads_.size();
}

std::size_t WorkerPool::waitingThreadCount() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

namespace {

void runGuarded(const std::function<void()>& function) {
  if (!function) return;
  try {
    function();
  } catch (const std::exception& e) {
    SPDLOG_ERROR("worker task failed: {}", e.what());
  } catch (...) {
    SPDLOG_ERROR("worker task failed with a non-standard exception");
  }
}

}  // namespace

void WorkerPool::run() {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      ++waiting_;
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      --waiting_;
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    runGuarded(task.work);
    task.work = nullptr;
    {
      std::lock_guard lock(mutex_);
      --running_;
    }
    runGuarded(task.then);
  }
}

}  // namespace metrics_adapter::server
