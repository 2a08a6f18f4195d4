#include "metrics_adapter/discovery/relister.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/telemetry/self_metrics.h"
#include "unit/fake_prometheus.h"

namespace metrics_adapter::discovery {
namespace {

constexpr const char* kRelisterRules = R"(
rules:
- seriesQuery: '{__name__=~"^DCGM_.*"}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
- seriesQuery: 'inference_gpu_util'
  resources:
    overrides:
      namespace: {resource: namespace}
      inferenceservice: {group: serving.kserve.io, resource: inferenceservices}
  metricsQuery: avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
)";

std::shared_ptr<const RuleSet> ruleSet(std::vector<kube::ResourceInfo> resources,
                                       std::shared_ptr<prometheus::PrometheusApi> prometheus) {
  auto set = std::make_shared<RuleSet>();
  set->mapper = std::make_shared<const kube::RestMapper>(std::move(resources));
  set->backends = prometheus::BackendSet::single(std::move(prometheus));
  set->rules = compileRules(config::parseConfig(kRelisterRules, "r.yaml"), *set->mapper, nullptr);
  return set;
}

class RelisterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prometheus_ = std::make_shared<testing::FakePrometheus>();
    prometheus_->series_by_selector["{__name__=~\"^DCGM_.*\"}"] = {
        {"DCGM_FI_DEV_GPU_UTIL", {"namespace", "pod", "gpu"}}};
    prometheus_->series_by_selector["inference_gpu_util"] = {
        {"inference_gpu_util", {"namespace", "inferenceservice"}}};
  }
  std::shared_ptr<testing::FakePrometheus> prometheus_;
};

TEST_F(RelisterTest, ARuleWaitingForItsCrdServesOnceTheMappingKnowsIt) {
  auto builtin = kube::RestMapper::builtin().resources();
  Relister relister(ruleSet(builtin, prometheus_), RelistOptions{});
  relister.relistOnce();
  auto snapshot = relister.snapshot();
  EXPECT_TRUE(snapshot->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_FALSE(snapshot->findCustom("inferenceservices.serving.kserve.io", "inference_gpu_util"));
  EXPECT_EQ(prometheus_->series_calls.size(), 1u);  // the disabled rule asks nothing

  auto with_crd = builtin;
  with_crd.push_back({"serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices",
                      "inferenceservice", true});
  relister.setRuleSet(ruleSet(with_crd, prometheus_));
  // What the kept rule found carries over until the next relist replaces it.
  EXPECT_TRUE(relister.snapshot()->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL"));
  relister.relistOnce();
  snapshot = relister.snapshot();
  const auto* metric =
      snapshot->findCustom("inferenceservices.serving.kserve.io", "inference_gpu_util");
  ASSERT_TRUE(metric);
  EXPECT_EQ(metric->resource.kind, "InferenceService");
  EXPECT_EQ(snapshot->mapper().resources().size(), with_crd.size());
}

TEST_F(RelisterTest, OneFailingQueryDoesNotHideTheOthers) {
  auto with_crd = kube::RestMapper::builtin().resources();
  with_crd.push_back({"serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices",
                      "inferenceservice", true});
  Relister relister(ruleSet(with_crd, prometheus_), RelistOptions{});
  prometheus_->failing_selectors["inference_gpu_util"] = "boom";
  relister.relistOnce();
  EXPECT_TRUE(relister.firstRunDone());
  EXPECT_TRUE(relister.snapshot()->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_EQ(relister.lastErrors().at({"default", "inference_gpu_util"}), "boom");
  EXPECT_EQ(relister.lastErrors().at({"default", "{__name__=~\"^DCGM_.*\"}"}), "");
}

TEST_F(RelisterTest, RecordsIntoTheSelfMetricsItIsGiven) {
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  Relister relister(ruleSet(kube::RestMapper::builtin().resources(), prometheus_), RelistOptions{},
                    metrics);
  relister.relistOnce();
  EXPECT_NE(metrics->exposition().find(
                R"(metrics_adapter_relist_duration_seconds_count{backend="default"} 1)"),
            std::string::npos)
      << metrics->exposition();
  EXPECT_NE(metrics->exposition().find(R"(metrics_adapter_rule_series{rule="rules[0]"} 1)"),
            std::string::npos)
      << metrics->exposition();
}

TEST(SeriesDeadlineTest, IsTheRelistIntervalButNeverBelowTheFloor) {
  using std::chrono::milliseconds;
  using std::chrono::minutes;
  using std::chrono::seconds;
  struct Case {
    milliseconds interval;
    milliseconds expected;
  };
  const std::vector<Case> cases = {{minutes(10), minutes(10)},
                                   {minutes(1), minutes(1)},
                                   {seconds(5), seconds(5)},
                                   {seconds(1), kMinSeriesDeadline},
                                   {milliseconds(1), kMinSeriesDeadline}};
  for (const auto& c : cases) {
    RelistOptions options;
    options.interval = c.interval;
    EXPECT_EQ(seriesDeadline(options), c.expected) << c.interval.count();
  }
  EXPECT_EQ(kMinSeriesDeadline, seconds(5));  // as docs/reliability.md says
}

// A Prometheus whose first series call hangs until the deadline it was given, as a call to a
// Prometheus that accepts connections and never answers does in the real client, and which
// answers every later call.
class HangingOncePrometheus : public prometheus::PrometheusApi {
 public:
  prometheus::QueryResult query(const std::string&, prometheus::Clock::time_point,
                                std::chrono::milliseconds) override {
    return {};
  }
  prometheus::RangeResult queryRange(const std::string&, prometheus::Clock::time_point,
                                     prometheus::Clock::time_point, std::chrono::milliseconds,
                                     std::chrono::milliseconds) override {
    return {};
  }
  void series(const std::string&, prometheus::Clock::time_point, std::chrono::milliseconds timeout,
              const prometheus::SeriesVisitor& visitor) override {
    std::unique_lock lock(mutex_);
    timeouts_.push_back(timeout);
    if (timeouts_.size() == 1) {
      released_.wait_for(lock, timeout, [this] { return release_; });
      throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kTimeout, 0,
                                        "Prometheus did not answer");
    }
    lock.unlock();
    visitor("DCGM_FI_DEV_GPU_UTIL", {"namespace", "pod"});
  }
  // Ends a hang at once (so a failing test does not wait out a long deadline).
  void release() {
    {
      std::lock_guard lock(mutex_);
      release_ = true;
    }
    released_.notify_all();
  }
  std::vector<std::chrono::milliseconds> timeouts() {
    std::lock_guard lock(mutex_);
    return timeouts_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  bool release_ = false;
  std::vector<std::chrono::milliseconds> timeouts_;
};

TEST(RelisterDeadlineTest, AHungSeriesCallEndsAtTheIntervalAndRelistingGoesOn) {
  using std::chrono::milliseconds;
  auto prometheus = std::make_shared<HangingOncePrometheus>();
  RelistOptions options;
  options.interval = milliseconds(200);
  options.min_series_deadline = milliseconds(200);  // the 5 s floor would only slow the test
  Relister relister(ruleSet(kube::RestMapper::builtin().resources(), prometheus), options);
  relister.start();
  // Generous: only a relister that waits on the hung call much longer than its deadline fails.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!relister.snapshot()->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL") &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(relister.snapshot()->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL"))
      << "no relist after the hung call";
  const auto timeouts = prometheus->timeouts();
  ASSERT_FALSE(timeouts.empty());
  EXPECT_EQ(timeouts.front(), milliseconds(200));
  prometheus->release();
  relister.stop();
}

// A backend whose series calls all hang until release() or the deadline they were given.
class HangingPrometheus : public HangingOncePrometheus {
 public:
  void series(const std::string&, prometheus::Clock::time_point, std::chrono::milliseconds timeout,
              const prometheus::SeriesVisitor&) override {
    std::unique_lock lock(mutex_);
    ++calls_;
    released_.wait_for(lock, timeout, [this] { return release_; });
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kTimeout, 0,
                                      "Prometheus did not answer");
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      release_ = true;
    }
    released_.notify_all();
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  bool release_ = false;
  int calls_ = 0;
};

constexpr const char* kTwoBackendRules = R"(
backends:
  gpu: {url: 'http://thanos:10902'}
rules:
- seriesQuery: '{__name__=~"^DCGM_.*"}'
  resources: {template: <<.Resource>>}
  metricsQuery: avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
- seriesQuery: 'inference_gpu_util'
  resources: {template: <<.Resource>>}
  metricsQuery: avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
  backend: gpu
)";

// The rules above with "default" answered by `fine` and "gpu" by `gpu`.
std::shared_ptr<const RuleSet> twoBackendRuleSet(std::shared_ptr<prometheus::PrometheusApi> fine,
                                                 std::shared_ptr<prometheus::PrometheusApi> gpu,
                                                 bool gpu_optional) {
  auto set = std::make_shared<RuleSet>();
  set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  set->rules =
      compileRules(config::parseConfig(kTwoBackendRules, "two.yaml"), *set->mapper, nullptr);
  auto default_backend = std::make_shared<prometheus::Backend>();
  default_backend->name = "default";
  default_backend->api = std::move(fine);
  auto gpu_backend = std::make_shared<prometheus::Backend>();
  gpu_backend->name = "gpu";
  gpu_backend->api = std::move(gpu);
  gpu_backend->optional = gpu_optional;
  set->backends = std::make_shared<const prometheus::BackendSet>(
      std::vector<std::shared_ptr<const prometheus::Backend>>{default_backend, gpu_backend});
  return set;
}

TEST_F(RelisterTest, AHungBackendDelaysOnlyItsOwnRulesAndReadinessWaitsForIt) {
  using std::chrono::milliseconds;
  auto hung = std::make_shared<HangingPrometheus>();
  RelistOptions options;
  options.interval = milliseconds(100);
  options.min_series_deadline = std::chrono::seconds(30);  // the hang outlasts the test
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  Relister relister(twoBackendRuleSet(prometheus_, hung, false), options, metrics);
  relister.start();
  // The healthy backend keeps its 100 ms schedule while the other hangs on its first call.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (prometheus_->seriesCallCount() < 4 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_GE(prometheus_->seriesCallCount(), 4u);
  EXPECT_EQ(hung->calls(), 1);
  EXPECT_TRUE(relister.snapshot()->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_FALSE(relister.firstRunDone()) << "a required backend's first relist has not ended";
  const std::string exposition = metrics->exposition();
  const std::string last_success =
      "metrics_adapter_backend_last_successful_relist_timestamp_seconds";
  EXPECT_NE(exposition.find(last_success + R"({backend="default"})"), std::string::npos);
  EXPECT_EQ(exposition.find(last_success + R"({backend="gpu"})"), std::string::npos);

  hung->release();  // the hung call fails: the first run has ended, readiness follows
  while (!relister.firstRunDone() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(relister.firstRunDone());
  EXPECT_EQ(relister.lastErrors().at({"gpu", "inference_gpu_util"}), "Prometheus did not answer");
  relister.stop();
}

TEST_F(RelisterTest, AfterRunIsCalledOnceARunsSnapshotIsIn) {
  RelistOptions options;
  std::mutex mutex;
  std::vector<bool> served_then;  // whether the run's snapshot was in when after_run ran
  std::shared_ptr<Relister> relister;
  options.after_run = [&] {
    std::lock_guard lock(mutex);
    served_then.push_back(relister->snapshot()->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL") !=
                          nullptr);
  };
  relister = std::make_shared<Relister>(
      ruleSet(kube::RestMapper::builtin().resources(), prometheus_), options);
  relister->start();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < give_up) {
    {
      std::lock_guard lock(mutex);
      if (!served_then.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  relister->stop();
  std::lock_guard lock(mutex);
  EXPECT_EQ(served_then, std::vector<bool>{true});
}

TEST_F(RelisterTest, AnOptionalBackendIsNotWaitedForByReadiness) {
  auto hung = std::make_shared<HangingPrometheus>();
  RelistOptions options;
  options.min_series_deadline = std::chrono::seconds(30);
  Relister relister(twoBackendRuleSet(prometheus_, hung, true), options);
  relister.start();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!relister.firstRunDone() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(relister.firstRunDone());
  EXPECT_TRUE(relister.snapshot()->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL"));
  hung->release();
  relister.stop();
}

}  // namespace
}  // namespace metrics_adapter::discovery
