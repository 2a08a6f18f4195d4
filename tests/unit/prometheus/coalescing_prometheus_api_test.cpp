#include "metrics_adapter/prometheus/coalescing_prometheus_api.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace metrics_adapter::prometheus {
namespace {

using std::chrono::milliseconds;
using Kind = PrometheusError::Kind;

const Clock::time_point kT0 = Clock::time_point(milliseconds(1714564800000));

// A PrometheusApi that counts queries per (PromQL, evaluation millisecond) and answers with one
// sample whose value is the call's number, so callers can tell which call answered them. While
// closed, calls wait at the gate.
class CountingPrometheus : public PrometheusApi {
 public:
  QueryResult query(const std::string& promql, Clock::time_point at, milliseconds) override {
    std::unique_lock lock(mutex_);
    const auto at_ms = std::chrono::floor<milliseconds>(at.time_since_epoch()).count();
    ++calls_[{promql, at_ms}];
    const int number = ++total_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
    if (fail_with_) throw PrometheusError(*fail_with_, 0, "fake failure");
    QueryResult result;
    result.samples.push_back(Sample{{{"pod", "p"}}, static_cast<double>(number), 0});
    return result;
  }

  RangeResult queryRange(const std::string& promql, Clock::time_point, Clock::time_point,
                         milliseconds, milliseconds) override {
    std::lock_guard lock(mutex_);
    ++range_calls_;
    RangeResult result;
    result.series.push_back(
        RangeSeries{{{"promql", promql}}, {1}, {static_cast<double>(range_calls_)}});
    return result;
  }

  void series(const std::string& selector, Clock::time_point, milliseconds,
              const SeriesVisitor& visitor) override {
    visitor(selector, {"pod"});
  }

  void close() { setOpen(false); }
  void open() { setOpen(true); }
  void failWith(Kind kind) {
    std::lock_guard lock(mutex_);
    fail_with_ = kind;
  }
  void waitForCalls(int count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return total_ >= count; });
  }
  int rangeCalls() {
    std::lock_guard lock(mutex_);
    return range_calls_;
  }
  int total() {
    std::lock_guard lock(mutex_);
    return total_;
  }
  std::map<std::pair<std::string, long long>, int> calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  void setOpen(bool open) {
    std::lock_guard lock(mutex_);
    open_ = open;
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  std::optional<Kind> fail_with_;
  int total_ = 0;
  int range_calls_ = 0;
  std::map<std::pair<std::string, long long>, int> calls_;
};

double valueOf(const QueryResult& result) { return result.samples.at(0).value; }

// Polls (without sleeping) until `count` callers wait for a query in flight.
void waitForJoined(const CoalescingPrometheusApi& api, std::size_t count) {
  while (api.stats().joined < count) std::this_thread::yield();
}

class CoalescingPrometheusApiTest : public ::testing::Test {
 protected:
  std::shared_ptr<CountingPrometheus> fake_ = std::make_shared<CountingPrometheus>();
};

TEST_F(CoalescingPrometheusApiTest, QueriesArrivingWhileOneIsInFlightShareIt) {
  CoalescingPrometheusApi api(fake_, {});
  fake_->close();
  constexpr int kCallers = 16;
  std::vector<double> values(kCallers);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { values[0] = valueOf(api.query("up", kT0, milliseconds(0))); });
  fake_->waitForCalls(1);
  for (int i = 1; i < kCallers; ++i) {
    // Later evaluation times: only the call in flight, not a remembered answer, can serve them.
    threads.emplace_back(
        [&, i] { values[i] = valueOf(api.query("up", kT0 + milliseconds(i), milliseconds(0))); });
  }
  waitForJoined(api, kCallers - 1);
  fake_->open();
  for (auto& thread : threads) thread.join();

  EXPECT_EQ(fake_->total(), 1);
  for (double value : values) EXPECT_EQ(value, 1);
  const auto stats = api.stats();
  EXPECT_EQ(stats.called, 1u);
  EXPECT_EQ(stats.joined, static_cast<std::size_t>(kCallers - 1));
}

TEST_F(CoalescingPrometheusApiTest, DifferentQueriesDoNotShare) {
  CoalescingPrometheusApi api(fake_, {});
  fake_->close();
  std::thread first([&] { api.query("up", kT0, milliseconds(0)); });
  fake_->waitForCalls(1);
  std::thread second([&] { api.query("down", kT0, milliseconds(0)); });
  fake_->waitForCalls(2);  // would never return if "down" had joined "up"
  fake_->open();
  first.join();
  second.join();
  EXPECT_EQ(fake_->total(), 2);
}

TEST_F(CoalescingPrometheusApiTest, AFailureReachesEveryWaiterAndIsNotRemembered) {
  CoalescingPrometheusApi api(fake_, {.cache_ttl = milliseconds(60000)});
  fake_->close();
  fake_->failWith(Kind::kUnreachable);
  std::vector<std::optional<Kind>> kinds(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      try {
        api.query("up", kT0, milliseconds(0));
      } catch (const PrometheusError& e) {
        kinds[i] = e.kind();
      }
    });
    if (i == 0) fake_->waitForCalls(1);
  }
  waitForJoined(api, 3);
  fake_->open();
  for (auto& thread : threads) thread.join();
  for (const auto& kind : kinds) EXPECT_EQ(kind, Kind::kUnreachable);
  EXPECT_EQ(fake_->total(), 1);

  EXPECT_THROW(api.query("up", kT0, milliseconds(0)), PrometheusError);
  EXPECT_EQ(fake_->total(), 2);  // tried again, not served the failure
}

TEST_F(CoalescingPrometheusApiTest, AWaiterGivesUpAfterItsOwnTimeout) {
  CoalescingPrometheusApi api(fake_, {});
  fake_->close();
  std::thread leader([&] { api.query("up", kT0, milliseconds(0)); });
  fake_->waitForCalls(1);
  try {
    api.query("up", kT0 + milliseconds(1), milliseconds(1));
    ADD_FAILURE() << "expected a timeout";
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), Kind::kTimeout);
    EXPECT_NE(std::string(e.what()).find("1ms"), std::string::npos) << e.what();
  }
  fake_->open();
  leader.join();
  EXPECT_EQ(fake_->total(), 1);
}

TEST_F(CoalescingPrometheusApiTest, WithoutTtlOnlyTheSameMillisecondIsServedAgain) {
  CoalescingPrometheusApi api(fake_, {});
  EXPECT_EQ(valueOf(api.query("up", kT0, milliseconds(0))), 1);
  EXPECT_EQ(valueOf(api.query("up", kT0 + std::chrono::microseconds(900), milliseconds(0))), 1);
  EXPECT_EQ(valueOf(api.query("up", kT0 - milliseconds(5), milliseconds(0))), 1);  // fresher
  EXPECT_EQ(valueOf(api.query("up", kT0 + milliseconds(1), milliseconds(0))), 2);
  EXPECT_EQ(fake_->total(), 2);
}

TEST_F(CoalescingPrometheusApiTest, TtlServesRepeatedQueriesFromOneCall) {
  CoalescingPrometheusApi api(fake_, {.cache_ttl = milliseconds(5000)});
  std::size_t repeats = 0;
  for (int i = 0; i <= 5000; i += 500, ++repeats) {
    EXPECT_EQ(valueOf(api.query("up", kT0 + milliseconds(i), milliseconds(0))), 1) << i;
  }
  EXPECT_EQ(valueOf(api.query("other", kT0, milliseconds(0))), 2);
  EXPECT_EQ(valueOf(api.query("up", kT0 + milliseconds(5001), milliseconds(0))), 3);
  EXPECT_EQ(valueOf(api.query("up", kT0 + milliseconds(6000), milliseconds(0))), 3);
  EXPECT_EQ(fake_->total(), 3);
  EXPECT_EQ(api.stats().cached, (repeats - 1) + 1);  // all but the first "up", and 6000
}

TEST_F(CoalescingPrometheusApiTest, RemembersABoundedNumberOfAnswers) {
  CoalescingPrometheusApi api(fake_, {.cache_ttl = milliseconds(60000), .max_cached_answers = 2});
  api.query("a", kT0, milliseconds(0));
  api.query("b", kT0, milliseconds(0));
  api.query("c", kT0, milliseconds(0));  // drops "a", the oldest
  EXPECT_EQ(fake_->total(), 3);
  api.query("c", kT0, milliseconds(0));
  api.query("b", kT0, milliseconds(0));
  EXPECT_EQ(fake_->total(), 3);
  api.query("a", kT0, milliseconds(0));
  EXPECT_EQ(fake_->total(), 4);
}

TEST_F(CoalescingPrometheusApiTest, ManyThreadsSendEachQueryAndTimeAtMostOnce) {
  CoalescingPrometheusApi api(fake_, {});
  constexpr int kThreads = 16;
  constexpr int kQueriesPerThread = 200;
  const std::vector<std::string> promqls = {"a", "b", "c"};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kQueriesPerThread; ++i) {
        // Threads walk the same few milliseconds at different paces, so (PromQL, time) pairs
        // repeat across threads, in flight and after.
        const auto at = kT0 + milliseconds((i * (t + 1)) / 40);
        api.query(promqls[(i + t) % promqls.size()], at, milliseconds(0));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& [key, count] : fake_->calls()) {
    EXPECT_EQ(count, 1) << key.first << " at " << key.second;
  }
  const auto stats = api.stats();
  EXPECT_EQ(stats.called + stats.joined + stats.cached,
            static_cast<std::size_t>(kThreads * kQueriesPerThread));
  EXPECT_EQ(stats.called, static_cast<std::size_t>(fake_->total()));
}

TEST_F(CoalescingPrometheusApiTest, SeriesPassesThrough) {
  CoalescingPrometheusApi api(fake_, {});
  std::vector<std::string> seen;
  api.series("{job=\"gpu\"}", kT0, milliseconds(0),
             [&](std::string_view name, const std::vector<std::string_view>&) {
               seen.emplace_back(name);
             });
  EXPECT_EQ(seen, std::vector<std::string>{"{job=\"gpu\"}"});
}

// Range queries are neither shared nor remembered, even with a TTL: every call reaches Prometheus.
TEST_F(CoalescingPrometheusApiTest, RangeQueriesPassThrough) {
  CoalescingPrometheusApi api(fake_, {.cache_ttl = milliseconds(60000)});
  const RangeResult first =
      api.queryRange("up", kT0, kT0 + milliseconds(60000), milliseconds(15000), milliseconds(0));
  const RangeResult second =
      api.queryRange("up", kT0, kT0 + milliseconds(60000), milliseconds(15000), milliseconds(0));
  EXPECT_EQ(fake_->rangeCalls(), 2);
  ASSERT_EQ(second.series.size(), 1u);
  EXPECT_EQ(second.series[0].labels.at("promql"), "up");
  EXPECT_EQ(second.series[0].values, std::vector<double>{2});
  EXPECT_EQ(first.series[0].values, std::vector<double>{1});
  EXPECT_EQ(api.stats().called, 0u);
}

}  // namespace
}  // namespace metrics_adapter::prometheus
