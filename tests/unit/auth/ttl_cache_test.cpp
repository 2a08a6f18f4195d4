#include "auth/ttl_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace metrics_adapter::auth {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class CacheClock {
 public:
  TtlCache<std::string, int>::Now now() {
    return [this] { return now_; };
  }
  void advance(milliseconds by) { now_ += by; }

 private:
  std::chrono::steady_clock::time_point now_{seconds(1000)};
};

TEST(TtlCacheTest, ReturnsWhatWasPutUntilTheTtlHasPassed) {
  CacheClock clock;
  TtlCache<std::string, int> cache(10, clock.now());
  cache.put("a", 1, seconds(10));
  EXPECT_EQ(cache.get("a"), 1);
  clock.advance(milliseconds(9999));
  EXPECT_EQ(cache.get("a"), 1);
  clock.advance(milliseconds(1));  // exactly ttl after the insertion: gone
  EXPECT_EQ(cache.get("a"), std::nullopt);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(TtlCacheTest, EachInsertionHasItsOwnTtl) {
  CacheClock clock;
  TtlCache<std::string, int> cache(10, clock.now());
  cache.put("short", 1, seconds(1));
  cache.put("long", 2, seconds(5));
  clock.advance(seconds(2));
  EXPECT_EQ(cache.get("short"), std::nullopt);
  EXPECT_EQ(cache.get("long"), 2);
}

TEST(TtlCacheTest, PutReplacesValueAndRestartsTheTtl) {
  CacheClock clock;
  TtlCache<std::string, int> cache(10, clock.now());
  cache.put("a", 1, seconds(2));
  clock.advance(seconds(1));
  cache.put("a", 2, seconds(2));
  clock.advance(milliseconds(1500));
  EXPECT_EQ(cache.get("a"), 2);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(TtlCacheTest, NonPositiveTtlStoresNothingAndRemovesTheOldEntry) {
  CacheClock clock;
  TtlCache<std::string, int> cache(10, clock.now());
  cache.put("a", 1, seconds(2));
  cache.put("a", 2, milliseconds(0));
  EXPECT_EQ(cache.get("a"), std::nullopt);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(TtlCacheTest, NeverHoldsMoreThanMaxEntriesAndEvictsTheSoonestToExpire) {
  CacheClock clock;
  TtlCache<std::string, int> cache(3, clock.now());
  cache.put("a", 1, seconds(30));
  cache.put("b", 2, seconds(10));  // soonest to expire
  cache.put("c", 3, seconds(20));
  cache.put("d", 4, seconds(40));
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.get("b"), std::nullopt);
  EXPECT_EQ(cache.get("a"), 1);
  EXPECT_EQ(cache.get("c"), 3);
  EXPECT_EQ(cache.get("d"), 4);
}

TEST(TtlCacheTest, WhenFullDropsExpiredEntriesBeforeLiveOnes) {
  CacheClock clock;
  TtlCache<std::string, int> cache(3, clock.now());
  cache.put("old1", 1, seconds(1));
  cache.put("old2", 2, seconds(1));
  cache.put("live", 3, seconds(60));
  clock.advance(seconds(2));
  cache.put("new", 4, seconds(1));  // expires before "live", but the expired ones go first
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.get("live"), 3);
  EXPECT_EQ(cache.get("new"), 4);
}

TEST(TtlCacheTest, ZeroMaxEntriesStillHoldsOne) {
  CacheClock clock;
  TtlCache<std::string, int> cache(0, clock.now());
  EXPECT_EQ(cache.maxEntries(), 1u);
  cache.put("a", 1, seconds(1));
  cache.put("b", 2, seconds(1));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.get("b"), 2);
}

TEST(TtlCacheTest, EraseAndClearRemoveEntries) {
  CacheClock clock;
  TtlCache<std::string, int> cache(10, clock.now());
  cache.put("a", 1, seconds(1));
  cache.put("b", 2, seconds(1));
  cache.erase("a");
  EXPECT_EQ(cache.get("a"), std::nullopt);
  EXPECT_EQ(cache.get("b"), 2);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
}

TEST(TtlCacheTest, ConcurrentUseStaysWithinBoundsAndConsistent) {
  TtlCache<int, int> cache(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        const int key = (i * 7 + t) % 200;
        cache.put(key, key * 2, seconds(60));
        const std::optional<int> value = cache.get((key + 1) % 200);
        if (value) {
          EXPECT_EQ(*value, ((key + 1) % 200) * 2);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(cache.size(), 64u);
}

}  // namespace
}  // namespace metrics_adapter::auth
