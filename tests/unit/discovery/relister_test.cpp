#include "metrics_adapter/discovery/relister.h"

#include <gtest/gtest.h>

#include "metrics_adapter/config/config.h"
#include "unit/fake_prometheus.h"

namespace metrics_adapter::discovery {
namespace {

constexpr const char* kRules = R"(
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

std::shared_ptr<const RuleSet> ruleSet(std::vector<kube::ResourceInfo> resources) {
  auto set = std::make_shared<RuleSet>();
  set->mapper = std::make_shared<const kube::RestMapper>(std::move(resources));
  set->rules = compileRules(config::parseConfig(kRules, "r.yaml"), *set->mapper, nullptr);
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
  Relister relister(ruleSet(builtin), prometheus_, RelistOptions{});
  relister.relistOnce();
  auto snapshot = relister.snapshot();
  EXPECT_TRUE(snapshot->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_FALSE(snapshot->findCustom("inferenceservices.serving.kserve.io", "inference_gpu_util"));
  EXPECT_EQ(prometheus_->series_calls.size(), 1u);  // the disabled rule asks nothing

  auto with_crd = builtin;
  with_crd.push_back({"serving.kserve.io", "v1beta1", "InferenceService", "inferenceservices",
                      "inferenceservice", true});
  relister.setRuleSet(ruleSet(with_crd));
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
  Relister relister(ruleSet(with_crd), prometheus_, RelistOptions{});
  prometheus_->failing_selectors["inference_gpu_util"] = "boom";
  relister.relistOnce();
  EXPECT_TRUE(relister.firstRunDone());
  EXPECT_TRUE(relister.snapshot()->findCustom("pods", "DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_EQ(relister.lastErrors().at("inference_gpu_util"), "boom");
  EXPECT_EQ(relister.lastErrors().at("{__name__=~\"^DCGM_.*\"}"), "");
}

}  // namespace
}  // namespace metrics_adapter::discovery
