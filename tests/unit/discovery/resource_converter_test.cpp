#include "metrics_adapter/discovery/resource_converter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace metrics_adapter::discovery {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

const kube::RestMapper& converterMapper() {
  static const kube::RestMapper kMapper = kube::RestMapper::builtin();
  return kMapper;
}

kube::ResourceInfo resource(std::string_view group, std::string_view name) {
  return *converterMapper().resourceFor(group, name);
}

config::ResourceMapping overrides(std::map<std::string, config::GroupResourceRef> entries) {
  config::ResourceMapping mapping;
  mapping.overrides = std::move(entries);
  return mapping;
}

config::ResourceMapping templated(std::string text) {
  config::ResourceMapping mapping;
  mapping.template_text = std::move(text);
  return mapping;
}

// The group-resource a label maps to, "" when none.
std::string labelTarget(const ResourceConverter& converter, std::string_view label) {
  const std::optional<kube::ResourceInfo> found = converter.resourceForLabel(label);
  return found ? found->groupResource() : "";
}

// docs/api-contract.md "prometheus-adapter: resource association": overrides are normalised
// through the mapper (pod == pods == Pod).
TEST(ResourceConverterTest, OverridesMapBothWays) {
  std::vector<std::string> warnings;
  const ResourceConverter converter(overrides({{"namespace_name", {"", "namespace"}},
                                               {"pod_name", {"", "pods"}},
                                               {"node_name", {"", "Node"}},
                                               {"microservice", {"apps", "deployment"}}}),
                                    converterMapper(), "c.yaml: rules[0]", &warnings);
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_EQ(labelTarget(converter, "pod_name"), "pods");
  EXPECT_EQ(labelTarget(converter, "namespace_name"), "namespaces");
  EXPECT_EQ(labelTarget(converter, "node_name"), "nodes");
  EXPECT_EQ(labelTarget(converter, "microservice"), "deployments.apps");
  EXPECT_EQ(labelTarget(converter, "pod"), "");  // no template: other labels map to nothing
  EXPECT_EQ(labelTarget(converter, "__name__"), "");
  EXPECT_EQ(converter.labelForResource(resource("", "pods")), "pod_name");
  EXPECT_EQ(converter.labelForResource(resource("", "namespaces")), "namespace_name");
  EXPECT_EQ(converter.labelForResource(resource("apps", "deployments")), "microservice");
  EXPECT_EQ(converter.labelForResource(resource("", "services")), std::nullopt);
  EXPECT_TRUE(converter.namespaced());
}

// docs/api-contract.md "Decisions: better on purpose" 10: an override naming an unknown resource is
// reported, not fatal.
TEST(ResourceConverterTest, UnknownOverrideIsDroppedWithWarning) {
  std::vector<std::string> warnings;
  const ResourceConverter converter(
      overrides(
          {{"brand", {"cheese.io", "brand"}}, {"foo", {"", "widgets"}}, {"pod", {"", "pod"}}}),
      converterMapper(), "c.yaml: rules[3]", &warnings);
  EXPECT_THAT(
      warnings,
      ElementsAre(
          "c.yaml: rules[3].resources.overrides.brand: unknown resource \"brand.cheese.io\"; "
          "the rule is disabled until it exists",
          "c.yaml: rules[3].resources.overrides.foo: unknown resource \"widgets\"; "
          "the rule is disabled until it exists"));
  EXPECT_TRUE(converter.hasUnknownOverrides());
  EXPECT_EQ(labelTarget(converter, "brand"), "");
  EXPECT_EQ(labelTarget(converter, "foo"), "");
  EXPECT_EQ(labelTarget(converter, "pod"), "pods");
}

// docs/api-contract.md "prometheus-adapter: sharp edges we decided", 9: upstream picks one of
// two labels at random; we take the alphabetically first and say so.
TEST(ResourceConverterTest, TwoOverridesForOneResourcePickTheFirstLabel) {
  std::vector<std::string> warnings;
  const ResourceConverter converter(
      overrides(
          {{"pod_name", {"", "pod"}}, {"pod", {"", "pods"}}, {"kubernetes_pod", {"", "Pod"}}}),
      converterMapper(), "c.yaml: rules[0]", &warnings);
  EXPECT_EQ(converter.labelForResource(resource("", "pods")), "kubernetes_pod");
  EXPECT_THAT(warnings,
              ElementsAre("c.yaml: rules[0].resources.overrides.pod: resource \"pods\" is also "
                          "mapped from label \"kubernetes_pod\"; queries use label "
                          "\"kubernetes_pod\"",
                          "c.yaml: rules[0].resources.overrides.pod_name: resource \"pods\" is "
                          "also mapped from label \"kubernetes_pod\"; queries use label "
                          "\"kubernetes_pod\""));
  // Every label still attaches series to the resource.
  EXPECT_EQ(labelTarget(converter, "pod"), "pods");
  EXPECT_EQ(labelTarget(converter, "pod_name"), "pods");
}

TEST(ResourceConverterTest, NullWarningsAreAllowed) {
  const ResourceConverter converter(overrides({{"x", {"", "nope"}}}), converterMapper(),
                                    "c.yaml: rules[0]", nullptr);
  EXPECT_EQ(labelTarget(converter, "x"), "");
}

TEST(ResourceConverterTest, NoMappingMapsNothing) {
  const ResourceConverter converter(config::ResourceMapping{}, converterMapper(),
                                    "c.yaml: rules[0]", nullptr);
  EXPECT_EQ(labelTarget(converter, "pod"), "");
  EXPECT_EQ(converter.labelForResource(resource("", "pods")), std::nullopt);
}

TEST(ResourceConverterTest, NamespacedFlagPassesThrough) {
  config::ResourceMapping mapping;
  mapping.namespaced = false;
  EXPECT_FALSE(ResourceConverter(mapping, converterMapper(), "c.yaml: externalRules[1]", nullptr)
                   .namespaced());
}

// docs/api-contract.md "prometheus-adapter: resource association" with the stock template:
// ordinary labels become resources when the mapper knows them (singular or plural, any case,
// group guessed core first); short names don't.
TEST(ResourceConverterTest, ResourceTemplateMatchesLabels) {
  const ResourceConverter converter(templated("<<.Resource>>"), converterMapper(),
                                    "c.yaml: rules[2]", nullptr);
  const struct {
    const char* label;
    const char* target;
  } kCases[] = {
      {"pod", "pods"},
      {"pods", "pods"},
      {"Pod", "pods"},
      {"namespace", "namespaces"},
      {"node", "nodes"},
      {"service", "services"},
      {"deployment", "deployments.apps"},
      {"job", "jobs.batch"},
      {"ingress", "ingresses.networking.k8s.io"},
      {"instance", ""},
      {"po", ""},
      {"__name__", ""},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(labelTarget(converter, c.label), c.target) << c.label;
  }
  // The singular name (docs/api-contract.md "prometheus-adapter: resource template").
  EXPECT_EQ(converter.labelForResource(resource("", "pods")), "pod");
  EXPECT_EQ(converter.labelForResource(resource("apps", "deployments")), "deployment");
}

// docs/api-contract.md "prometheus-adapter: sharp edges we decided", 10: .Group has '.' and
// '-' replaced by '_' one way only; core renders an empty group; labels with dotted groups or
// core resources cannot be matched back.
TEST(ResourceConverterTest, GroupTemplate) {
  const ResourceConverter converter(templated("kube_<<.Group>>_<<.Resource>>"), converterMapper(),
                                    "c.yaml: rules[0]", nullptr);
  EXPECT_EQ(converter.labelForResource(resource("", "pods")), "kube__pod");
  EXPECT_EQ(converter.labelForResource(resource("apps", "deployments")), "kube_apps_deployment");
  EXPECT_EQ(converter.labelForResource(resource("", "ingresses")),
            "kube_networking_k8s_io_ingress");
  const kube::ResourceInfo widget{.group = "my-group.example.com",
                                  .version = "v1",
                                  .kind = "Widget",
                                  .plural = "widgets",
                                  .singular = "widget",
                                  .namespaced = true};
  EXPECT_EQ(converter.labelForResource(widget), "kube_my_group_example_com_widget");

  EXPECT_EQ(labelTarget(converter, "kube_apps_deployment"), "deployments.apps");
  EXPECT_EQ(labelTarget(converter, "kube_batch_job"), "jobs.batch");
  EXPECT_EQ(labelTarget(converter, "kube_networking_k8s_io_ingress"), "");  // group "networking"
  EXPECT_EQ(labelTarget(converter, "kube__pod"), "");                       // group must be set
  EXPECT_EQ(labelTarget(converter, "pod"), "");
}

TEST(ResourceConverterTest, OverrideWinsOverTemplate) {
  config::ResourceMapping mapping = templated("<<.Resource>>");
  mapping.overrides["pod_name"] = {"", "pod"};
  mapping.overrides["job"] = {"", "pod"};
  const ResourceConverter converter(mapping, converterMapper(), "c.yaml: rules[0]", nullptr);
  EXPECT_EQ(converter.labelForResource(resource("", "pods")), "job");    // override, first label
  EXPECT_EQ(labelTarget(converter, "job"), "pods");                      // not jobs.batch
  EXPECT_EQ(converter.labelForResource(resource("", "nodes")), "node");  // template
  EXPECT_EQ(labelTarget(converter, "node"), "nodes");
}

std::string constructionError(const std::string& template_text) {
  try {
    ResourceConverter converter(templated(template_text), converterMapper(), "c.yaml: rules[1]",
                                nullptr);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

// A template that cannot match labels is a startup error naming resources.template
// (docs/api-contract.md "prometheus-adapter: config validation at load").
TEST(ResourceConverterTest, InvalidTemplates) {
  EXPECT_EQ(constructionError("<<.Group>>_label"),
            "c.yaml: rules[1].resources.template: must reference .Resource");
  EXPECT_EQ(constructionError("no_fields"),
            "c.yaml: rules[1].resources.template: must reference .Resource");
  EXPECT_THAT(constructionError("<<.Resource>>("),
              StartsWith("c.yaml: rules[1].resources.template: gives an invalid label regex "
                         "\"^(?P<resource>.+?)($\": missing )"));
  EXPECT_THAT(constructionError("<<.Kind>>"), StartsWith("c.yaml: rules[1].resources.template: "));
  EXPECT_THAT(constructionError("<<.Kind>>"), HasSubstr("Kind"));
  EXPECT_THAT(constructionError("<<.Resource"),
              StartsWith("c.yaml: rules[1].resources.template: "));
}

// A template that renders nothing is an error
// (docs/api-contract.md "prometheus-adapter: config validation at load").
TEST(ResourceConverterTest, TemplateRenderingEmptyIsInvalid) {
  EXPECT_EQ(constructionError("<<if false>><<.Resource>><<end>>"),
            "c.yaml: rules[1].resources.template: renders to an empty label name");
}

// Any template the engine accepts works both ways, as long as it does not truncate its inputs.
TEST(ResourceConverterTest, TemplateWithFunctions) {
  const ResourceConverter converter(templated("<<printf \"k8s_%s\" .Resource>>"), converterMapper(),
                                    "c.yaml: rules[0]", nullptr);
  EXPECT_EQ(converter.labelForResource(resource("", "pods")), "k8s_pod");
  EXPECT_EQ(labelTarget(converter, "k8s_deployment"), "deployments.apps");
  EXPECT_EQ(labelTarget(converter, "deployment"), "");
}

}  // namespace
}  // namespace metrics_adapter::discovery
