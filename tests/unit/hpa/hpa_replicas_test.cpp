#include "metrics_adapter/hpa/hpa_replicas.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/hpa/hpa_object.h"

namespace metrics_adapter::hpa {
namespace {

std::vector<HpaPod> runningReadyPods(const std::vector<std::string>& names) {
  std::vector<HpaPod> pods;
  for (const auto& name : names) pods.push_back({name, "Running", false, true});
  return pods;
}

struct PodsReplicaCase {
  const char* name;
  std::int32_t current;
  std::int64_t target;
  std::map<std::string, std::int64_t> values;
  std::vector<HpaPod> pods;
  std::optional<std::int32_t> replicas;
};

class PodsReplicaTest : public ::testing::TestWithParam<PodsReplicaCase> {};

TEST_P(PodsReplicaTest, AsTheControllerComputesIt) {
  const auto& c = GetParam();
  EXPECT_EQ(podsMetricReplicas(c.current, c.target, c.values, c.pods).replicas, c.replicas)
      << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, PodsReplicaTest,
    ::testing::Values(
        // (37500+82250+15000)/3 = 44916 (integer average); 44916/40000 = 1.12 > 1.1:
        // ceil(1.1229 * 3) = 4.
        PodsReplicaCase{"scale up",
                        3,
                        40000,
                        {{"a", 37500}, {"b", 82250}, {"c", 15000}},
                        runningReadyPods({"a", "b", "c"}),
                        4},
        // 42000/40000 = 1.05: within the tolerance, no change.
        PodsReplicaCase{"within tolerance",
                        3,
                        40000,
                        {{"a", 42000}, {"b", 42000}},
                        runningReadyPods({"a", "b"}),
                        3},
        // A missing pod counts as 0 on a scale-up: 91500/40000 = 2.29 -> (91500+0)/2 = 45750,
        // ratio 1.14 -> ceil(1.14 * 2) = 3.
        PodsReplicaCase{
            "missing pod on a scale-up", 2, 40000, {{"a", 91500}}, runningReadyPods({"a", "b"}), 3},
        // A missing pod counts as the target on a scale-down: 10000 -> (10000+40000)/2 = 25000,
        // ratio 0.625 -> ceil(0.625 * 2) = 2.
        PodsReplicaCase{"missing pod on a scale-down",
                        4,
                        40000,
                        {{"a", 10000}},
                        runningReadyPods({"a", "b"}),
                        2},
        // Counting the missing pod flips a scale-up into a scale-down: keep the current count.
        PodsReplicaCase{
            "direction flip", 3, 40000, {{"a", 50000}}, runningReadyPods({"a", "b", "c"}), 3},
        // A Pending pod's value is left out; on a scale-up it counts as 0: (80000+0)/2 = 40000,
        // ratio 1.0 -> no change.
        PodsReplicaCase{"pending pod on a scale-up",
                        2,
                        40000,
                        {{"a", 80000}, {"p", 99000}},
                        {{"a", "Running", false, true}, {"p", "Pending", false, false}},
                        2},
        // A Failed pod's value is dropped: 80000/40000 = 2 -> ceil(2 * 1) = 2.
        PodsReplicaCase{"failed pod ignored",
                        1,
                        40000,
                        {{"a", 80000}, {"f", 0}},
                        {{"a", "Running", false, true}, {"f", "Failed", false, false}},
                        2},
        PodsReplicaCase{
            "no value at all", 2, 40000, {}, runningReadyPods({"a", "b"}), std::nullopt},
        PodsReplicaCase{"no pods", 2, 40000, {{"a", 1}}, {}, std::nullopt}),
    [](const auto& info) {
      std::string name = info.param.name;
      for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

TEST(ValueMetricReplicasTest, RatioTimesReadyPodsOutsideTheTolerance) {
  // 3000/2000 = 1.5 with 3 ready pods: ceil(4.5) = 5.
  EXPECT_EQ(valueMetricReplicas(3, 3000, 2000, 3).replicas, 5);
  EXPECT_EQ(valueMetricReplicas(3, 2100, 2000, 3).replicas, 3);
  // Scaled to zero: ceil(ratio) pods.
  EXPECT_EQ(valueMetricReplicas(0, 3000, 2000, 0).replicas, 2);
  EXPECT_FALSE(valueMetricReplicas(3, 3000, 2000, 0).replicas.has_value());
}

TEST(AverageValueMetricReplicasTest, UsagePerTargetUnlessWithinTolerance) {
  // 10000 over 4 pods against 2000 each: ratio 1.25 -> ceil(10000/2000) = 5.
  EXPECT_EQ(averageValueMetricReplicas(4, 10000, 2000).replicas, 5);
  EXPECT_EQ(averageValueMetricReplicas(5, 10500, 2000).replicas, 5);
}

// At 0 replicas the controller's ratio divides by 0 pods: NaN for no usage (no tolerance
// matches it, the count stays 0), +Inf otherwise (ceil(usage / target)). The doctor printed the
// NaN as "ratio -nan"; it now computes the same counts without one.
TEST(AverageValueMetricReplicasTest, AtZeroReplicasUsageOverTargetWithoutANanRatio) {
  struct Case {
    std::int64_t usage_milli;
    std::int32_t replicas;
  };
  for (const Case& c : std::vector<Case>{{0, 0}, {1, 1}, {6000, 6}, {6500, 7}}) {
    const ReplicaProposal proposal = averageValueMetricReplicas(0, c.usage_milli, 1000);
    EXPECT_EQ(proposal.replicas, c.replicas) << c.usage_milli;
    EXPECT_TRUE(proposal.from_zero);
    EXPECT_TRUE(std::isfinite(proposal.ratio)) << c.usage_milli;
    EXPECT_DOUBLE_EQ(proposal.ratio, c.usage_milli / 1000.0);
  }
  EXPECT_FALSE(averageValueMetricReplicas(4, 10000, 2000).from_zero);
}

TEST(ClampReplicasTest, WithinMinAndMax) {
  EXPECT_EQ(clampReplicas(12, 1, 10), 10);
  EXPECT_EQ(clampReplicas(0, 2, 10), 2);
  EXPECT_EQ(clampReplicas(4, 1, 10), 4);
}

TEST(HpaObjectTest, ReadsEveryMetricTypeAndTheStatus) {
  const auto documents = yamlDocumentsToJson(R"(
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics:
  - type: Pods
    pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: 500m}}
  - type: Object
    object:
      describedObject: {apiVersion: v1, kind: Service, name: web}
      metric: {name: hits}
      target: {type: Value, value: "2k"}
  - type: External
    external:
      metric:
        name: queue
        selector:
          matchLabels: {queue: jobs}
          matchExpressions: [{key: env, operator: In, values: [prod, canary]}]
      target: {type: AverageValue, averageValue: 30}
status: {currentReplicas: 2, desiredReplicas: 3}
)");
  ASSERT_EQ(documents.size(), 1U);
  const Hpa hpa = parseHpa(documents[0], "team-a");
  EXPECT_EQ(hpa.namespace_name, "team-a");
  EXPECT_EQ(hpa.min_replicas, 1);  // the API's default
  EXPECT_EQ(hpa.max_replicas, 10);
  ASSERT_EQ(hpa.metrics.size(), 3U);
  EXPECT_EQ(hpa.metrics[0].target_milli, 500);
  EXPECT_EQ(hpa.metrics[1].described.kind, "Service");
  EXPECT_EQ(hpa.metrics[1].target_milli, 2000000);
  EXPECT_EQ(hpa.metrics[2].selector, "env in (canary,prod),queue=jobs");
  EXPECT_EQ(hpa.metrics[2].target_milli, 30000);
  EXPECT_EQ(hpa.desired_replicas, 3);
}

TEST(HpaObjectTest, ReadsUtilizationTargetsAndTheStabilizationWindows) {
  const auto documents = yamlDocumentsToJson(R"(
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  maxReplicas: 10
  behavior: {scaleDown: {stabilizationWindowSeconds: 120}}
  metrics:
  - type: ContainerResource
    containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 70}}
)");
  const Hpa hpa = parseHpa(documents.at(0), "default");
  ASSERT_EQ(hpa.metrics.size(), 1U);
  EXPECT_EQ(hpa.metrics[0].container, "app");
  EXPECT_EQ(hpa.metrics[0].target_percent, 70);
  EXPECT_EQ(hpa.scale_down_window_seconds, 120);
  EXPECT_EQ(hpa.scale_up_window_seconds, 0);  // the controller's default
  const auto zero = yamlDocumentsToJson(R"(
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}
)");
  EXPECT_THROW(parseHpa(zero.at(0), "default"), HpaError);
}

TEST(HpaObjectTest, RefusesWhatIsNoV2Hpa) {
  EXPECT_THROW(parseHpa(nlohmann::json{{"kind", "Deployment"}}, "default"), HpaError);
  const auto bad_target = yamlDocumentsToJson(
      "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nspec:\n  metrics:\n"
      "  - {type: Pods, pods: {metric: {name: x}, target: {type: AverageValue, "
      "averageValue: lots}}}\n");
  EXPECT_THROW(parseHpa(bad_target.at(0), "default"), HpaError);
}

// Pods with one container "app" requesting `request_milli` of cpu, Running and ready.
std::vector<HpaPod> podsRequesting(const std::vector<std::string>& names,
                                   std::int64_t request_milli) {
  std::vector<HpaPod> pods = runningReadyPods(names);
  for (auto& pod : pods) pod.containers = {{"app", {{"cpu", request_milli}}}};
  return pods;
}

struct UtilizationCase {
  const char* name;
  std::int32_t current;
  std::int32_t target_percent;
  std::map<std::string, std::int64_t> values;
  std::vector<HpaPod> pods;
  std::optional<std::int32_t> replicas;
  std::optional<std::int32_t> utilization;
};

class UtilizationReplicaTest : public ::testing::TestWithParam<UtilizationCase> {};

TEST_P(UtilizationReplicaTest, AsTheControllerComputesIt) {
  const auto& c = GetParam();
  const ReplicaProposal proposal =
      utilizationReplicas(c.current, c.target_percent, c.values, c.pods, "cpu", "");
  EXPECT_EQ(proposal.replicas, c.replicas) << c.name << ": " << proposal.error;
  EXPECT_EQ(proposal.utilization, c.utilization) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, UtilizationReplicaTest,
    ::testing::Values(
        // (300+500)*100/(250+250) = 160 %; 160/80 = 2.0 -> ceil(2.0 * 2) = 4.
        UtilizationCase{
            "scale up", 2, 80, {{"a", 300}, {"b", 500}}, podsRequesting({"a", "b"}, 250), 4, 160},
        // 210*100/250 = 84 %; 84/80 = 1.05: within the tolerance.
        UtilizationCase{"within tolerance",
                        2,
                        80,
                        {{"a", 210}, {"b", 210}},
                        podsRequesting({"a", "b"}, 250),
                        2,
                        84},
        // The utilization is truncated to whole percent before the ratio: 200.5 % -> 200 %,
        // ceil(2.0 * 1) = 2 (2.005 would give 3).
        UtilizationCase{
            "whole percent", 1, 100, {{"a", 2005}}, podsRequesting({"a"}, 1000), 2, 200},
        // A missing pod counts as at its request on a scale-down: 50 % first, then
        // (125+250)*100/500 = 75 %, 75/80 within the tolerance -> no change.
        UtilizationCase{"missing pod at its request on a scale-down",
                        2,
                        80,
                        {{"a", 125}},
                        podsRequesting({"a", "b"}, 250),
                        2,
                        50},
        // A not-ready Running pod is unready for cpu: left out, and 0 on a scale-up.
        // a: 400*100/250 = 160 %; with b at 0: 80 %, ratio 1.0 -> no change.
        UtilizationCase{"unready pod on a scale-up",
                        2,
                        80,
                        {{"a", 400}, {"b", 400}},
                        [] {
                          auto pods = podsRequesting({"a", "b"}, 250);
                          pods[1].ready = false;
                          return pods;
                        }(),
                        2,
                        160},
        UtilizationCase{"no pods", 2, 80, {}, {}, std::nullopt, std::nullopt}),
    [](const auto& info) {
      std::string name = info.param.name;
      for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

TEST(PodRequestsTest, SumsTheContainersOrTheNamedOne) {
  std::vector<HpaPod> pods = runningReadyPods({"web-1"});
  pods[0].containers = {{"app", {{"cpu", 200}}}, {"sidecar", {{"cpu", 50}}}};
  EXPECT_EQ(podRequests(pods, "cpu", "").milli.at("web-1"), 250);
  EXPECT_EQ(podRequests(pods, "cpu", "sidecar").milli.at("web-1"), 50);
  // The controller's own message, which kubectl describe hpa shows.
  EXPECT_EQ(podRequests(pods, "memory", "").error,
            "missing request for memory in container app of Pod web-1");
  pods[0].containers[1].requests_milli.clear();
  EXPECT_EQ(podRequests(pods, "cpu", "app").milli.at("web-1"), 200);
  EXPECT_EQ(podRequests(pods, "cpu", "").error,
            "missing request for cpu in container sidecar of Pod web-1");
}

TEST(UtilizationReplicasTest, AMissingRequestIsTheControllersError) {
  std::vector<HpaPod> pods = podsRequesting({"a", "b"}, 250);
  pods[1].containers[0].requests_milli.clear();
  const ReplicaProposal proposal =
      utilizationReplicas(2, 80, {{"a", 100}, {"b", 100}}, pods, "cpu", "");
  EXPECT_FALSE(proposal.replicas);
  EXPECT_EQ(proposal.error, "missing request for cpu in container app of Pod b");
}

}  // namespace
}  // namespace metrics_adapter::hpa
