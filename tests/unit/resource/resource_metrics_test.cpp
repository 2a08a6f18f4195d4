#include "metrics_adapter/resource/resource_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "unit/fake_prometheus.h"
#include "unit/resource/test_rules.h"

namespace metrics_adapter::resource {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;
using FakePrometheus = metrics_adapter::testing::FakePrometheus;

const prometheus::Clock::time_point kAt =
    prometheus::Clock::time_point(std::chrono::seconds(1714564800));

prometheus::Sample podValue(const std::string& pod, const std::string& container, double value,
                            double timestamp = 1714564790) {
  return prometheus::Sample{{{"pod", pod}, {"container", container}}, value, timestamp};
}

prometheus::QueryResult answerOf(std::vector<prometheus::Sample> samples) {
  prometheus::QueryResult result;
  result.samples = std::move(samples);
  return result;
}

class ResourceMetricsTest : public ::testing::Test {
 protected:
  std::shared_ptr<const discovery::CompiledResourceRules> rules_ = test::compileResourceRules();
  std::shared_ptr<FakePrometheus> prometheus_ = std::make_shared<FakePrometheus>();

  // The query the provider must send for `pods` of `ns`, built by the renderer under test
  // elsewhere (resource_query_test pins its text).
  std::string podQuery(bool memory, const std::string& ns, std::vector<std::string> pods) const {
    return renderPodQuery(memory ? rules_->memory : rules_->cpu, ns, std::move(pods));
  }

  // The fake as the backend every query goes to.
  prometheus::Backend backend() const { return testing::asBackend(prometheus_); }

  ResourceMetrics metrics(ResourceMetricsOptions options = {},
                          std::shared_ptr<telemetry::SelfMetrics> self = nullptr) const {
    return ResourceMetrics(options, std::move(self));
  }
};

// provider_test "should be able to list metrics pods across different namespaces".
TEST_F(ResourceMetricsTest, PodsAcrossNamespaces) {
  std::map<std::string, prometheus::QueryResult> answers = {
      {podQuery(false, "some-ns", {"pod1", "pod3"}),
       answerOf({podValue("pod1", "cont1", 1100.0, 10), podValue("pod1", "cont2", 1110.0, 20),
                 podValue("pod3", "cont1", 1300.0, 10), podValue("pod3", "cont2", 1310.0, 20)})},
      {podQuery(false, "other-ns", {"pod27"}), answerOf({podValue("pod27", "cont1", 2200.0, 270)})},
      {podQuery(true, "some-ns", {"pod1", "pod3"}),
       answerOf({podValue("pod1", "cont1", 3100.0, 11), podValue("pod1", "cont2", 3110.0, 21),
                 podValue("pod3", "cont1", 3300.0, 11), podValue("pod3", "cont2", 3310.0, 21)})},
      {podQuery(true, "other-ns", {"pod27"}), answerOf({podValue("pod27", "cont1", 4200.0, 271)})},
  };
  prometheus_->answer = [&answers](const std::string& promql) { return answers.at(promql); };

  const PodMetricsResult result = metrics().podMetrics(
      backend(), *rules_, {{"some-ns", "pod3"}, {"other-ns", "pod27"}, {"some-ns", "pod1"}}, kAt);

  EXPECT_THAT(result.failures, IsEmpty());
  EXPECT_THAT(result.omitted, IsEmpty());
  ASSERT_EQ(result.pods.size(), 3U);
  EXPECT_EQ(result.pods[0].name, "pod3");  // in the order asked
  EXPECT_EQ(result.pods[1].name, "pod27");
  EXPECT_EQ(result.pods[1].namespace_name, "other-ns");
  EXPECT_EQ(result.pods[1].timestamp, 270);
  EXPECT_THAT(result.pods[1].containers, ElementsAre(ContainerUsage{"cont1", 2200000000000, 4200}));
  EXPECT_EQ(result.pods[2].name, "pod1");
  EXPECT_EQ(result.pods[2].timestamp, 10);
  EXPECT_THAT(result.pods[2].containers, ElementsAre(ContainerUsage{"cont1", 1100000000000, 3100},
                                                     ContainerUsage{"cont2", 1110000000000, 3110}));
  std::vector<std::string> expected_queries;
  expected_queries.reserve(answers.size());
  for (const auto& [query, answer] : answers) expected_queries.push_back(query);
  EXPECT_THAT(prometheus_->queries, UnorderedElementsAreArray(expected_queries));
}

TEST_F(ResourceMetricsTest, NoPodsNoQueries) {
  const PodMetricsResult result = metrics().podMetrics(backend(), *rules_, {}, kAt);
  EXPECT_THAT(result.pods, IsEmpty());
  EXPECT_THAT(prometheus_->queries, IsEmpty());
  EXPECT_THAT(metrics().nodeMetrics(backend(), *rules_, {}, kAt).nodes, IsEmpty());
  EXPECT_THAT(prometheus_->queries, IsEmpty());
}

TEST_F(ResourceMetricsTest, PodAskedTwiceIsServedOnce) {
  prometheus_->answer = [](const std::string&) { return answerOf({podValue("p", "c", 1)}); };
  const PodMetricsResult result =
      metrics().podMetrics(backend(), *rules_, {{"ns", "p"}, {"ns", "p"}}, kAt);
  ASSERT_EQ(result.pods.size(), 1U);
  EXPECT_THAT(prometheus_->queries, UnorderedElementsAreArray({podQuery(false, "ns", {"p"}),
                                                               podQuery(true, "ns", {"p"})}));
}

TEST_F(ResourceMetricsTest, FailingNamespaceDoesNotHideTheOthers) {
  const std::string failing = podQuery(true, "broken", {"b"});
  prometheus_->answer = [&failing](const std::string& promql) {
    if (promql == failing) {
      throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                        "connection refused");
    }
    return answerOf({podValue("a", "c", 1), podValue("b", "c", 1)});
  };
  const PodMetricsResult result =
      metrics().podMetrics(backend(), *rules_, {{"broken", "b"}, {"fine", "a"}}, kAt);
  ASSERT_EQ(result.pods.size(), 1U);
  EXPECT_EQ(result.pods[0].namespace_name, "fine");
  ASSERT_EQ(result.failures.size(), 1U);
  const NamespaceFailure& failure = result.failures[0];
  EXPECT_EQ(failure.namespace_name, "broken");
  EXPECT_EQ(failure.error.query(), failing);
  EXPECT_THAT(failure.error.what(), HasSubstr("containerQuery of resourceRules.memory failed: "
                                              "connection refused (query: " +
                                              failing + ")"));
  ASSERT_NE(failure.error.cause(), nullptr);
  try {
    std::rethrow_exception(failure.error.cause());
  } catch (const prometheus::PrometheusError& e) {
    EXPECT_EQ(e.kind(), prometheus::PrometheusError::Kind::kUnreachable);
  } catch (...) {
    ADD_FAILURE() << "the cause is not the PrometheusError";
  }
}

TEST_F(ResourceMetricsTest, NonVectorAnswerFailsTheNamespace) {
  prometheus_->answer = [](const std::string&) {
    prometheus::QueryResult scalar;
    scalar.type = prometheus::QueryResult::Type::kScalar;
    scalar.samples = {prometheus::Sample{{}, 1, 1}};
    return scalar;
  };
  const PodMetricsResult result = metrics().podMetrics(backend(), *rules_, {{"ns", "p"}}, kAt);
  EXPECT_THAT(result.pods, IsEmpty());
  ASSERT_EQ(result.failures.size(), 1U);
  EXPECT_THAT(
      result.failures[0].error.what(),
      HasSubstr("containerQuery of resourceRules.cpu answered a scalar, not an instant vector"));
  EXPECT_EQ(result.failures[0].error.query(), podQuery(false, "ns", {"p"}));
}

TEST_F(ResourceMetricsTest, BadValuesAreOmittedLoggedAndCounted) {
  prometheus_->answer = [](const std::string& promql) {
    const bool cpu = promql.find("cpu") != std::string::npos;
    return answerOf({podValue("good", "c", 1), podValue("nan", "c", cpu ? NAN : 1),
                     podValue("negative", "c", cpu ? 1 : -5)});
  };
  auto self = std::make_shared<telemetry::SelfMetrics>();
  const PodMetricsResult result = metrics({}, self).podMetrics(
      backend(), *rules_, {{"ns", "good"}, {"ns", "nan"}, {"ns", "negative"}, {"ns", "new"}}, kAt);
  ASSERT_EQ(result.pods.size(), 1U);
  EXPECT_EQ(result.pods[0].name, "good");
  ASSERT_EQ(result.omitted.size(), 3U);
  const std::string exposition = self->exposition();
  EXPECT_THAT(exposition,
              HasSubstr("metrics_adapter_resource_metrics_omitted_total{reason=\"bad_value\","
                        "resource=\"pods\"} 2"));
  EXPECT_THAT(exposition,
              HasSubstr("metrics_adapter_resource_metrics_omitted_total{reason=\"no_data\","
                        "resource=\"pods\"} 1"));
}

// A fake Prometheus that holds each query for a while and records how many ran at once.
struct ConcurrencyProbe {
  std::atomic<int> running{0};
  std::atomic<int> most{0};

  prometheus::QueryResult answer() {
    const int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --running;
    return answerOf({podValue("p", "c", 1)});
  }
};

struct BoundCase {
  std::size_t limit;
  std::size_t namespaces;
};

class BoundedConcurrencyTest : public ResourceMetricsTest,
                               public ::testing::WithParamInterface<BoundCase> {};

TEST_P(BoundedConcurrencyTest, NeverMoreQueriesAtOnceThanTheLimit) {
  ConcurrencyProbe probe;
  prometheus_->answer = [&probe](const std::string&) { return probe.answer(); };
  std::vector<PodRef> pods;
  pods.reserve(GetParam().namespaces);
  for (std::size_t i = 0; i < GetParam().namespaces; ++i) {
    pods.push_back({"ns-" + std::to_string(i), "p"});
  }
  ResourceMetricsOptions options;
  options.max_concurrent_queries = GetParam().limit;
  const PodMetricsResult result = metrics(options).podMetrics(backend(), *rules_, pods, kAt);
  EXPECT_EQ(result.pods.size(), GetParam().namespaces);
  EXPECT_EQ(prometheus_->queries.size(), 2 * GetParam().namespaces);
  EXPECT_LE(probe.most.load(), static_cast<int>(std::max<std::size_t>(GetParam().limit, 1)));
  EXPECT_GE(probe.most.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Limits, BoundedConcurrencyTest,
                         ::testing::Values(BoundCase{1, 10}, BoundCase{3, 40}, BoundCase{8, 2},
                                           BoundCase{0, 3}, BoundCase{64, 5}));

TEST_F(ResourceMetricsTest, QueriesRunInParallelUpToTheLimit) {
  ConcurrencyProbe probe;
  // Each query waits until four run at once (or a second passes), so the test fails, rather
  // than hangs, if the provider ran them one by one.
  prometheus_->answer = [&probe](const std::string&) {
    const int now = ++probe.running;
    int seen = probe.most.load();
    while (now > seen && !probe.most.compare_exchange_weak(seen, now)) {
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (probe.most.load() < 4 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    --probe.running;
    return answerOf({podValue("p", "c", 1)});
  };
  std::vector<PodRef> pods;
  pods.reserve(10);
  for (int i = 0; i < 10; ++i) pods.push_back({"ns-" + std::to_string(i), "p"});
  ResourceMetricsOptions options;
  options.max_concurrent_queries = 4;
  const PodMetricsResult result = metrics(options).podMetrics(backend(), *rules_, pods, kAt);
  EXPECT_EQ(result.pods.size(), 10U);
  EXPECT_EQ(probe.most.load(), 4);
}

TEST_F(ResourceMetricsTest, NodesAsUpstream) {
  prometheus_->answer = [](const std::string& promql) {
    const bool cpu = promql.find("cpu") != std::string::npos;
    return answerOf({prometheus::Sample{{{"instance", "node1"}}, cpu ? 1100.0 : 2100.0, 10},
                     prometheus::Sample{{{"instance", "node2"}}, cpu ? 1200.0 : 2200.0, 12}});
  };
  const NodeMetricsResult result =
      metrics().nodeMetrics(backend(), *rules_, {"node2", "node3", "node1"}, kAt);
  ASSERT_EQ(result.nodes.size(), 2U);
  EXPECT_EQ(result.nodes[0].name, "node2");  // in the order asked
  EXPECT_EQ(result.nodes[0].cpu_nanocores, 1200000000000);
  EXPECT_EQ(result.nodes[0].memory_bytes, 2200);
  EXPECT_EQ(result.nodes[1].name, "node1");
  ASSERT_EQ(result.omitted.size(), 1U);
  EXPECT_EQ(result.omitted[0].name, "node3");
  EXPECT_THAT(
      prometheus_->queries,
      UnorderedElementsAreArray({renderNodeQuery(rules_->cpu, {"node1", "node2", "node3"}),
                                 renderNodeQuery(rules_->memory, {"node1", "node2", "node3"})}));
}

TEST_F(ResourceMetricsTest, FailingNodeQueryIsAnErrorNamingIt) {
  const std::string failing = renderNodeQuery(rules_->cpu, {"n"});
  prometheus_->answer = [&failing](const std::string& promql) {
    if (promql == failing) {
      throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kApiError, 422,
                                        "bad_data: parse error");
    }
    return answerOf({prometheus::Sample{{{"instance", "n"}}, 1, 1}});
  };
  try {
    metrics().nodeMetrics(backend(), *rules_, {"n"}, kAt);
    FAIL() << "no error";
  } catch (const ResourceQueryError& e) {
    EXPECT_EQ(e.query(), failing);
    EXPECT_THAT(e.what(),
                HasSubstr("nodeQuery of resourceRules.cpu failed: bad_data: parse error"));
    EXPECT_NE(e.cause(), nullptr);
  }
}

}  // namespace
}  // namespace metrics_adapter::resource
