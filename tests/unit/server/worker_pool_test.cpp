#include "server/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <latch>
#include <stdexcept>
#include <thread>

namespace metrics_adapter::server {
namespace {

TEST(WorkerPoolTest, RefusesWorkBeyondQueuedPlusRunningLimit) {
  WorkerPool pool(1, 2);
  std::latch release(1);
  std::promise<void> first_started;
  ASSERT_TRUE(pool.trySubmit([&] {
    first_started.set_value();
    release.wait();
  }));
  first_started.get_future().wait();
  ASSERT_TRUE(pool.trySubmit([&] { release.wait(); }));  // queued behind the running one
  EXPECT_EQ(pool.inFlight(), 2u);
  EXPECT_FALSE(pool.trySubmit([] {}));
  release.count_down();
  pool.stop();
  EXPECT_EQ(pool.inFlight(), 0u);
}

TEST(WorkerPoolTest, ThenRunsAfterTheSlotIsFreed) {
  WorkerPool pool(1, 1);
  std::promise<bool> resubmitted;
  ASSERT_TRUE(pool.trySubmit([] {}, [&] { resubmitted.set_value(pool.trySubmit([] {})); }));
  // With capacity 1, a resubmission from `then` only fits if the finished task left.
  EXPECT_TRUE(resubmitted.get_future().get());
}

TEST(WorkerPoolTest, KeepsWorkingAfterATaskThrows) {
  WorkerPool pool(1, 4);
  std::promise<void> ran;
  ASSERT_TRUE(pool.trySubmit([] { throw std::runtime_error("boom"); }));
  ASSERT_TRUE(pool.trySubmit([&] { ran.set_value(); }));
  EXPECT_EQ(ran.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST(WorkerPoolTest, StopDropsQueuedTasksAndRefusesNewOnes) {
  WorkerPool pool(1, 4);
  std::latch release(1);
  std::promise<void> started;
  std::atomic<bool> queued_ran{false};
  ASSERT_TRUE(pool.trySubmit([&] {
    started.set_value();
    release.wait();
  }));
  started.get_future().wait();
  ASSERT_TRUE(pool.trySubmit([&] { queued_ran = true; }));
  std::thread stopper([&] { pool.stop(); });
  // stop() waits for the running task; let that finish only once stop() has begun.
  while (!pool.isStopping()) std::this_thread::yield();
  release.count_down();
  stopper.join();
  EXPECT_FALSE(queued_ran);
  EXPECT_FALSE(pool.trySubmit([] {}));
}

TEST(WorkerPoolTest, StartsAThreadOnlyWhenNoneIsWaiting) {
  WorkerPool pool(3, 16);
  EXPECT_EQ(pool.threadCount(), 0u);
  for (int i = 0; i < 5; ++i) {  // one task at a time: the first thread serves them all
    std::promise<void> ran;
    ASSERT_TRUE(pool.trySubmit([&] { ran.set_value(); }));
    ran.get_future().wait();
    // The thread is back waiting before the next task, as an idle server's worker is.
    while (pool.waitingThreadCount() != 1) std::this_thread::yield();
  }
  EXPECT_EQ(pool.threadCount(), 1u);

  std::latch release(1);
  std::atomic<int> started{0};
  for (int i = 0; i < 6; ++i) {  // more blocked tasks than threads: the pool's size, no more
    ASSERT_TRUE(pool.trySubmit([&] {
      ++started;
      release.wait();
    }));
  }
  while (started < 3) std::this_thread::yield();
  EXPECT_EQ(pool.threadCount(), 3u);
  release.count_down();
  while (started < 6) std::this_thread::yield();  // the three queued ones ran on those three
  EXPECT_EQ(pool.threadCount(), 3u);
  pool.stop();  // the last tasks may still be in release.wait(), which goes before the pool
}

}  // namespace
}  // namespace metrics_adapter::server
