#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "metrics_adapter/config/config.h"

namespace metrics_adapter::config {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The unit tests run from the build tree; data files are found next to this source file.
std::filesystem::path sourceDir() { return std::filesystem::path(__FILE__).parent_path(); }
std::filesystem::path repoFile(const std::string& relative) {
  return sourceDir() / "../../.." / relative;
}

std::string errorOf(const std::string& yaml) {
  try {
    parseConfig(yaml, "gpu.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

// Every section may be absent or empty (docs/api-contract.md "prometheus-adapter: config schema").
TEST(ParseConfigTest, EmptyDocumentsAreEmptyConfigs) {
  for (const char* yaml : {"", "# only a comment\n", "rules: []\n", "rules:\n", "{}\n",
                           "rules: []\nexternalRules: []\n"}) {
    SCOPED_TRACE(yaml);
    const AdapterConfig config = parseConfig(yaml, "empty.yaml");
    EXPECT_EQ(config.source, "empty.yaml");
    EXPECT_TRUE(config.rules.empty());
    EXPECT_TRUE(config.external_rules.empty());
    EXPECT_FALSE(config.resource_rules.has_value());
  }
}

TEST(ParseConfigTest, ReadsEveryDiscoveryRuleField) {
  const AdapterConfig config = parseConfig(R"(rules:
- seriesQuery: 'http_requests_total{namespace!=""}'
  seriesFilters:
  - is: ^http_
  - isNot: _bucket$
  resources:
    template: kube_<<.Group>>_<<.Resource>>
    overrides:
      microservice: {group: apps, resource: deployment}
      pod_name: {resource: pods}
  name:
    matches: ^(.*)_total$
    as: ${1}_per_second
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)
externalRules:
- seriesQuery: queue_depth
  resources:
    namespaced: false
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
)",
                                           "c.yaml");
  ASSERT_EQ(config.rules.size(), 1u);
  const DiscoveryRule& rule = config.rules[0];
  EXPECT_EQ(rule.series_query, "http_requests_total{namespace!=\"\"}");
  ASSERT_EQ(rule.series_filters.size(), 2u);
  EXPECT_TRUE(rule.series_filters[0].is);
  EXPECT_EQ(rule.series_filters[0].pattern, "^http_");
  EXPECT_FALSE(rule.series_filters[1].is);
  EXPECT_EQ(rule.series_filters[1].pattern, "_bucket$");
  EXPECT_EQ(rule.resources.template_text, "kube_<<.Group>>_<<.Resource>>");
  ASSERT_EQ(rule.resources.overrides.size(), 2u);
  EXPECT_EQ(rule.resources.overrides.at("microservice").group, "apps");
  EXPECT_EQ(rule.resources.overrides.at("microservice").resource, "deployment");
  EXPECT_EQ(rule.resources.overrides.at("pod_name").group, "");
  EXPECT_EQ(rule.resources.overrides.at("pod_name").resource, "pods");
  EXPECT_TRUE(rule.resources.namespaced);  // default
  EXPECT_EQ(rule.name.matches, "^(.*)_total$");
  EXPECT_EQ(rule.name.as, "${1}_per_second");
  EXPECT_EQ(rule.metrics_query, "sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)");

  ASSERT_EQ(config.external_rules.size(), 1u);
  EXPECT_FALSE(config.external_rules[0].resources.namespaced);
  EXPECT_EQ(config.external_rules[0].name.matches, "");
  EXPECT_EQ(config.external_rules[0].name.as, "");

  // Lines are 1-based and point at the value.
  EXPECT_EQ(config.lines.at("rules[0].metricsQuery"), 14);
  EXPECT_EQ(config.lines.at("rules[0].seriesFilters[1].isNot"), 5);
  EXPECT_EQ(config.lines.at("externalRules[0]"), 16);
}

TEST(ParseConfigTest, ReadsResourceRules) {
  const AdapterConfig config = parseConfig(R"(resourceRules:
  cpu:
    containerQuery: sum(rate(c{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)
    nodeQuery: sum(rate(n{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)
    resources:
      overrides:
        instance: {resource: node}
    containerLabel: container
  window: 1h30m
)",
                                           "r.yaml");
  ASSERT_TRUE(config.resource_rules.has_value());
  EXPECT_EQ(config.resource_rules->cpu.container_query,
            "sum(rate(c{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)");
  EXPECT_EQ(config.resource_rules->cpu.node_query,
            "sum(rate(n{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)");
  EXPECT_EQ(config.resource_rules->cpu.resources.overrides.at("instance").resource, "node");
  EXPECT_EQ(config.resource_rules->cpu.container_label, "container");
  EXPECT_EQ(config.resource_rules->memory.container_query, "");
  EXPECT_EQ(config.resource_rules->window, "1h30m");
}

// An empty is/isNot counts as absent, as upstream compares them with ""
// (docs/api-contract.md "prometheus-adapter: config schema").
TEST(ParseConfigTest, EmptyFilterPatternCountsAsAbsent) {
  const AdapterConfig config =
      parseConfig("rules:\n- seriesFilters:\n  - is: \"\"\n    isNot: x\n", "f.yaml");
  ASSERT_EQ(config.rules[0].series_filters.size(), 1u);
  EXPECT_FALSE(config.rules[0].series_filters[0].is);
  EXPECT_EQ(config.rules[0].series_filters[0].pattern, "x");
}

// Prometheus durations: integers, units y w d h m s ms, largest first; "0" alone is valid
// (docs/api-contract.md "prometheus-adapter: config schema").
TEST(ParseConfigTest, WindowDurations) {
  for (const char* valid : {"0", "30s", "5m", "1h30m", "100ms", "1y2w3d4h5m6s7ms", "292y"}) {
    SCOPED_TRACE(valid);
    EXPECT_EQ(parseConfig(std::string("resourceRules: {window: ") + valid + "}", "w.yaml")
                  .resource_rules->window,
              valid);
  }
  const struct {
    const char* window;
    const char* problem;
  } kInvalid[] = {
      {"''", "empty duration string"},
      {"1.5m", "not a valid duration string: \"1.5m\""},
      {"5m1h", "not a valid duration string: \"5m1h\""},
      {"'5 m'", "not a valid duration string: \"5 m\""},
      {"-1m", "not a valid duration string: \"-1m\""},
      {"1d1d", "not a valid duration string: \"1d1d\""},
      {"m", "not a valid duration string: \"m\""},
      {"5", "not a valid duration string: \"5\""},
      {"293y", "duration out of range: \"293y\""},
      {"99999999999999999999999s", "duration out of range: \"99999999999999999999999s\""},
  };
  for (const auto& c : kInvalid) {
    SCOPED_TRACE(c.window);
    EXPECT_EQ(errorOf(std::string("resourceRules:\n  window: ") + c.window + "\n"),
              std::string("gpu.yaml: resourceRules.window: ") + c.problem + " (line 2)");
  }
}

struct ErrorCase {
  const char* name;
  const char* yaml;
  const char* message;
};

// Every error names the file, the YAML path and the problem, then the line (docs/api-contract.md
// "prometheus-adapter: config validation at load").
class ParseConfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseConfigErrorTest, NamesFilePathAndLine) {
  EXPECT_EQ(errorOf(GetParam().yaml), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Strict, ParseConfigErrorTest,
    ::testing::Values(
        ErrorCase{"UnknownTopLevelKey", "rules: []\nfoo: 1\n",
                  "gpu.yaml: foo: unknown field (allowed: rules, externalRules, resourceRules, "
                  "forecastRules, backends) (line 2)"},
        ErrorCase{"UnknownRuleKey", "rules:\n- seriesQery: x\n",
                  "gpu.yaml: rules[0].seriesQery: unknown field (allowed: seriesQuery, "
                  "seriesFilters, resources, name, metricsQuery, backend) (line 2)"},
        // upstream's sample had exactly this typo once; strict mode must catch it
        ErrorCase{"MetricQueryTypo", "rules:\n- seriesQuery: x\n  metricQuery: y\n",
                  "gpu.yaml: rules[0].metricQuery: unknown field (allowed: seriesQuery, "
                  "seriesFilters, resources, name, metricsQuery, backend) (line 3)"},
        ErrorCase{"UnknownBackend",
                  "backends:\n  gpu: {url: 'http://thanos:10902'}\nrules:\n- seriesQuery: x\n"
                  "  backend: thanos\n",
                  "gpu.yaml: rules[0].backend: unknown backend \"thanos\" (backends: default, "
                  "gpu) (line 5)"},
        ErrorCase{"UnknownForecastBackend",
                  "forecastRules:\n- {name: f, query: q, backend: mimir}\n",
                  "gpu.yaml: forecastRules[0].backend: unknown backend \"mimir\" (backends: "
                  "default) (line 2)"},
        ErrorCase{"DuplicateBackend",
                  "backends:\n  gpu: {url: 'http://a'}\n  gpu: {url: 'http://b'}\n",
                  "gpu.yaml: backends.gpu: duplicate key (first at line 2) (line 3)"},
        ErrorCase{"BackendUrlWithoutScheme", "backends:\n  gpu: {url: 'thanos:10902'}\n",
                  "gpu.yaml: backends.gpu.url: \"thanos:10902\" is not an absolute http:// or "
                  "https:// URL with a host (line 2)"},
        ErrorCase{"BackendWithoutUrl", "backends:\n  gpu:\n    verb: POST\n",
                  "gpu.yaml: backends.gpu.url: required (line 3)"},
        ErrorCase{"BackendVerb", "backends:\n  gpu: {url: 'http://a', verb: PUT}\n",
                  "gpu.yaml: backends.gpu.verb: must be GET or POST, not \"PUT\" (line 2)"},
        ErrorCase{"BackendHeaderName",
                  "backends:\n  gpu:\n    url: http://a\n    headers: {'X Org': t}\n",
                  "gpu.yaml: backends.gpu.headers.X Org: \"X Org\" is not an HTTP header name "
                  "(line 4)"},
        ErrorCase{"BackendKeyWithoutCert",
                  "backends:\n  gpu: {url: 'http://a', clientKeyFile: /k}\n",
                  "gpu.yaml: backends.gpu.clientCertFile: required with clientKeyFile (line 2)"},
        ErrorCase{"BackendTokenAndBasicAuth",
                  "backends:\n  gpu:\n    url: http://a\n    tokenFile: /t\n"
                  "    basicAuth: {username: u, passwordFile: /p}\n",
                  "gpu.yaml: backends.gpu.basicAuth: cannot be used with tokenFile: a request "
                  "carries one Authorization header (line 5)"},
        ErrorCase{"BackendName", "backends:\n  'gpu/a': {url: 'http://a'}\n",
                  "gpu.yaml: backends.gpu/a: \"gpu/a\" is not a backend name (letters, digits, "
                  "'_', '.', '-'; at most 63; starting with a letter or digit) (line 2)"},
        ErrorCase{
            "UnknownResourceRulesKey", "resourceRules:\n  gpu: {}\n",
            "gpu.yaml: resourceRules.gpu: unknown field (allowed: cpu, memory, window, backend) "
            "(line 2)"},
        ErrorCase{"UnknownOverrideKey",
                  "rules:\n- resources:\n    overrides:\n      pod: {kind: Pod}\n",
                  "gpu.yaml: rules[0].resources.overrides.pod.kind: unknown field (allowed: "
                  "group, resource) (line 4)"},
        ErrorCase{"DuplicateRuleKey", "rules:\n- seriesQuery: a\n  seriesQuery: b\n",
                  "gpu.yaml: rules[0].seriesQuery: duplicate key (first at line 2) (line 3)"},
        ErrorCase{"DuplicateTopLevelKey", "rules: []\nrules: []\n",
                  "gpu.yaml: rules: duplicate key (first at line 1) (line 2)"},
        ErrorCase{"DuplicateOverrideLabel",
                  "rules:\n- resources:\n    overrides:\n      pod: {resource: pod}\n"
                  "      pod: {resource: node}\n",
                  "gpu.yaml: rules[0].resources.overrides.pod: duplicate key (first at line 4) "
                  "(line 5)"},
        ErrorCase{"BadMatchesRegex", "rules:\n- name:\n    matches: \"(\"\n",
                  "gpu.yaml: rules[0].name.matches: invalid regex \"(\": missing ): ( (line 3)"},
        ErrorCase{"BadIsRegex", "rules:\n- seriesFilters:\n  - is: x\n  - is: \"(\"\n",
                  "gpu.yaml: rules[0].seriesFilters[1].is: invalid regex \"(\": missing ): ( "
                  "(line 4)"},
        ErrorCase{"BadIsNotRegex", "externalRules:\n- seriesFilters:\n  - isNot: \"(\"\n",
                  "gpu.yaml: externalRules[0].seriesFilters[0].isNot: invalid regex \"(\": "
                  "missing ): ( (line 3)"},
        ErrorCase{"BothIsAndIsNot", "rules:\n- seriesFilters:\n  - is: a\n    isNot: b\n",
                  "gpu.yaml: rules[0].seriesFilters[0]: has both is and isNot; use one of them "
                  "per entry (line 3)"},
        ErrorCase{"NeitherIsNorIsNot", "rules:\n- seriesFilters:\n  - {}\n",
                  "gpu.yaml: rules[0].seriesFilters[0]: needs one of is or isNot (line 3)"},
        ErrorCase{"TwoGroupsWithoutAs", "rules:\n- name:\n    matches: ^(a)_(b)$\n",
                  "gpu.yaml: rules[0].name.as: required when name.matches has 2 or more capture "
                  "groups (line 3)"},
        ErrorCase{"ListWhereMap", "rules:\n- name: [a]\n",
                  "gpu.yaml: rules[0].name: expected a map, got a list (line 2)"},
        ErrorCase{"MapWhereList", "rules: {a: 1}\n",
                  "gpu.yaml: rules: expected a list, got a map (line 1)"},
        ErrorCase{"MapWhereString", "rules:\n- metricsQuery: {a: b}\n",
                  "gpu.yaml: rules[0].metricsQuery: expected a string, got a map (line 2)"},
        ErrorCase{"ScalarWhereOverrideMap",
                  "rules:\n- resources:\n    overrides:\n      pod: pod\n",
                  "gpu.yaml: rules[0].resources.overrides.pod: expected a map, got a scalar "
                  "(line 4)"},
        ErrorCase{"NotABool", "externalRules:\n- resources:\n    namespaced: maybe\n",
                  "gpu.yaml: externalRules[0].resources.namespaced: expected true or false, got "
                  "\"maybe\" (line 3)"},
        ErrorCase{"TopLevelList", "- rules\n", "gpu.yaml: expected a map, got a list"},
        ErrorCase{"NonStringKey", "rules:\n- ? [a]\n  : 1\n",
                  "gpu.yaml: rules[0]: keys must be strings, got a list (line 2)"}),
    [](const auto& info) { return std::string(info.param.name); });

// The parser's own message; what we promise is the file name and the line of the problem.
TEST(ParseConfigTest, SyntaxErrorNamesFileAndLine) {
  const std::string message = errorOf("rules:\n- seriesQuery: x\n  name: a: b\n");
  EXPECT_THAT(message, StartsWith("gpu.yaml: invalid YAML: "));
  EXPECT_THAT(message, HasSubstr("(line 3, column "));
}

// External input: whatever the text, the result is a config or a ConfigError, never a crash.
TEST(ParseConfigTest, HostileInputOnlyEverThrowsConfigError) {
  const std::string kInputs[] = {
      std::string(100000, '['),
      std::string(50000, '{') + std::string(50000, '}'),
      "rules: &r\n- seriesQuery: *r\n",
      "rules:\n- &x {seriesQuery: a}\n- *x\n- *x\n",
      "rules: *undefined\n",
      std::string("\0\xff\xfe rules", 10),
      "\trules: []\n",
      "rules:\n- seriesQuery: !!binary aGVsbG8=\n",
      "---\nrules: []\n---\nfoo: 1\n",
      "rules:\n- resources:\n    overrides:\n      ? {a: 1}\n      : {resource: pod}\n",
  };
  for (const std::string& input : kInputs) {
    SCOPED_TRACE(input.substr(0, 40));
    try {
      parseConfig(input, "hostile.yaml");
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), StartsWith("hostile.yaml: "));
    } catch (...) {
      ADD_FAILURE() << "unexpected exception type";
    }
  }
}

TEST(LoadConfigFileTest, UnreadableFileIsNamed) {
  const std::string missing = "/nonexistent/adapter/config.yaml";
  try {
    loadConfigFile(missing);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), StartsWith(missing + ": cannot read config file"));
  }
  EXPECT_THROW(loadConfigFile(sourceDir().string()), ConfigError);  // a directory
}

TEST(LoadConfigFileTest, ErrorsUseThePathAsSource) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "config_loader_test_bad.yaml";
  {
    std::FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("rules:\n- bogus: 1\n", file);
    std::fclose(file);
  }
  try {
    loadConfigFile(path.string());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), StartsWith(path.string() + ": rules[0].bogus: unknown field"));
  }
  std::filesystem::remove(path);
}

// The ConfigMap of the Alibaba walkthrough (seeds/000), unchanged.
TEST(PresetTest, AlibabaExporterConfigLoads) {
  const AdapterConfig config = loadConfigFile(repoFile("config/gpu-alibaba-exporter.yaml"));
  ASSERT_EQ(config.rules.size(), 2u);
  EXPECT_TRUE(config.external_rules.empty());
  const char* kAs[] = {"${1}_over_time", "${1}_current"};
  const char* kQuery[] = {"ceil(avg_over_time(<<.Series>>{<<.LabelMatchers>>}[3m]))",
                          "<<.Series>>{<<.LabelMatchers>>}"};
  for (int i = 0; i < 2; ++i) {
    const DiscoveryRule& rule = config.rules[i];
    EXPECT_EQ(rule.series_query, "{uuid!=\"\"}");
    EXPECT_EQ(rule.name.matches, "^nvidia_gpu_(.*)$");
    EXPECT_EQ(rule.name.as, kAs[i]);
    EXPECT_EQ(rule.metrics_query, kQuery[i]);
    ASSERT_EQ(rule.resources.overrides.size(), 3u);
    EXPECT_EQ(rule.resources.overrides.at("node_name").resource, "node");
    EXPECT_EQ(rule.resources.overrides.at("pod_name").resource, "pod");
    EXPECT_EQ(rule.resources.overrides.at("namespace_name").resource, "namespace");
  }
}

TEST(PresetTest, DcgmExporterConfigLoads) {
  const AdapterConfig config = loadConfigFile(repoFile("config/gpu-dcgm-exporter.yaml"));
  ASSERT_EQ(config.rules.size(), 2u);
  for (const DiscoveryRule& rule : config.rules) {
    EXPECT_EQ(rule.series_query, "{__name__=~\"^DCGM_FI_.*\",namespace!=\"\",pod!=\"\"}");
    EXPECT_EQ(rule.resources.overrides.at("namespace").resource, "namespace");
    EXPECT_EQ(rule.resources.overrides.at("pod").resource, "pod");
    EXPECT_EQ(rule.resources.overrides.at("Hostname").resource, "node");
    EXPECT_THAT(rule.metrics_query, StartsWith("avg("));
    EXPECT_THAT(rule.metrics_query, HasSubstr(" by (<<.GroupBy>>)"));
  }
  EXPECT_EQ(config.rules[1].name.matches, "^(DCGM_FI_.*)$");
  EXPECT_EQ(config.rules[1].name.as, "${1}_AVG");
  EXPECT_THAT(config.rules[1].metrics_query, HasSubstr("avg_over_time("));
  EXPECT_THAT(config.rules[1].metrics_query, HasSubstr("[1m]"));
}

TEST(PresetTest, UpstreamSampleConfigLoads) {
  const AdapterConfig config =
      loadConfigFile((sourceDir() / "testdata/upstream-sample-config.yaml").string());
  ASSERT_EQ(config.rules.size(), 4u);
  EXPECT_EQ(config.rules[0].name.matches, "^container_(.*)_seconds_total$");
  ASSERT_EQ(config.rules[1].series_filters.size(), 1u);
  EXPECT_FALSE(config.rules[1].series_filters[0].is);
  EXPECT_EQ(config.rules[2].resources.template_text, "<<.Resource>>");
  EXPECT_EQ(config.rules[3].name.as, "cheesy_goodness");
  EXPECT_EQ(config.rules[3].resources.overrides.at("brand").group, "cheese.io");
  ASSERT_EQ(config.external_rules.size(), 2u);
  EXPECT_TRUE(config.external_rules[0].resources.namespaced);
  EXPECT_FALSE(config.external_rules[1].resources.namespaced);
  ASSERT_TRUE(config.resource_rules.has_value());
  EXPECT_EQ(config.resource_rules->window, "1m");
  EXPECT_EQ(config.resource_rules->memory.container_label, "container");
}

TEST(FormatConfigErrorTest, FallsBackToTheNearestRecordedParentLine) {
  AdapterConfig config;
  config.source = "x.yaml";
  config.lines["rules[2]"] = 7;
  config.lines["rules[2].name"] = 9;
  EXPECT_EQ(formatConfigError(config, "rules[2].name.as", "p"),
            "x.yaml: rules[2].name.as: p (line 9)");
  EXPECT_EQ(formatConfigError(config, "rules[2].metricsQuery", "p"),
            "x.yaml: rules[2].metricsQuery: p (line 7)");
  EXPECT_EQ(formatConfigError(config, "externalRules[0]", "p"), "x.yaml: externalRules[0]: p");
  EXPECT_EQ(formatConfigError(config, "", "p"), "x.yaml: p");
}

TEST(ParseConfigTest, ReadsBackendsAndTheRulesThatNameThem) {
  const AdapterConfig config = parseConfig(R"(
backends:
  thanos:
    url: https://thanos-query.monitoring:10902/
    verb: POST
    caFile: /etc/ca.crt
    clientCertFile: /etc/tls.crt
    clientKeyFile: /etc/tls.key
    tokenFile: /var/run/token
    timeout: 15s
  mimir:
    url: http://mimir:8080/prometheus
    headers:
      X-Scope-OrgID: team-gpu
      x-extra: [a, b]
    basicAuth: {username: gpu, passwordFile: /etc/password}
    optional: true
rules:
- seriesQuery: 'a'
  metricsQuery: 'b'
  backend: thanos
- seriesQuery: 'c'
  metricsQuery: 'd'
externalRules:
- seriesQuery: 'e'
  metricsQuery: 'f'
  backend: mimir
resourceRules:
  backend: thanos
forecastRules:
- {name: demand, query: q, backend: mimir}
)",
                                           "b.yaml");
  ASSERT_EQ(config.backends.size(), 2u);
  const Backend& thanos = config.backends[0];
  EXPECT_EQ(thanos.name, "thanos");
  EXPECT_EQ(thanos.url, "https://thanos-query.monitoring:10902/");
  EXPECT_EQ(thanos.verb, "POST");
  EXPECT_EQ(thanos.ca_file, "/etc/ca.crt");
  EXPECT_EQ(thanos.client_cert_file, "/etc/tls.crt");
  EXPECT_EQ(thanos.client_key_file, "/etc/tls.key");
  EXPECT_EQ(thanos.token_file, "/var/run/token");
  EXPECT_EQ(thanos.timeout, std::chrono::milliseconds(15000));
  EXPECT_FALSE(thanos.optional);
  const Backend& mimir = config.backends[1];
  EXPECT_EQ(mimir.headers, (std::vector<std::pair<std::string, std::string>>{
                               {"X-Scope-OrgID", "team-gpu"}, {"x-extra", "a"}, {"x-extra", "b"}}));
  EXPECT_EQ(mimir.basic_auth_username, "gpu");
  EXPECT_EQ(mimir.basic_auth_password_file, "/etc/password");
  EXPECT_TRUE(mimir.optional);
  EXPECT_FALSE(mimir.timeout);
  EXPECT_EQ(config.rules[0].backend, "thanos");
  EXPECT_EQ(config.rules[1].backend, "default");
  EXPECT_EQ(config.external_rules[0].backend, "mimir");
  EXPECT_EQ(config.resource_rules->backend, "thanos");
  EXPECT_EQ(config.forecast_rules[0].backend, "mimir");
}

}  // namespace
}  // namespace metrics_adapter::config
