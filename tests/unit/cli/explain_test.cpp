#include "cli/explain/explain.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/check_config/check_config.h"
#include "metrics_adapter/config/config.h"
#include "unit/net/fake_http_server.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::cli {
namespace {

using Labels = std::map<std::string, std::string>;

TEST(SeriesFileTest, TextLinesGiveNameAndLabels) {
  auto lines = parseSeriesFile(
      "# a comment\n"
      "\n"
      "nvidia_gpu_duty_cycle{namespace_name=\"default\",pod_name=\"a\"}\n"
      "  up{job=\"gpu\", instance='x:1'}\r\n"
      "{__name__=\"odd\",msg=\"say \\\"hi\\\"\"}\n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].name, "nvidia_gpu_duty_cycle");
  EXPECT_EQ(lines[0].labels, (Labels{{"namespace_name", "default"}, {"pod_name", "a"}}));
  EXPECT_EQ(lines[1].name, "up");
  EXPECT_EQ(lines[1].labels, (Labels{{"job", "gpu"}, {"instance", "x:1"}}));
  EXPECT_EQ(lines[2].name, "odd");  // __name__ is the name, not a label
  EXPECT_EQ(lines[2].labels, (Labels{{"msg", "say \"hi\""}}));
}

TEST(SeriesFileTest, PrometheusSeriesJsonAndBareArray) {
  const std::string answer =
      R"({"status":"success","data":[{"__name__":"a","pod":"p"},{"__name__":"b"}]})";
  auto lines = parseSeriesFile(answer);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].name, "a");
  EXPECT_EQ(lines[0].labels, (Labels{{"pod", "p"}}));
  EXPECT_EQ(lines[1].name, "b");
  EXPECT_TRUE(lines[1].labels.empty());

  auto bare = parseSeriesFile(R"([{"__name__":"c","x":"y"}])");
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare[0].name, "c");
}

TEST(SeriesFileTest, MalformedInputNamesTheLine) {
  struct Case {
    std::string text;
    std::string expected;  // part of the message
  };
  const std::vector<Case> cases = {
      {"ok{a=\"b\"}\nbad{a!=\"b\"}\n", "line 2"},  // a series has only =
      {"ok\n{a=\"b\"}\n", "line 2"},               // no name
      {"x{a=\"b\"\n", "line 1"},                   // unterminated
      {"x{a=\"b} extra\n", "line 1"},
      {"x y\n", "line 1"},
      {R"([{"pod":"p"}])", "no __name__"},
      {R"({"status":"success","data":{}})", "not a list"},
      {R"([{"__name__":1}])", "not a string"},
  };
  for (const auto& c : cases) {
    try {
      parseSeriesFile(c.text);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos)
          << c.text << " -> " << e.what();
    }
  }
}

TEST(SeriesSelectorTest, MatchesWithPrometheusSemantics) {
  const SeriesLine gpu{.name = "nvidia_gpu_duty_cycle", .labels = {{"uuid", "GPU-1"}}};
  const SeriesLine bare{.name = "up", .labels = {}};
  struct Case {
    std::string selector;
    const SeriesLine* series;
    bool expected;
  };
  const std::vector<Case> cases = {
      {"{uuid!=\"\"}", &gpu, true},
      {"{uuid!=\"\"}", &bare, false},  // a missing label is ""
      {"{uuid=\"\"}", &bare, true},
      {"nvidia_gpu_duty_cycle", &gpu, true},
      {"nvidia_gpu_duty_cycle", &bare, false},
      {"{__name__=~\"nvidia_gpu_.*\"}", &gpu, true},
      {"{__name__=~\"gpu\"}", &gpu, false},  // regexes are anchored
      {"{__name__!~\"up\"}", &bare, false},
      {"up{job=\"x\"}", &bare, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(selectorMatches(parseSeriesSelector(c.selector), *c.series), c.expected)
        << c.selector << " on " << c.series->name;
  }
  EXPECT_THROW(parseSeriesSelector("sum(up)"), std::invalid_argument);
  EXPECT_THROW(parseSeriesSelector("up or down"), std::invalid_argument);
}

MissFacts facts(std::vector<std::string> other_resources, std::size_t seen, std::size_t rejected,
                std::size_t accepted) {
  MissFacts result;
  result.other_resources = std::move(other_resources);
  result.series_seen = seen;
  result.related_series_rejected = rejected;
  result.related_series_accepted = accepted;
  return result;
}

TEST(ClassifyMissTest, ReasonsInOrder) {
  struct Case {
    MissFacts facts;
    MissReason expected;
  };
  const std::vector<Case> cases = {
      // The name is served elsewhere: whatever else is true, the resource is the problem.
      {facts({"nodes"}, 10, 0, 0), MissReason::kOtherResource},
      {facts({}, 0, 0, 0), MissReason::kNoSeries},
      {facts({}, 4, 2, 0), MissReason::kFilteredOut},
      // Some rule takes a series named like it, but names it differently: a naming problem.
      {facts({}, 4, 1, 1), MissReason::kNoRuleNamesIt},
      {facts({}, 4, 0, 0), MissReason::kNoRuleNamesIt},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(classifyMiss(cases[i].facts), cases[i].expected) << "case " << i;
  }
}

TEST(ClosestNamesTest, ContainingNamesFirstThenEditDistance) {
  const std::vector<std::string> names = {"memory_used_bytes_current", "duty_cycle_current",
                                          "duty_cycle_over_time", "temperature_celsius_current",
                                          "duty_cycel_current"};
  // "duty_cycle" is contained in two names; then the others by distance.
  auto closest = closestNames("duty_cycle", names, 3);
  ASSERT_EQ(closest.size(), 3u);
  EXPECT_EQ(closest[0], "duty_cycle_current");  // contains it, shorter distance
  EXPECT_EQ(closest[1], "duty_cycle_over_time");
  EXPECT_EQ(closest[2], "duty_cycel_current");

  auto typo = closestNames("duty_cycle_curent", names, 1);
  ASSERT_EQ(typo.size(), 1u);
  EXPECT_EQ(typo[0], "duty_cycle_current");
  EXPECT_TRUE(closestNames("x", {}, 5).empty());
}

TEST(SeriesNamedLikeTest, EqualOrContaining) {
  EXPECT_TRUE(seriesNamedLike("nvidia_gpu_duty_cycle", "duty_cycle"));
  EXPECT_TRUE(seriesNamedLike("up", "up"));
  EXPECT_FALSE(seriesNamedLike("up", "duty_cycle"));
  EXPECT_FALSE(seriesNamedLike("up", ""));
}

constexpr const char* kAlibabaRules = R"(rules:
- seriesQuery: '{uuid!=""}'
  resources:
    overrides:
      pod_name: {resource: "pod"}
      namespace_name: {resource: "namespace"}
  name:
    matches: ^nvidia_gpu_(.*)$
    as: "${1}_current"
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
- seriesQuery: 'nothing_here'
  metricsQuery: <<.Series>>
)";

TEST(DiscoverTest, SeriesFileFeedsTheServersRelist) {
  auto config = config::parseConfig(kAlibabaRules, "gpu.yaml");
  std::vector<std::string> warnings;
  auto rule_set = compileOffline(config, &warnings);
  auto file = std::make_shared<SeriesFilePrometheus>(parseSeriesFile(
      "nvidia_gpu_duty_cycle{uuid=\"GPU-1\",pod_name=\"a\",namespace_name=\"default\"}\n"
      "nvidia_gpu_duty_cycle{uuid=\"GPU-2\",pod_name=\"b\",namespace_name=\"default\"}\n"
      "up{job=\"gpu\"}\n"));
  DiscoveryRun run = relistOnce(withBackends(rule_set, prometheus::BackendSet::single(file)),
                                discovery::RelistOptions{});
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(file->unselectable().empty());
  EXPECT_TRUE(run.errors.empty());
  // `up` has no uuid, so the first rule's seriesQuery does not select it.
  EXPECT_EQ(run.series["{uuid!=\"\"}"].size(), 1u);
  EXPECT_TRUE(run.series["nothing_here"].empty());

  ASSERT_EQ(run.findings.size(), 2u);
  ASSERT_NE(run.findings[0], nullptr);
  EXPECT_EQ(run.findings[0]->series_seen, 2u);  // both GPU series, as the relist counts them
  EXPECT_NE(run.snapshot->findCustom("pods", "duty_cycle_current"), nullptr);
  EXPECT_NE(run.snapshot->findCustom("namespaces", "duty_cycle_current"), nullptr);
  EXPECT_EQ(run.snapshot->findCustom("nodes", "duty_cycle_current"), nullptr);
  ASSERT_NE(run.findings[1], nullptr);
  EXPECT_EQ(run.findings[1]->series_seen, 0u);
}

// A Prometheus whose series calls fail, to see a relist record the failure per seriesQuery.
class FailingPrometheus : public prometheus::PrometheusApi {
 public:
  prometheus::QueryResult query(const std::string&, prometheus::Clock::time_point,
                                std::chrono::milliseconds) override {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0, "down");
  }
  prometheus::RangeResult queryRange(const std::string&, prometheus::Clock::time_point,
                                     prometheus::Clock::time_point, std::chrono::milliseconds,
                                     std::chrono::milliseconds) override {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0, "down");
  }
  void series(const std::string&, prometheus::Clock::time_point, std::chrono::milliseconds,
              const prometheus::SeriesVisitor&) override {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0, "down");
  }
};

TEST(DiscoverTest, AFailedSeriesCallIsAnErrorOfItsQueryAndFindsNothing) {
  auto config = config::parseConfig(kAlibabaRules, "gpu.yaml");
  std::vector<std::string> warnings;
  DiscoveryRun run = relistOnce(
      withBackends(compileOffline(config, &warnings),
                   prometheus::BackendSet::single(std::make_shared<FailingPrometheus>())),
      discovery::RelistOptions{});
  EXPECT_EQ(run.errors.size(), 2u);
  EXPECT_EQ((run.errors[{"default", "nothing_here"}]), "down");
  EXPECT_TRUE(run.series.empty());
  EXPECT_TRUE(run.snapshot->customMetrics().empty());
}

std::string writeExplainFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CheckConfigTest, ListsWhatEachRuleExposesAndWarnsAboutEmptyRules) {
  const std::string config = writeExplainFile("check_ok.yaml", kAlibabaRules);
  const std::string series = writeExplainFile(
      "check_series.txt",
      "nvidia_gpu_duty_cycle{uuid=\"GPU-1\",pod_name=\"a\",namespace_name=\"default\"}\n");
  std::ostringstream out, err;
  std::vector<std::string> args = {config, "--series-file", series};
  EXPECT_EQ(runCheckConfig(args, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("  pods/duty_cycle_current\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("  namespaces/duty_cycle_current\n"), std::string::npos);
  EXPECT_NE(out.str().find("warning: rules[1]: its seriesQuery selects no series"),
            std::string::npos)
      << out.str();
}

TEST(CheckConfigTest, BrokenConfigExitsOneNamingTheField) {
  const std::string config =
      writeExplainFile("check_bad.yaml",
                       "rules:\n- seriesQuery: up\n  name:\n    matches: '('\n"
                       "  metricsQuery: <<.Series>>\n");
  std::ostringstream out, err;
  std::vector<std::string> args = {config};
  EXPECT_EQ(runCheckConfig(args, out, err), 1);
  EXPECT_NE(err.str().find("rules[0].name.matches"), std::string::npos) << err.str();
}

TEST(CheckConfigTest, BadFlagsExitOne) {
  std::ostringstream out, err;
  std::vector<std::string> none;
  EXPECT_EQ(runCheckConfig(none, out, err), 1);
  std::vector<std::string> unknown = {"c.yaml", "--bogus=1"};
  EXPECT_EQ(runCheckConfig(unknown, out, err), 1);
  EXPECT_NE(err.str().find("--bogus"), std::string::npos);
}

// A Prometheus that answers only callers with the tenant header and the bearer token.
class GuardedPrometheus {
 public:
  static constexpr const char* kToken = "s3cret";

  GuardedPrometheus()
      : server_([](const net::testing::RecordedRequest& request) {
          net::testing::Reply reply;
          if (request.header("x-scope-orgid") != "team-a" ||
              request.header("authorization") != std::string("Bearer ") + kToken) {
            reply.status = 401;
            reply.content_type = "text/plain";
            reply.body = "unauthorized";
          } else if (request.path() == "/api/v1/series") {
            reply.body = R"({"status":"success","data":[{"__name__":"nvidia_gpu_duty_cycle",)"
                         R"("uuid":"GPU-1","pod_name":"a","namespace_name":"default"}]})";
          } else {
            reply.body =
                R"({"status":"success","data":{"resultType":"vector","result":[{"metric":)"
                R"({"pod_name":"a","namespace_name":"default"},"value":[1700000000,"37"]}]}})";
          }
          return reply;
        }) {}

  std::string url() const { return server_.url(); }
  std::vector<net::testing::RecordedRequest> requests() const { return server_.requests(); }

 private:
  net::testing::FakeHttpServer server_;
};

struct Explained {
  int code = -1;
  std::string out;  // stdout and stderr together, for failure messages

  bool has(const std::string& text) const { return out.find(text) != std::string::npos; }
};

Explained explain(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = runExplain(args, out, err);
  return {code, out.str() + err.str()};
}

TEST(ExplainPrometheusFlagsTest, HeadersTokenAndVerbReachPrometheus) {
  GuardedPrometheus prometheus;
  net::testing::TempDir dir;
  const std::string config = dir.write("gpu.yaml", kAlibabaRules);
  const std::string token = dir.write("token", std::string(GuardedPrometheus::kToken) + "\n");
  const std::vector<std::string> request = {
      "--config",           config,        "--prometheus-url", prometheus.url(), "--metric",
      "duty_cycle_current", "--namespace", "default",          "--name",         "a"};

  std::vector<std::string> args = request;
  args.insert(args.end(), {"--prometheus-header", "X-Scope-OrgID=team-a",
                           "--prometheus-token-file=" + token, "--prometheus-verb=POST"});
  const Explained allowed = explain(args);
  EXPECT_EQ(allowed.code, 0) << allowed.out;
  EXPECT_TRUE(
      allowed.has("PromQL: nvidia_gpu_duty_cycle{namespace_name=\"default\",pod_name=\"a\"}"))
      << allowed.out;
  EXPECT_TRUE(allowed.has("\"value\": \"37\"")) << allowed.out;
  const auto calls = prometheus.requests();
  ASSERT_FALSE(calls.empty());
  bool queried = false;
  for (const auto& call : calls) {
    EXPECT_EQ(call.header("x-scope-orgid"), "team-a") << call.target;
    EXPECT_EQ(call.header("authorization"), "Bearer s3cret") << call.target;
    if (call.path() == "/api/v1/query") {
      queried = true;
      EXPECT_EQ(call.method, "POST");  // --prometheus-verb
    }
  }
  EXPECT_TRUE(queried);

  // Without the token the same Prometheus refuses discovery, and explain says so.
  std::vector<std::string> no_token = request;
  no_token.insert(no_token.end(), {"--prometheus-header", "X-Scope-OrgID=team-a"});
  const Explained refused = explain(no_token);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_TRUE(refused.has("failed")) << refused.out;
}

// Before, the namespace's own metric was explained as GET .../namespaces/default/<metric>, a path
// the server answers 400; the server routes .../namespaces/default/metrics/<metric>.
TEST(ExplainRequestTest, TheNamespacesOwnMetricIsTheRouteTheServerServes) {
  GuardedPrometheus prometheus;
  net::testing::TempDir dir;
  const std::vector<std::string> args = {
      "--config=" + dir.write("gpu.yaml", kAlibabaRules),
      "--prometheus-url=" + prometheus.url(),
      "--prometheus-token-file=" + dir.write("token", GuardedPrometheus::kToken),
      "--prometheus-header=X-Scope-OrgID=team-a",
      "--metric=duty_cycle_current",
      "--resource=namespaces",
      "--namespace=default"};
  const Explained result = explain(args);
  EXPECT_EQ(result.code, 0) << result.out;
  EXPECT_TRUE(
      result.has("request: GET /apis/custom.metrics.k8s.io/v1beta2/namespaces/default/metrics/"
                 "duty_cycle_current\n"))
      << result.out;
  EXPECT_TRUE(result.has("\"kind\": \"Namespace\"")) << result.out;
}

}  // namespace
}  // namespace metrics_adapter::cli
