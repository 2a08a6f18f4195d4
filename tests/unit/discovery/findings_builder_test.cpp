#include "discovery/findings_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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
  builder.add("gpu_temp", views);  // the same label names again: still past the bound
  auto findings = builder.finish();
  EXPECT_EQ(findings->series_dropped, 2u);
  ASSERT_EQ(findings->metrics.count("gpu_temp"), 1u);
  EXPECT_TRUE(findings->metrics.at("gpu_temp").resources.empty());
  ASSERT_EQ(findings->metrics.count("gpu_util"), 1u);
  EXPECT_TRUE(findings->metrics.at("gpu_util").resources.empty());
}

TEST(FindingsBuilderTest, NamesAreLookedUpByContentAndCopiedWhenKept) {
  const kube::RestMapper mapper = kube::RestMapper::builtin();
  auto rule = gpuRule(mapper);
  FindingsBuilder builder(*rule);
  // One reused buffer, as the series parser passes views into its own buffers.
  std::string name = "gpu_util";
  std::string label = "pod";
  builder.add(name, {label});
  name = "gpu_temp";
  label = "namespace";
  builder.add(name, {label});
  std::string again = "gpu_util";  // the same name from other storage
  std::string pod = "pod";
  builder.add(again, {pod, "namespace"});
  name.assign(name.size(), 'x');
  label.assign(label.size(), 'x');
  auto findings = builder.finish();
  EXPECT_EQ(findings->series_seen, 3u);
  EXPECT_EQ(findings->series_dropped, 0u);
  ASSERT_EQ(findings->metrics.size(), 2u);
  ASSERT_EQ(findings->metrics.count("gpu_util"), 1u);
  ASSERT_EQ(findings->metrics.count("gpu_temp"), 1u);
  std::vector<std::string> util_resources;
  for (const auto& resource : findings->metrics.at("gpu_util").resources) {
    util_resources.push_back(resource.plural);
  }
  std::sort(util_resources.begin(), util_resources.end());
  EXPECT_EQ(util_resources, (std::vector<std::string>{"namespaces", "pods"}));
  ASSERT_EQ(findings->metrics.at("gpu_temp").resources.size(), 1u);
  EXPECT_EQ(findings->metrics.at("gpu_temp").resources[0].plural, "namespaces");
  EXPECT_EQ(findings->metrics.at("gpu_temp").series_name, "gpu_temp");
}

std::vector<std::string> pluralsOf(const RuleFindings& findings, const std::string& metric) {
  std::vector<std::string> plurals;
  for (const auto& resource : findings.metrics.at(metric).resources) {
    plurals.push_back(resource.plural);
  }
  std::sort(plurals.begin(), plurals.end());
  return plurals;
}

TEST(FindingsBuilderTest, LabelNamesOfTheSameSizesAreComparedByContent) {
  const kube::RestMapper mapper = kube::RestMapper::builtin();
  auto rule = gpuRule(mapper);
  FindingsBuilder builder(*rule);
  // Back to back in one reused buffer, as the series scanner passes them.
  std::string text = "podnamespace";
  const std::string_view view(text);
  builder.add("gpu_a", {view.substr(0, 3), view.substr(3)});
  text = "xyzfoobarbaz";  // the same sizes and addresses, other names
  builder.add("gpu_b", {view.substr(0, 3), view.substr(3)});
  // Apart in memory.
  const std::string pod = "pod";
  const std::string namespace_label = "namespace";
  builder.add("gpu_c", {pod, namespace_label});
  const std::string pox = "pox";
  builder.add("gpu_d", {pox, namespace_label});
  builder.add("gpu_a", {pod, namespace_label});  // a name seen before the previous one
  auto findings = builder.finish();
  EXPECT_EQ(pluralsOf(*findings, "gpu_a"), (std::vector<std::string>{"namespaces", "pods"}));
  EXPECT_TRUE(findings->metrics.at("gpu_b").resources.empty());
  EXPECT_EQ(pluralsOf(*findings, "gpu_c"), (std::vector<std::string>{"namespaces", "pods"}));
  EXPECT_EQ(pluralsOf(*findings, "gpu_d"), (std::vector<std::string>{"namespaces"}));
  EXPECT_EQ(findings->series_seen, 5u);
}

}  // namespace
}  // namespace metrics_adapter::discovery
