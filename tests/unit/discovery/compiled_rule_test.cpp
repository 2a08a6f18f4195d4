#include "metrics_adapter/discovery/compiled_rule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace metrics_adapter::discovery {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Data files are found from this source file, since the tests run from the build tree.
std::string repoFile(const std::string& relative) {
  return (std::filesystem::path(__FILE__).parent_path() / "../../.." / relative).string();
}

const kube::RestMapper& mapper() {
  static const kube::RestMapper kMapper = kube::RestMapper::builtin();
  return kMapper;
}

kube::ResourceInfo resource(std::string_view name) { return *mapper().resourceFor("", name); }

TEST(CompileRulesTest, AlibabaPresetCompiles) {
  const config::AdapterConfig config =
      config::loadConfigFile(repoFile("config/gpu-alibaba-exporter.yaml"));
  std::vector<std::string> warnings;
  const auto rules = compileRules(config, mapper(), &warnings);
  EXPECT_THAT(warnings, IsEmpty());
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0]->id, "rules[0]");
  EXPECT_EQ(rules[1]->id, "rules[1]");
  EXPECT_EQ(rules[1]->index, 1u);
  EXPECT_EQ(rules[0]->kind, RuleKind::kCustom);
  // seeds/000: the HPA targets duty_cycle_current on pods.
  EXPECT_EQ(rules[0]->namer.metricName("nvidia_gpu_duty_cycle"), "duty_cycle_over_time");
  EXPECT_EQ(rules[1]->namer.metricName("nvidia_gpu_duty_cycle"), "duty_cycle_current");
  EXPECT_EQ(rules[1]->namer.metricName("nvidia_gpu_memory_used_bytes"),
            "memory_used_bytes_current");
  EXPECT_EQ(rules[1]->namer.metricName("node_load1"), std::nullopt);
  EXPECT_EQ(rules[1]->resources.labelForResource(resource("pods")), "pod_name");
  EXPECT_EQ(rules[1]->resources.labelForResource(resource("namespaces")), "namespace_name");
  EXPECT_EQ(rules[1]->resources.labelForResource(resource("nodes")), "node_name");
  EXPECT_EQ(rules[1]->resources.resourceForLabel("uuid"), std::nullopt);
  EXPECT_EQ(rules[0]->metrics_query.source(),
            "ceil(avg_over_time(<<.Series>>{<<.LabelMatchers>>}[3m]))");
}

TEST(CompileRulesTest, DcgmPresetCompiles) {
  const config::AdapterConfig config =
      config::loadConfigFile(repoFile("config/gpu-dcgm-exporter.yaml"));
  std::vector<std::string> warnings;
  const auto rules = compileRules(config, mapper(), &warnings);
  EXPECT_THAT(warnings, IsEmpty());
  ASSERT_EQ(rules.size(), 2u);
  for (const char* series : {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
                             "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
                             "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}) {
    EXPECT_EQ(rules[0]->namer.metricName(series), series);
    EXPECT_EQ(rules[1]->namer.metricName(series), std::string(series) + "_AVG");
  }
  for (const auto& rule : rules) {
    EXPECT_EQ(rule->resources.labelForResource(resource("pods")), "pod");
    EXPECT_EQ(rule->resources.labelForResource(resource("namespaces")), "namespace");
    EXPECT_EQ(rule->resources.labelForResource(resource("nodes")), "Hostname");
    EXPECT_EQ(rule->resources.labelForResource(resource("services")), "service");
    for (const char* label : {"gpu", "UUID", "modelName", "container"}) {
      EXPECT_EQ(rule->resources.resourceForLabel(label), std::nullopt) << label;
    }
  }
}

// The sample's cheddar rule overrides cheese.io/brand, which this cluster lacks: the rule is
// disabled with a warning that points at the line (docs/api-contract.md "Decisions: better on
// purpose" 10), the others serve.
TEST(CompileRulesTest, UpstreamSampleCompiles) {
  const std::string path = repoFile("tests/unit/config/testdata/upstream-sample-config.yaml");
  const config::AdapterConfig config = config::loadConfigFile(path);
  std::vector<std::string> warnings;
  const auto rules = compileRules(config, mapper(), &warnings);
  ASSERT_EQ(rules.size(), 5u);
  EXPECT_EQ(rules[2]->id, "rules[2]");
  EXPECT_EQ(rules[3]->id, "externalRules[0]");
  EXPECT_EQ(rules[3]->kind, RuleKind::kExternal);
  EXPECT_EQ(rules[3]->index, 0u);
  EXPECT_EQ(rules[4]->id, "externalRules[1]");
  EXPECT_FALSE(rules[4]->resources.namespaced());
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_THAT(
      warnings[0],
      StartsWith(path + ": rules[3].resources.overrides.brand: unknown resource "
                        "\"brand.cheese.io\"; the rule is disabled until it exists (line "));
  // Upstream fails every request of this rule (docs/api-contract.md "prometheus-adapter: external
  // metrics rendering"): said at load.
  EXPECT_THAT(warnings[1], StartsWith(path + ": externalRules[0].resources: namespaced external "
                                             "rule maps no label to namespaces"));
  EXPECT_EQ(rules[0]->namer.metricName("container_cpu_usage_seconds_total"), "cpu_usage");
  EXPECT_EQ(rules[1]->namer.metricName("container_cpu_usage_seconds_total"), std::nullopt);
  EXPECT_EQ(rules[1]->namer.metricName("container_network_receive_bytes_total"),
            "network_receive_bytes");
  EXPECT_EQ(rules[2]->resources.labelForResource(resource("pods")), "pod");
}

// Once the REST mapping knows the CRD (discovery refreshed), the disabled rule compiles.
TEST(CompileRulesTest, DisabledRuleComesBackWhenTheResourceExists) {
  const std::string path = repoFile("tests/unit/config/testdata/upstream-sample-config.yaml");
  const config::AdapterConfig config = config::loadConfigFile(path);
  std::vector<kube::ResourceInfo> resources = mapper().resources();
  resources.push_back({"cheese.io", "v1", "Brand", "brands", "brand", true});
  const kube::RestMapper with_crd(resources);
  std::vector<std::string> warnings;
  const auto rules = compileRules(config, with_crd, &warnings);
  ASSERT_EQ(rules.size(), 6u);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("externalRules[0].resources")));
  EXPECT_EQ(rules[3]->id, "rules[3]");
  EXPECT_EQ(rules[3]->namer.metricName("cheddar"), "cheesy_goodness");
  EXPECT_EQ(rules[3]->resources.resourceForLabel("brand")->plural, "brands");
}

TEST(CompileRulesTest, EmptyConfigCompilesToNothing) {
  std::vector<std::string> warnings;
  EXPECT_THAT(compileRules(config::parseConfig("", "e.yaml"), mapper(), &warnings), IsEmpty());
  EXPECT_THAT(compileRules(config::parseConfig("rules: []\n", "e.yaml"), mapper(), nullptr),
              IsEmpty());
}

struct BrokenCase {
  const char* name;
  const char* yaml;
  const char* prefix;    // the file, the rule and the field
  const char* contains;  // the problem
  const char* suffix;    // the line
};

// Loading and compiling as startup does; the message must lead the user to the file, the rule,
// the field and the line (docs/api-contract.md "prometheus-adapter: config validation at load";
// template errors at load: "Decisions: keep compatible").
std::string startupError(const std::string& yaml) {
  try {
    const config::AdapterConfig config = config::parseConfig(yaml, "gpu.yaml");
    compileRules(config, mapper(), nullptr);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

class BrokenConfigTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenConfigTest, ErrorNamesFileRuleFieldAndLine) {
  const std::string message = startupError(GetParam().yaml);
  EXPECT_THAT(message, StartsWith(GetParam().prefix));
  EXPECT_THAT(message, HasSubstr(GetParam().contains));
  EXPECT_THAT(message, EndsWith(GetParam().suffix));
}

// A valid resource rule `name` under resourceRules (the labels come from the template).
#define RESOURCE_RULE(name)                      \
  "resourceRules:\n  " name                      \
  ":\n    containerQuery: x\n    nodeQuery: x\n" \
  "    resources: {template: '<<.Resource>>'}\n"

// rule 0 is valid in each case, so the index in the message is the broken rule's own.
#define VALID_RULE "rules:\n- seriesQuery: up\n  metricsQuery: <<.Series>>\n"

INSTANTIATE_TEST_SUITE_P(
    Startup, BrokenConfigTest,
    ::testing::Values(
        BrokenCase{"UnknownTopLevelKey", VALID_RULE "rulez: []\n",
                   "gpu.yaml: rulez: ", "unknown field", "(line 4)"},
        BrokenCase{"UnknownRuleKey", VALID_RULE "- seriesQuery: up\n  metricQuery: x\n",
                   "gpu.yaml: rules[1].metricQuery: ", "unknown field", "(line 5)"},
        BrokenCase{
            "DuplicateKey", VALID_RULE "- seriesQuery: up\n  metricsQuery: a\n  metricsQuery: b\n",
            "gpu.yaml: rules[1].metricsQuery: ", "duplicate key (first at line 5)", "(line 6)"},
        BrokenCase{"BadMatchesRegex", VALID_RULE "- name: {matches: \"^(gpu_\"}\n",
                   "gpu.yaml: rules[1].name.matches: ", "invalid regex \"^(gpu_\": missing )",
                   "(line 4)"},
        BrokenCase{"BadIsRegex", VALID_RULE "- seriesFilters:\n  - is: \"[a\"\n",
                   "gpu.yaml: rules[1].seriesFilters[0].is: ", "invalid regex \"[a\"", "(line 5)"},
        BrokenCase{"BadIsNotRegex", VALID_RULE "- seriesFilters:\n  - isNot: \"a)\"\n",
                   "gpu.yaml: rules[1].seriesFilters[0].isNot: ", "invalid regex \"a)\"",
                   "(line 5)"},
        BrokenCase{"BothIsAndIsNot", VALID_RULE "- seriesFilters:\n  - {is: a, isNot: b}\n",
                   "gpu.yaml: rules[1].seriesFilters[0]: ", "both is and isNot", "(line 5)"},
        BrokenCase{"NeitherIsNorIsNot", VALID_RULE "- seriesFilters:\n  - {}\n",
                   "gpu.yaml: rules[1].seriesFilters[0]: ", "one of is or isNot", "(line 5)"},
        BrokenCase{"TwoGroupsWithoutAs",
                   VALID_RULE "- name:\n    matches: ^(.*)_(.*)$\n  metricsQuery: x\n",
                   "gpu.yaml: rules[1].name.as: ",
                   "required when name.matches has 2 or more capture groups", "(line 5)"},
        BrokenCase{"TemplateSyntax",
                   VALID_RULE "- seriesQuery: up\n  metricsQuery: 'sum(<<.Series)'\n",
                   "gpu.yaml: rules[1].metricsQuery: ", "", "(line 5)"},
        BrokenCase{"UnknownTemplateField",
                   VALID_RULE
                   "- seriesQuery: up\n  metricsQuery: '<<.Series>>{<<.LabelMatcher>>}'\n",
                   "gpu.yaml: rules[1].metricsQuery: ", "LabelMatcher", "(line 5)"},
        BrokenCase{"LabelMatchersByNameDoesNotExist",
                   VALID_RULE "- metricsQuery: '<<index .LabelMatchersByName \"pod\">>'\n",
                   "gpu.yaml: rules[1].metricsQuery: ", "LabelMatchersByName", "(line 4)"},
        BrokenCase{"UnknownFunction",
                   VALID_RULE "- seriesQuery: up\n  metricsQuery: '<<lower .Series>>'\n",
                   "gpu.yaml: rules[1].metricsQuery: ", "lower", "(line 5)"},
        BrokenCase{"EmptyMetricsQuery", VALID_RULE "- seriesQuery: up\n  metricsQuery: ''\n",
                   "gpu.yaml: rules[1].metricsQuery: ", "must not be empty", "(line 5)"},
        BrokenCase{"MissingMetricsQuery", VALID_RULE "- seriesQuery: up\n",
                   "gpu.yaml: rules[1].metricsQuery: ", "must not be empty", "(line 4)"},
        BrokenCase{"BlankMetricsQuery", VALID_RULE "- seriesQuery: up\n  metricsQuery: '  '\n",
                   "gpu.yaml: rules[1].metricsQuery: ", "must not be empty", "(line 5)"},
        BrokenCase{"ExternalRuleTemplate",
                   "externalRules:\n- seriesQuery: up\n  metricsQuery: '<<.Seriess>>'\n",
                   "gpu.yaml: externalRules[0].metricsQuery: ", "Seriess", "(line 3)"},
        BrokenCase{"ListWhereMap", VALID_RULE "- seriesQuery: up\n  resources: [pod]\n",
                   "gpu.yaml: rules[1].resources: ", "expected a map, got a list", "(line 5)"},
        BrokenCase{"ResourceTemplateWithoutResource",
                   VALID_RULE "- resources:\n    template: kube_<<.Group>>\n  metricsQuery: x\n",
                   "gpu.yaml: rules[1].resources.template: ", "must reference .Resource",
                   "(line 5)"},
        BrokenCase{"ResourceTemplateUnknownField",
                   VALID_RULE "- resources: {template: '<<.Kind>>'}\n  metricsQuery: x\n",
                   "gpu.yaml: rules[1].resources.template: ", "Kind", "(line 4)"},
        BrokenCase{"BadWindow", "resourceRules:\n  window: 1.5m\n",
                   "gpu.yaml: resourceRules.window: ", "not a valid duration string", "(line 2)"},
        BrokenCase{"ResourceRuleQuery",
                   "resourceRules:\n  cpu:\n    containerQuery: 'sum(<<.Labels>>)'\n",
                   "gpu.yaml: resourceRules.cpu.containerQuery: ", "Labels", "(line 3)"},
        BrokenCase{"EmptyContainerQuery",
                   "resourceRules:\n  cpu:\n    containerQuery: ''\n    nodeQuery: x\n",
                   "gpu.yaml: resourceRules.cpu.containerQuery: ", "must not be empty", "(line 3)"},
        BrokenCase{"MissingNodeQuery", "resourceRules:\n  cpu:\n    containerQuery: x\n",
                   "gpu.yaml: resourceRules.cpu.nodeQuery: ", "must not be empty", "(line 3)"},
        BrokenCase{"MissingMemoryRule", RESOURCE_RULE("cpu"),
                   "gpu.yaml: resourceRules.memory.containerQuery: ", "must not be empty", ""},
        BrokenCase{"ResourceRuleNodeQuery",
                   "resourceRules:\n  cpu:\n    containerQuery: x\n    nodeQuery: '<<.Node>>'\n",
                   "gpu.yaml: resourceRules.cpu.nodeQuery: ", "Node", "(line 4)"},
        BrokenCase{"ResourceRuleBadTemplate",
                   "resourceRules:\n  cpu:\n    containerQuery: x\n    nodeQuery: x\n"
                   "    resources: {template: '<<.Group>>'}\n",
                   "gpu.yaml: resourceRules.cpu.resources.template: ", "must reference .Resource",
                   "(line 5)"},
        BrokenCase{"ResourceRuleWithoutPodLabel",
                   "resourceRules:\n  cpu:\n    containerQuery: x\n    nodeQuery: x\n"
                   "    resources:\n      overrides:\n        namespace: {resource: namespace}\n"
                   "        instance: {resource: node}\n",
                   "gpu.yaml: resourceRules.cpu.resources: ",
                   "maps no label to pods; add an override such as `pod: {resource: pod}`",
                   "(line 6)"},
        BrokenCase{"ResourceRuleWithoutAnyLabel",
                   RESOURCE_RULE("cpu") "  memory:\n    containerQuery: x\n    nodeQuery: x\n",
                   "gpu.yaml: resourceRules.memory.resources: ", "maps no label to namespaces",
                   "(line 7)"},
        BrokenCase{"YamlSyntax", VALID_RULE "- seriesQuery: up\n  name: a: b\n",
                   "gpu.yaml: invalid YAML: ", "", ")"}),
    [](const auto& info) { return std::string(info.param.name); });

#undef VALID_RULE
#undef RESOURCE_RULE

TEST(CompileRulesTest, YamlSyntaxErrorNamesTheLine) {
  EXPECT_THAT(
      startupError("rules:\n- seriesQuery: up\n  metricsQuery: <<.Series>>\n- seriesQuery: up\n"
                   "  name: a: b\n"),
      HasSubstr("(line 5, column "));
}

TEST(CompileResourceRulesTest, UpstreamSampleConfig) {
  const config::AdapterConfig config =
      config::loadConfigFile(repoFile("tests/unit/config/testdata/upstream-sample-config.yaml"));
  std::vector<std::string> warnings;
  std::shared_ptr<const CompiledResourceRules> resource_rules;
  compileRules(config, mapper(), &warnings, &resource_rules);
  ASSERT_NE(resource_rules, nullptr);
  EXPECT_EQ(resource_rules->window, "1m");
  for (const CompiledResourceRule* rule : {&resource_rules->cpu, &resource_rules->memory}) {
    EXPECT_EQ(rule->namespace_label, "namespace");
    EXPECT_EQ(rule->pod_label, "pod");
    EXPECT_EQ(rule->node_label, "instance");
    EXPECT_EQ(rule->source.container_label, "container");
  }
  EXPECT_EQ(resource_rules->cpu.id, "resourceRules.cpu");
  EXPECT_EQ(resource_rules->memory.id, "resourceRules.memory");
  EXPECT_EQ(resource_rules->memory.container_query.source(),
            "sum(container_memory_working_set_bytes{<<.LabelMatchers>>}) by (<<.GroupBy>>)");
  EXPECT_EQ(resource_rules->cpu.node_query.source(),
            "sum(rate(container_cpu_usage_seconds_total{<<.LabelMatchers>>, id='/'}[1m])) by "
            "(<<.GroupBy>>)");
}

TEST(CompileResourceRulesTest, NullWithoutResourceRules) {
  std::shared_ptr<const CompiledResourceRules> resource_rules;
  compileRules(
      config::loadConfigFile(repoFile("tests/unit/config/testdata/upstream-sample-config.yaml")),
      mapper(), nullptr, &resource_rules);
  ASSERT_NE(resource_rules, nullptr);
  compileRules(config::parseConfig("rules: []\n", "e.yaml"), mapper(), nullptr, &resource_rules);
  EXPECT_EQ(resource_rules, nullptr);
}

TEST(CompileResourceRulesTest, TemplateLabelsAndEmptyWindow) {
  const config::AdapterConfig config = config::parseConfig(
      "resourceRules:\n"
      "  cpu:\n    containerQuery: x\n    nodeQuery: y\n"
      "    resources: {template: 'kube_<<.Group>>_<<.Resource>>'}\n    containerLabel: c\n"
      "  memory:\n    containerQuery: x\n    nodeQuery: y\n"
      "    resources:\n      template: '<<.Resource>>'\n      overrides: {node_name: {resource: "
      "nodes}}\n",
      "r.yaml");
  std::vector<std::string> warnings;
  std::shared_ptr<const CompiledResourceRules> resource_rules;
  compileRules(config, mapper(), &warnings, &resource_rules);
  ASSERT_NE(resource_rules, nullptr);
  EXPECT_EQ(resource_rules->window, "");
  EXPECT_EQ(resource_rules->cpu.namespace_label, "kube__namespace");
  EXPECT_EQ(resource_rules->cpu.pod_label, "kube__pod");
  EXPECT_EQ(resource_rules->cpu.node_label, "kube__node");
  EXPECT_EQ(resource_rules->memory.namespace_label, "namespace");
  EXPECT_EQ(resource_rules->memory.node_label, "node_name");
  // memory has no containerLabel: its containers cannot be told apart, which loads with a warning.
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], StartsWith("r.yaml: resourceRules.memory.containerLabel: empty"));
}

}  // namespace
}  // namespace metrics_adapter::discovery
