#include "discovery/findings_builder.h"

#include <gtest/gtest.h>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/kube/rest_mapper.h"

namespace metrics_adapter::discovery {
namespace {

constexpr const char* kRules = R"(
rules:
- seriesQuery: '{__name__=~"^gpu_.*"}'
  resources:
    template: <<.Resource>>
  metricsQuery: avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
)";

std::shared_ptr<const CompiledRule> gpuRule(const kube::RestMapper& mapper) {
  return compileRules(config::parseConfig(kRules, "r.yaml"), mapper, nullptr).at(0);
}

TEST(FindingsBuilderTest, SeriesPastTheNameBoundAreCountedNotKept) {
  const kube::RestMapper mapper = kube::RestMapper::builtin();
  auto rule = gpuRule(mapper);
  FindingsBuilder builder(*rule);
  const std::size_t total = FindingsBuilder::kMaxSeriesNames + 5;
  for (std::size_t i = 0; i < total; ++i) {
    builder.add("gpu_" + std::to_string(i), {"pod", "namespace"});
  }
  builder.add("gpu_0", {"pod"});  // a name seen before the bound is still read
  auto findings = builder.finish();
  EXPECT_EQ(findings->series_seen, total + 1);
  EXPECT_EQ(findings->series_dropped, 5u);
  EXPECT_EQ(findings->metrics.size(), FindingsBuilder::kMaxSeriesNames);
  EXPECT_EQ(findings->metrics.count("gpu_" + std::to_string(total - 1)), 0u);
  ASSERT_EQ(findings->metrics.count("gpu_0"), 1u);
  EXPECT_EQ(findings->metrics.at("gpu_0").resources.size(), 2u);
}

TEST(FindingsBuilderTest, LabelNamesPastTheBoundMarkTheSeriesDropped) {
  const kube::RestMapper mapper = kube::RestMapper::builtin();
  auto rule = gpuRule(mapper);
  FindingsBuilder builder(*rule);
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < FindingsBuilder::kMaxLabelNames; ++i) {
    labels.push_back("label_" + std::to_string(i));
  }
  labels.push_back("pod");  // new, and past the bound
  std::vector<std::string_view> views(labels.begin(), labels.end());
  builder.add("gpu_util", views);
  auto findings = builder.finish();
  EXPECT_EQ(findings->series_dropped, 1u);
  ASSERT_EQ(findings->metrics.count("gpu_util"), 1u);
  EXPECT_TRUE(findings->metrics.at("gpu_util").resources.empty());
}

}  // namespace
}  // namespace metrics_adapter::discovery
