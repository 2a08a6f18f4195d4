#include "metrics_adapter/resource/resource_query.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/resource/test_rules.h"

namespace metrics_adapter::resource {
namespace {

using ::testing::HasSubstr;

struct PodQueryCase {
  const char* name;
  bool memory;
  std::string namespace_name;
  std::vector<std::string> pods;
  std::string promql;
};

class PodQueryTest : public ::testing::TestWithParam<PodQueryCase> {};

TEST_P(PodQueryTest, RendersAsUpstream) {
  const auto rules = test::compileResourceRules();
  ASSERT_NE(rules, nullptr);
  const auto& rule = GetParam().memory ? rules->memory : rules->cpu;
  EXPECT_EQ(renderPodQuery(rule, GetParam().namespace_name, GetParam().pods), GetParam().promql);
}

// The queries prometheus-adapter's provider_test builds with its default rules
// (contQuery.Build("", pods, ns, [containerLabel], Everything(), names...)), then our
// differences: names sorted, de-duplicated and regex-escaped, values Go-quoted.
INSTANTIATE_TEST_SUITE_P(
    Upstream, PodQueryTest,
    ::testing::Values(
        PodQueryCase{"CpuTwoPods",
                     false,
                     "some-ns",
                     {"pod1", "pod3"},
                     "sum(rate(container_cpu_usage_seconds_total{namespace=\"some-ns\","
                     "pod=~\"pod1|pod3\"}[1m])) by (pod,container)"},
        PodQueryCase{"CpuOnePod",
                     false,
                     "other-ns",
                     {"pod27"},
                     "sum(rate(container_cpu_usage_seconds_total{namespace=\"other-ns\","
                     "pod=\"pod27\"}[1m])) by (pod,container)"},
        PodQueryCase{"MemoryTwoPods",
                     true,
                     "some-ns",
                     {"pod1", "pod3"},
                     "sum(container_memory_working_set_bytes{namespace=\"some-ns\","
                     "pod=~\"pod1|pod3\"}) by (pod,container)"},
        PodQueryCase{"MemoryWithMissingPod",
                     true,
                     "some-ns",
                     {"pod1", "pod-nonexistant"},
                     "sum(container_memory_working_set_bytes{namespace=\"some-ns\","
                     "pod=~\"pod-nonexistant|pod1\"}) by (pod,container)"},
        PodQueryCase{"SortedAndDeduplicated",
                     false,
                     "ns",
                     {"pod3", "pod1", "pod3"},
                     "sum(rate(container_cpu_usage_seconds_total{namespace=\"ns\","
                     "pod=~\"pod1|pod3\"}[1m])) by (pod,container)"},
        PodQueryCase{"OneNameTwice",
                     false,
                     "ns",
                     {"web.1", "web.1"},
                     "sum(rate(container_cpu_usage_seconds_total{namespace=\"ns\","
                     "pod=\"web.1\"}[1m])) by (pod,container)"},
        PodQueryCase{"DotsEscapedInAlternation",
                     false,
                     "ns",
                     {"web.1", "web-2"},
                     "sum(rate(container_cpu_usage_seconds_total{namespace=\"ns\","
                     "pod=~\"web-2|web\\\\.1\"}[1m])) by (pod,container)"},
        PodQueryCase{"QuotesCannotInject",
                     false,
                     "a\"}or vector(1)#",
                     {"p"},
                     "sum(rate(container_cpu_usage_seconds_total{namespace=\"a\\\"}or "
                     "vector(1)#\",pod=\"p\"}[1m])) by (pod,container)"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(NodeQueryTest, RendersAsUpstream) {
  const auto rules = test::compileResourceRules();
  ASSERT_NE(rules, nullptr);
  EXPECT_EQ(renderNodeQuery(rules->cpu, {"node1", "node2"}),
            "sum(rate(container_cpu_usage_seconds_total{instance=~\"node1|node2\", id='/'}[1m])) "
            "by (instance)");
  EXPECT_EQ(renderNodeQuery(rules->memory, {"node2", "node1", "node3"}),
            "sum(container_memory_working_set_bytes{instance=~\"node1|node2|node3\",id='/'}) by "
            "(instance)");
  EXPECT_EQ(renderNodeQuery(rules->memory, {"node1"}),
            "sum(container_memory_working_set_bytes{instance=\"node1\",id='/'}) by (instance)");
}

// Every template field, as upstream's metrics_query_test reads them back.
std::string rulesWith(const std::string& container_query, const std::string& node_query) {
  return "resourceRules:\n"
         "  cpu:\n"
         "    containerQuery: '" +
         container_query +
         "'\n"
         "    nodeQuery: '" +
         node_query +
         "'\n"
         "    resources: {template: 'kube_<<.Resource>>'}\n"
         "    containerLabel: container_name\n"
         "  memory:\n"
         "    containerQuery: x\n"
         "    nodeQuery: x\n"
         "    resources: {template: 'kube_<<.Resource>>'}\n";
}

struct FieldCase {
  const char* name;
  std::string template_text;
  std::string pods;   // rendered for namespace "ns" and pods p2, p1
  std::string nodes;  // rendered for nodes n1, n2
};

class TemplateFieldTest : public ::testing::TestWithParam<FieldCase> {};

TEST_P(TemplateFieldTest, HasUpstreamContent) {
  const auto rules =
      test::compileResourceRules(rulesWith(GetParam().template_text, GetParam().template_text));
  ASSERT_NE(rules, nullptr);
  EXPECT_EQ(rules->cpu.namespace_label, "kube_namespace");
  EXPECT_EQ(rules->cpu.pod_label, "kube_pod");
  EXPECT_EQ(rules->cpu.node_label, "kube_node");
  EXPECT_EQ(renderPodQuery(rules->cpu, "ns", {"p2", "p1"}), GetParam().pods);
  EXPECT_EQ(renderNodeQuery(rules->cpu, {"n1", "n2"}), GetParam().nodes);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, TemplateFieldTest,
    ::testing::Values(
        FieldCase{"SeriesIsEmpty", "[<<.Series>>]", "[]", "[]"},
        FieldCase{"LabelMatchers", "<<.LabelMatchers>>",
                  "kube_namespace=\"ns\",kube_pod=~\"p1|p2\"", "kube_node=~\"n1|n2\""},
        FieldCase{"GroupBy", "<<.GroupBy>>", "kube_pod,container_name", "kube_node"},
        FieldCase{"GroupBySlice", "<<.GroupBySlice>>", "[kube_pod container_name]", "[kube_node]"},
        FieldCase{"LabelValuesByName", "<<.LabelValuesByName>>",
                  "map[kube_namespace:ns kube_pod:p1|p2]", "map[kube_node:n1|n2]"},
        FieldCase{"LabelValuesByNameIndex", "<<index .LabelValuesByName \"kube_pod\">>-", "p1|p2-",
                  "-"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ResourceQueryErrorTest, EmptyRenderingNamesTheRule) {
  const auto rules = test::compileResourceRules(rulesWith("<<.Series>>", "<<.Series>>"));
  ASSERT_NE(rules, nullptr);
  try {
    renderPodQuery(rules->cpu, "ns", {"p"});
    FAIL() << "no error";
  } catch (const ResourceQueryError& e) {
    EXPECT_THAT(e.what(), HasSubstr("containerQuery of resourceRules.cpu rendered an empty query"));
    EXPECT_EQ(e.query(), "");
  }
  EXPECT_THROW(renderNodeQuery(rules->cpu, {"n"}), ResourceQueryError);
}

TEST(ContainerLabelTest, EmptyGroupsByPodOnlyAsUpstream) {
  std::string yaml = test::kUpstreamDefaultRules;
  yaml.replace(yaml.find("containerLabel: container"), 25, "containerLabel: ''");
  const auto rules = test::compileResourceRules(yaml);
  ASSERT_NE(rules, nullptr);
  EXPECT_THAT(renderPodQuery(rules->cpu, "ns", {"p"}), HasSubstr("by (pod,)"));
}

}  // namespace
}  // namespace metrics_adapter::resource
