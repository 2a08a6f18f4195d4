#include "metrics_adapter/discovery/naming.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace metrics_adapter::discovery {
namespace {

config::DiscoveryRule ruleWith(std::string matches, std::string as,
                               std::vector<config::SeriesFilter> filters = {}) {
  config::DiscoveryRule rule;
  rule.name.matches = std::move(matches);
  rule.name.as = std::move(as);
  rule.series_filters = std::move(filters);
  return rule;
}

struct NamingCase {
  const char* matches;
  const char* as;
  const char* series;
  std::optional<std::string> expected;
};

// docs/api-contract.md "prometheus-adapter: naming" and Go's regexp.Expand: unanchored search,
// first match, $n ${n} $name ${name} $$, the longest run of letters/digits/underscores is the
// reference, unknown references are empty, a malformed reference keeps its '$'.
TEST(SeriesNamerTest, NameMatchesAndAs) {
  const NamingCase kCases[] = {
      // the legacy default rules
      {"^container_(.*)_seconds_total$", "", "container_cpu_usage_seconds_total", "cpu_usage"},
      {"^(.*)_total$", "", "http_requests_total", "http_requests"},
      {"^container_(.*)$", "", "container_memory_working_set_bytes", "memory_working_set_bytes"},
      // the GPU walkthroughs
      {"^nvidia_gpu_(.*)$", "${1}_current", "nvidia_gpu_duty_cycle", "duty_cycle_current"},
      {"^nvidia_gpu_(.*)$", "${1}_over_time", "nvidia_gpu_duty_cycle", "duty_cycle_over_time"},
      {"^(DCGM_FI_.*)$", "${1}_AVG", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_UTIL_AVG"},
      {"^DCGM_FI_.*$", "", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_UTIL"},
      // $1_per_second names group "1_per_second", which does not exist
      {"^(.*)_total$", "$1_per_second", "http_requests_total", ""},
      {"^(.*)_total$", "${1}_per_second", "http_requests_total", "http_requests_per_second"},
      // no matches: the whole name; a fixed `as` renames
      {"", "", "cheddar", "cheddar"},
      {"", "cheesy_goodness", "cheddar", "cheesy_goodness"},
      // unanchored: $0 is the matched part only; the first match wins
      {"requests", "", "http_requests_total", "requests"},
      {"_([a-z]+)_", "", "a_bc_de_f", "bc"},
      {"^(.*)_total$", "$0", "http_requests_total", "http_requests_total"},
      // $$ is a literal dollar
      {"^(.*)_total$", "$$1", "http_requests_total", "$1"},
      {"^(.*)_total$", "${1}$$", "http_requests_total", "http_requests$"},
      // named groups
      {"^(?P<base>.*)_total$", "${base}_rate", "http_requests_total", "http_requests_rate"},
      {"^(?P<base>.*)_total$", "$base", "http_requests_total", "http_requests"},
      {"^(?P<base>.*)_total$", "$1", "http_requests_total", "http_requests"},
      {"^(?P<base>.*)_total$", "x${nope}y", "http_requests_total", "xy"},
      // out of range, leading zeros, unmatched optional groups
      {"^(.*)_total$", "a${7}b", "http_requests_total", "ab"},
      {"^(.*)_total$", "a$7b", "http_requests_total", "a"},  // group "7b"
      {"^(.*)_total$", "a${01}b", "http_requests_total", "ab"},
      {"^(a)?(b)$", "x${1}y${2}", "b", "xyb"},
      // malformed references keep the '$'
      {"^(.*)_total$", "$-x", "http_requests_total", "$-x"},
      {"^(.*)_total$", "${1", "http_requests_total", "${1"},
      {"^(.*)_total$", "${}", "http_requests_total", "${}"},
      {"^(.*)_total$", "cost$", "http_requests_total", "cost$"},
      {"^(.*)_total$", "${1}-${1}", "http_requests_total", "http_requests-http_requests"},
      // non-ASCII letters extend a reference too (Go's unicode.IsLetter)
      {"^(.*)_total$", "${1}$é!", "http_requests_total", "http_requests!"},
      {"^(.*)_total$", "$1é", "http_requests_total", ""},
      {"^(.*)_total$", "${1}$€", "http_requests_total", "http_requests$€"},
      // non-capturing groups do not count toward the default
      {"^(?:container_)(.*)$", "", "container_fs_reads", "fs_reads"},
      // the implicit filter
      {"^container_(.*)$", "", "node_cpu_seconds_total", std::nullopt},
  };
  for (const NamingCase& c : kCases) {
    SCOPED_TRACE(std::string(c.matches) + " as " + c.as + " on " + c.series);
    const SeriesNamer namer(ruleWith(c.matches, c.as), "c.yaml: rules[0]");
    EXPECT_EQ(namer.metricName(c.series), c.expected);
  }
}

// docs/api-contract.md "prometheus-adapter: discovery": every `is` must match, no `isNot` may
// match, both as unanchored searches.
TEST(SeriesNamerTest, SeriesFilters) {
  const SeriesNamer namer(ruleWith("", "",
                                   {{.is = true, .pattern = "^http_"},
                                    {.is = false, .pattern = "_bucket$"},
                                    {.is = true, .pattern = "requests"}}),
                          "c.yaml: rules[0]");
  EXPECT_EQ(namer.metricName("http_requests_total"), "http_requests_total");
  EXPECT_EQ(namer.metricName("http_requests_bucket"), std::nullopt);
  EXPECT_EQ(namer.metricName("grpc_requests_total"), std::nullopt);
  EXPECT_EQ(namer.metricName("http_latency_seconds"), std::nullopt);
}

TEST(SeriesNamerTest, FiltersAndMatchesCombine) {
  const SeriesNamer namer(ruleWith("^container_(.*)_total$", "",
                                   {{.is = false, .pattern = "^container_.*_seconds_total$"}}),
                          "c.yaml: rules[1]");
  EXPECT_EQ(namer.metricName("container_network_receive_bytes_total"), "network_receive_bytes");
  EXPECT_EQ(namer.metricName("container_cpu_usage_seconds_total"), std::nullopt);
  EXPECT_EQ(namer.metricName("node_network_receive_bytes_total"), std::nullopt);
}

std::string constructionError(const config::DiscoveryRule& rule) {
  try {
    SeriesNamer namer(rule, "c.yaml: rules[2]");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

// The naming part of the startup validation, with file, rule and field in each message
// (docs/api-contract.md "prometheus-adapter: config validation at load").
TEST(SeriesNamerTest, InvalidRules) {
  EXPECT_EQ(constructionError(ruleWith("^(a)_(b)$", "")),
            "c.yaml: rules[2].name.as: required when name.matches has 2 or more capture groups");
  EXPECT_EQ(constructionError(ruleWith("(", "")),
            "c.yaml: rules[2].name.matches: invalid regex \"(\": missing ): (");
  EXPECT_EQ(constructionError(
                ruleWith("", "", {{.is = true, .pattern = "a"}, {.is = false, .pattern = "("}})),
            "c.yaml: rules[2].seriesFilters[1].isNot: invalid regex \"(\": missing ): (");
  EXPECT_EQ(constructionError(ruleWith("", "", {{.is = true, .pattern = "("}})),
            "c.yaml: rules[2].seriesFilters[0].is: invalid regex \"(\": missing ): (");
  EXPECT_EQ(constructionError(ruleWith("^(a)_(b)$", "$2$1")), "<no error>");
}

TEST(SeriesNamerTest, MovedNamerStillWorks) {
  SeriesNamer first(ruleWith("^(.*)_total$", ""), "c.yaml: rules[0]");
  SeriesNamer second = std::move(first);
  EXPECT_EQ(second.metricName("a_total"), "a");
}

}  // namespace
}  // namespace metrics_adapter::discovery
