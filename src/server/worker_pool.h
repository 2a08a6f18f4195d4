#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace metrics_adapter::server {

// Up to `threads` threads running submitted tasks, with a bound on queued plus running tasks.
// A thread starts when a task finds none waiting, so a server that answers one request at a
// time keeps one or two, not eight idle stacks (issue 47). Thread-safe.
class WorkerPool {
 public:
  // At most `threads` threads (at least one) and a capacity of at least one, whatever the
  // arguments say. No thread runs before the first task.
  WorkerPool(unsigned threads, std::size_t max_in_flight);
  ~WorkerPool();  // stop()

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `work` unless max_in_flight tasks are already queued or running (or the pool is
  // stopped); returns whether it was queued. `then`, if set, runs on the same thread after `work`
  // returned and its slot was freed, so whatever `then` triggers can submit again without
  // counting the finished task. Exceptions escaping either are logged and dropped.
  bool trySubmit(std::function<void()> work, std::function<void()> then = {});

  // Discards tasks not yet started, waits for running ones to return and joins the threads.
  // Must not be called from a task. Idempotent.
  void stop();

  std::size_t inFlight() const;
  bool isStopping() const;
  std::size_t threadCount() const;         // started so far
  std::size_t waitingThreadCount() const;  // of those, waiting for a task

 private:
  struct Task {
    std::function<void()> work;
    std::function<void()> then;
  };

  void run();

  const std::size_t max_threads_;
  const std::size_t max_in_flight_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> queue_;
  std::size_t running_ = 0;
  std::size_t waiting_ = 0;  // threads waiting for a task
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace metrics_adapter::server
