// Counts the C++ allocations (operator new) of one `pods/*` answer, the HPA's request over 100
// pods, through the adapter's own stages: RequestPipeline (parse, route), the Router, the
// CustomMetricsHandler (registry lookup, object listing, PromQL, rendering) and the
// CoalescingPrometheusApi the adapter puts in front of every backend. The budget is the count
// when it was set (issue 47), exactly: one more allocation per answer fails, and so does one
// less, so that the budget follows each saving down instead of leaving room for the next cost.
//
// Not counted: the fake Prometheus's copy of its answer, which stands in for Prometheus and the
// HTTP client's decoding (bench/query_decode_bench.cpp has that part), and what the server does
// around the pipeline (alloc_discovery counts a whole TLS exchange).
//
// Its own binary, outside the sanitizer build: it replaces the global operator new, which the
// sanitizers' runtimes define themselves.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "metrics_adapter/api/request_pipeline.h"
#include "metrics_adapter/api/router.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/prometheus/coalescing_prometheus_api.h"
#include "metrics_adapter/telemetry/self_metrics.h"
#include "unit/api/fake_name_lister.h"
#include "unit/fake_prometheus.h"

namespace {

std::atomic<long> allocations{0};
std::atomic<bool> counting{false};

// Stops counting for its lifetime (the fake's own work), then goes back to what it was.
class NotCounted {
 public:
  NotCounted() : was_(counting.exchange(false)) {}
  ~NotCounted() { counting = was_; }
  NotCounted(const NotCounted&) = delete;
  NotCounted& operator=(const NotCounted&) = delete;

 private:
  bool was_;
};

}  // namespace

// The other forms of new in libstdc++ (arrays, nothrow, aligned) call this one; the default
// deletes call free(), which matches.
void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
  }
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}

namespace metrics_adapter::api {
namespace {

using testing::FakeNameLister;
using testing::FakePrometheus;
using testing::sample;

// operator new calls per pods/* answer over 100 pods, counted on this tree (issue 47).
constexpr long kBudgetPerAnswer = 85;
constexpr int kPods = 100;
constexpr const char* kPodsTarget =
    "/apis/custom.metrics.k8s.io/v1beta1/namespaces/bench/pods/*/DCGM_FI_DEV_GPU_UTIL"
    "?labelSelector=app%3Dbench";

// The bench's setup (bench/run.py): the dcgm-exporter rules, one GPU series per pod of namespace
// "bench", 100 pods labelled app=bench.
class PodsAllocationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prometheus_ = std::make_shared<FakePrometheus>();
    const config::AdapterConfig config =
        config::loadConfigFile(MA_SOURCE_DIR "/config/gpu-dcgm-exporter.yaml");
    prometheus_->series_by_selector[config.rules.front().series_query] = {
        {"DCGM_FI_DEV_GPU_UTIL", {"Hostname", "UUID", "gpu", "namespace", "pod", "service"}}};
    prometheus::QueryResult answer;
    for (int i = 0; i < kPods; ++i) {
      const std::string pod = "bench-pod-" + std::to_string(i);
      answer.samples.push_back(sample({{"namespace", "bench"}, {"pod", pod}}, i));
      lister_->names.push_back(pod);
    }
    prometheus_->answer = [answer](const std::string&) {
      NotCounted fake;
      return answer;
    };

    auto rule_set = std::make_shared<discovery::RuleSet>();
    rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
    rule_set->backends =
        prometheus::BackendSet::single(std::make_shared<prometheus::CoalescingPrometheusApi>(
            prometheus_, prometheus::CoalescingOptions{}));
    std::vector<std::string> warnings;
    rule_set->rules = discovery::compileRules(config, *rule_set->mapper, &warnings);
    relister_ = std::make_shared<discovery::Relister>(rule_set, discovery::RelistOptions{});
    relister_->relistOnce();

    RouterParts parts;
    parts.snapshots = [relister = relister_] { return relister->snapshot(); };
    parts.custom_metrics = std::make_shared<const CustomMetricsHandler>(parts.snapshots, lister_,
                                                                        CustomMetricsOptions{});
    auto self_metrics = std::make_shared<telemetry::SelfMetrics>();
    pipeline_ = std::make_unique<RequestPipeline>(
        nullptr, std::make_shared<const Router>(std::move(parts)), self_metrics);
    request_.method = "GET";
    request_.target = kPodsTarget;
    request_.remote_address = "127.0.0.1";
  }

  // One answer, checked: 200, one Prometheus query naming the pods. The coalescer serves a query
  // asked again within the same millisecond from the answer it holds; the HPA's requests are
  // seconds apart, so each answer here starts at a millisecond of its own and queries.
  std::string answer() {
    {
      NotCounted wait;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    server::HttpResponse response = pipeline_->handle(request_);
    NotCounted checks;
    EXPECT_EQ(response.status, 200) << response.body;
    EXPECT_EQ(prometheus_->queries.size(), 1u);
    if (!prometheus_->queries.empty()) {
      EXPECT_NE(prometheus_->queries.front().find("bench-pod-99"), std::string::npos);
    }
    prometheus_->queries.clear();  // keeps its capacity: the next answer's record is one string
    return std::move(response.body);
  }

  std::shared_ptr<FakePrometheus> prometheus_;
  std::shared_ptr<FakeNameLister> lister_ = std::make_shared<FakeNameLister>();
  std::shared_ptr<discovery::Relister> relister_;
  std::unique_ptr<RequestPipeline> pipeline_;
  server::HttpRequest request_;
};

TEST_F(PodsAllocationsTest, APodsAnswerOver100PodsMakesExactlyItsBudgetOfAllocations) {
  // The fixture answers what the bench's request asks: one item per pod.
  const std::string first = answer();
  const nlohmann::json list = nlohmann::json::parse(first);
  ASSERT_EQ(list["items"].size(), static_cast<std::size_t>(kPods));
  EXPECT_EQ(list["items"][0]["describedObject"]["name"], "bench-pod-0");
  // What is kept from one request to the next fills up first: the thread's RequestInfo, the
  // self-metrics series of the route.
  for (int i = 0; i < 5; ++i) ASSERT_EQ(answer(), first);

  constexpr int kAnswers = 200;
  counting = true;
  for (int i = 0; i < kAnswers; ++i) ASSERT_EQ(answer(), first);
  counting = false;
  const long counted = allocations.load();
  EXPECT_EQ(counted, kBudgetPerAnswer * kAnswers)
      << "operator new per pods/* answer: " << static_cast<double>(counted) / kAnswers
      << ", budget " << kBudgetPerAnswer
      << " (lower the budget for a saving; an added allocation needs a reason in its change)";
}

}  // namespace
}  // namespace metrics_adapter::api
