#include "cli/doctor/doctor_scale_to_zero.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "unit/fake_prometheus.h"

namespace metrics_adapter::cli {
namespace {

using ::testing::HasSubstr;
using testing::sample;

TEST(PodOfTargetTest, NamesTheControllersPodsOnly) {
  const hpa::ObjectRef deployment{"apps/v1", "Deployment", "vllm-llama"};
  const hpa::ObjectRef statefulset{"apps/v1", "StatefulSet", "vllm-llama"};
  struct Case {
    hpa::ObjectRef target;
    std::string pod;
    bool mine;
  };
  const std::vector<Case> cases = {
      {deployment, "vllm-llama-5f6d7c8b9-abcde", true},
      {deployment, "vllm-llama-7d4b9c8f6-x2z9q", true},
      {deployment, "vllm-llama-gateway-5f6d7c8b9-abcde", false},  // another Deployment's
      {deployment, "vllm-llama-0", false},
      {deployment, "vllm-llama-5f6d7c8b9-ABCDE", false},
      {deployment, "gateway-epp-5f6d7c8b9-abcde", false},
      {deployment, "running-now", true},  // a pod the selector selects, whatever its name
      {statefulset, "vllm-llama-0", true},
      {statefulset, "vllm-llama-12", true},
      {statefulset, "vllm-llama-5f6d7c8b9-abcde", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(podOfTarget(c.target, {"running-now"}, c.pod), c.mine)
        << c.target.kind << " " << c.pod;
  }
}

TEST(ClassifyOriginTest, TheTargetsPodsOnlyOrAnythingElse) {
  const hpa::ObjectRef target{"apps/v1", "Deployment", "vllm"};
  using Source = SeriesOrigin::Source;
  struct Case {
    std::vector<prometheus::Sample> samples;
    Source source;
    std::vector<std::string> mine;
    std::vector<std::string> others;
  };
  const std::vector<Case> cases = {
      {{}, Source::kNone, {}, {}},
      {{sample({{"pod", "vllm-6d5f4-aaaaa"}}, 1), sample({{"pod", "vllm-6d5f4-bbbbb"}}, 1)},
       Source::kTargetPods,
       {"vllm-6d5f4-aaaaa", "vllm-6d5f4-bbbbb"},
       {}},
      // The pod the series is about wins over the scraped exporter's.
      {{sample({{"pod", "dcgm-exporter-x1y2z"}, {"exported_pod", "vllm-6d5f4-aaaaa"}}, 1)},
       Source::kTargetPods,
       {"vllm-6d5f4-aaaaa"},
       {}},
      {{sample({{"pod", "vllm-6d5f4-aaaaa"}}, 1), sample({{"pod", "epp-6d5f4-ccccc"}}, 1)},
       Source::kElsewhere,
       {"vllm-6d5f4-aaaaa"},
       {"epp-6d5f4-ccccc"}},
      {{sample({}, 2)}, Source::kElsewhere, {}, {""}},  // no pod label at all
  };
  for (const auto& c : cases) {
    const SeriesOrigin origin = classifyOrigin(c.samples, target, {});
    EXPECT_EQ(origin.source, c.source);
    EXPECT_EQ(origin.target_pods, c.mine);
    EXPECT_EQ(origin.other_pods, c.others);
  }
}

// The trap rule of issue 45 (an External sum of a series vLLM's pods export) and, in the second
// config, the llm-d gateway's queue rule beside it.
constexpr const char* kVllmSum = R"(
externalRules:
- seriesQuery: '{__name__="vllm:num_requests_waiting",namespace!=""}'
  resources: {overrides: {namespace: {resource: namespace}}}
  name: {matches: "^vllm:(.*)$", as: "vllm_${1}_sum"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
)";
constexpr const char* kGatewayQueue = R"(
- seriesQuery: '{__name__=~"inference_extension_flow_control_queue_size|llm_d_epp_flow_control_queue_size",namespace!="",inference_pool!=""}'
  resources: {overrides: {namespace: {resource: namespace}}}
  name:
    matches: ^(inference_extension|llm_d_epp)_flow_control_queue_size$
    as: inference_pool_flow_control_queue_size
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (inference_pool)
)";

class ScaleToZeroTest : public ::testing::Test {
 protected:
  // `samples`: what the history query answers.
  void load(const std::string& rules, std::vector<prometheus::Sample> samples) {
    prometheus_ = std::make_shared<testing::FakePrometheus>();
    prometheus_->answer = [samples](const std::string&) {
      prometheus::QueryResult result;
      result.samples = samples;
      return result;
    };
    auto set = std::make_shared<discovery::RuleSet>();
    set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
    set->backends = prometheus::BackendSet::single(prometheus_);
    set->rules =
        discovery::compileRules(config::parseConfig(rules, "r.yaml"), *set->mapper, nullptr);
    run_.rule_set = set;
    run_.snapshot = std::make_shared<const discovery::RegistrySnapshot>(set);  // declared only
    context_.run = &run_;
  }

  // An HPA on `metric` of Deployment vllm in namespace ml, its target at `replicas`.
  HpaDiagnosis diagnosis(const std::string& metric, std::int32_t min_replicas,
                         std::int32_t replicas, bool has_value) {
    HpaDiagnosis diagnosis;
    diagnosis.hpa.namespace_name = "ml";
    diagnosis.hpa.name = "vllm";
    diagnosis.hpa.scale_target = {"apps/v1", "Deployment", "vllm"};
    diagnosis.hpa.min_replicas = min_replicas;
    diagnosis.hpa.max_replicas = 8;
    diagnosis.scale = TargetScale{replicas, replicas, "app=vllm"};
    MetricDiagnosis entry;
    entry.spec.type = "External";
    entry.spec.name = metric;
    entry.has_value = has_value;
    if (const auto* served = run_.snapshot->findExternal(metric)) {
      entry.series = served->series_name;
      entry.served_by = served->rule;
      entry.rule = served->rule->id;
    }
    diagnosis.metrics.push_back(entry);
    return diagnosis;
  }

  std::shared_ptr<testing::FakePrometheus> prometheus_;
  DiscoveryRun run_;
  DoctorContext context_;
};

TEST_F(ScaleToZeroTest, AMetricOnlyTheScaledPodsExportIsTheTrapCauseFirst) {
  load(kVllmSum,
       {sample({{"pod", "vllm-6d5f4-aaaaa"}}, 1), sample({{"pod", "vllm-6d5f4-bbbbb"}}, 1)});
  HpaDiagnosis at_zero = diagnosis("vllm_num_requests_waiting_sum", 0, 0, false);
  checkScaleToZero({}, context_, at_zero);
  ASSERT_EQ(prometheus_->queries.size(), 1u);
  EXPECT_EQ(prometheus_->queries[0],
            "count by (exported_pod, pod, pod_name, kubernetes_pod_name) (last_over_time("
            "{__name__=\"vllm:num_requests_waiting\",namespace=\"ml\"}[24h]))");
  EXPECT_TRUE(at_zero.may_sit_at_zero);
  EXPECT_TRUE(at_zero.metrics[0].empty_at_zero);
  EXPECT_THAT(at_zero.zero_cause,
              HasSubstr("spec.metrics[0] (External vllm_num_requests_waiting_sum) cannot bring "
                        "Deployment/vllm back from 0 replicas, where it sits now"));
  EXPECT_THAT(at_zero.zero_cause,
              HasSubstr("its series vllm:num_requests_waiting (externalRules[0]) come only from "
                        "the Deployment's own pods (vllm-6d5f4-aaaaa, vllm-6d5f4-bbbbb)"));
  EXPECT_THAT(at_zero.zero_cause, HasSubstr("FailedGetExternalMetric"));
  EXPECT_THAT(at_zero.zero_fix, HasSubstr("External inference_pool_flow_control_queue_size"));
  EXPECT_THAT(at_zero.zero_fix, HasSubstr("add config/llm-d-epp.yaml's externalRule"));
  EXPECT_THAT(at_zero.zero_fix, HasSubstr("minReplicas: 1"));

  // Still running: the same trap, ahead of time.
  HpaDiagnosis running = diagnosis("vllm_num_requests_waiting_sum", 0, 2, true);
  checkScaleToZero({}, context_, running);
  EXPECT_THAT(running.zero_cause, HasSubstr("back from 0 replicas once it scales there"));
}

TEST_F(ScaleToZeroTest, AGatewayQueueWakesTheTargetAndIsHealthyAtZero) {
  load(std::string(kVllmSum) + kGatewayQueue,
       {sample({{"pod", "gateway-epp-6d5f4-ccccc"}, {"inference_pool", "vllm-pool"}}, 1)});
  HpaDiagnosis gateway = diagnosis("inference_pool_flow_control_queue_size", 0, 0, true);
  checkScaleToZero({}, context_, gateway);
  EXPECT_EQ(gateway.zero_cause, "");
  EXPECT_FALSE(gateway.metrics[0].empty_at_zero);
  EXPECT_THAT(gateway.metrics[0].at_zero,
              HasSubstr("has series: its series "
                        "inference_extension_flow_control_queue_size (externalRules[1]) come "
                        "from outside the scale target (gateway-epp-6d5f4-ccccc)"));

  // With the gateway's rule in the config, the trap's fix names that rule.
  load(std::string(kVllmSum) + kGatewayQueue, {sample({{"pod", "vllm-6d5f4-aaaaa"}}, 1)});
  HpaDiagnosis trapped = diagnosis("vllm_num_requests_waiting_sum", 0, 0, false);
  checkScaleToZero({}, context_, trapped);
  EXPECT_THAT(trapped.zero_fix, HasSubstr("externalRules[1] of the adapter's config serves it"));
}

TEST_F(ScaleToZeroTest, NoHistoryAndNoValueAtZeroIsATrapToo) {
  load(kVllmSum, {});
  HpaDiagnosis at_zero = diagnosis("vllm_num_requests_waiting_sum", 0, 0, false);
  checkScaleToZero({}, context_, at_zero);
  EXPECT_THAT(at_zero.zero_cause, HasSubstr("no series of vllm:num_requests_waiting "
                                            "(externalRules[0]) now nor in the last 24 h"));
}

TEST_F(ScaleToZeroTest, TargetsAtZeroWithoutScaleToZeroAndHpasTheApiRefuses) {
  load(kVllmSum, {});
  HpaDiagnosis disabled = diagnosis("vllm_num_requests_waiting_sum", 1, 0, false);
  checkScaleToZero({}, context_, disabled);
  EXPECT_THAT(disabled.zero_cause,
              HasSubstr("Deployment/vllm is at 0 replicas and minReplicas is 1: the HPA "
                        "controller does not scale a target someone set to 0 (ScalingActive "
                        "False, ScalingDisabled"));
  EXPECT_TRUE(prometheus_->queries.empty());

  HpaDiagnosis pods_only = diagnosis("vllm_num_requests_waiting", 0, 1, true);
  pods_only.metrics[0].spec.type = "Pods";
  checkScaleToZero({}, context_, pods_only);
  EXPECT_THAT(pods_only.zero_cause, HasSubstr("minReplicas: 0 needs an Object or External metric"));

  HpaDiagnosis not_at_zero = diagnosis("vllm_num_requests_waiting_sum", 1, 2, true);
  checkScaleToZero({}, context_, not_at_zero);
  EXPECT_FALSE(not_at_zero.may_sit_at_zero);
  EXPECT_EQ(not_at_zero.zero_cause, "");
}

}  // namespace
}  // namespace metrics_adapter::cli
