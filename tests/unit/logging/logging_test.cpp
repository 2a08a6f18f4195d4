#include "metrics_adapter/logging/logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace metrics_adapter::logging {
namespace {

using std::chrono::microseconds;

TEST(RedactTargetTest, CredentialLikeParametersLoseTheirValues) {
  struct Case {
    const char* target;
    const char* expected;
  };
  const Case cases[] = {
      {"/apis/custom.metrics.k8s.io/v1beta1", "/apis/custom.metrics.k8s.io/v1beta1"},
      {"/x?labelSelector=app%3Dweb", "/x?labelSelector=app%3Dweb"},
      {"/x?token=abc", "/x?token=REDACTED"},
      {"/x?a=1&access_token=abc&b=2", "/x?a=1&access_token=REDACTED&b=2"},
      {"/x?Password=p&API_KEY=k&client_secret=s",
       "/x?Password=REDACTED&API_KEY=REDACTED&client_secret=REDACTED"},
      {"/x?token", "/x?token"},  // no value to hide
      {"/x?", "/x?"},
  };
  for (const auto& c : cases) EXPECT_EQ(redactTarget(c.target), c.expected) << c.target;
}

AccessEntry sampleEntry() {
  AccessEntry entry;
  entry.user = "system:serviceaccount:kube-system:horizontal-pod-autoscaler";
  entry.verb = "GET";
  entry.target = "/apis/custom.metrics.k8s.io/v1beta1?token=secret";
  entry.code = 200;
  entry.latency = microseconds(1500);
  entry.remote = "10.0.0.1:5555";
  entry.promql_time = microseconds(250);
  return entry;
}

TEST(AccessEntryTest, JsonMembersCarryTheFieldsAndNoToken) {
  auto fields =
      nlohmann::json::parse("{" + formatAccessEntry(sampleEntry(), LogFormat::kJson) + "}");
  EXPECT_EQ(fields["verb"], "GET");
  EXPECT_EQ(fields["path"], "/apis/custom.metrics.k8s.io/v1beta1?token=REDACTED");
  EXPECT_EQ(fields["code"], 200);
  EXPECT_DOUBLE_EQ(fields["latency_ms"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(fields["promql_ms"].get<double>(), 0.25);
  EXPECT_EQ(fields["user"], "system:serviceaccount:kube-system:horizontal-pod-autoscaler");
  EXPECT_EQ(fields["remote"], "10.0.0.1:5555");
}

TEST(AccessEntryTest, TextLineNamesVerbPathCodeLatencyAndUser) {
  std::string line = formatAccessEntry(sampleEntry(), LogFormat::kText);
  EXPECT_EQ(line.rfind("GET /apis/custom.metrics.k8s.io/v1beta1?token=REDACTED 200 1.500ms", 0), 0u)
      << line;
  EXPECT_NE(line.find("user=\"system:serviceaccount:kube-system:horizontal-pod-autoscaler\""),
            std::string::npos);
  EXPECT_EQ(line.find("secret"), std::string::npos);
}

TEST(AccessEntryTest, UnknownFieldsAreLeftOut) {
  AccessEntry entry;
  entry.verb = "GET";
  entry.target = "/healthz";
  entry.code = 200;
  auto fields = nlohmann::json::parse("{" + formatAccessEntry(entry, LogFormat::kJson) + "}");
  EXPECT_FALSE(fields.contains("user"));
  EXPECT_FALSE(fields.contains("promql_ms"));
}

std::string logThroughJson(const std::string& logger_name, const std::string& payload) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  sink->set_formatter(makeJsonFormatter());
  spdlog::logger logger(logger_name, sink);
  logger.warn("{}", payload);
  return out.str();
}

TEST(JsonFormatterTest, OneObjectPerLineWithTsLevelMsg) {
  std::string line = logThroughJson("metrics-adapter", "bad \"rule\"\nsecond line");
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // the newline in the message is escaped
  auto object = nlohmann::json::parse(line);
  EXPECT_EQ(object["level"], "warning");
  EXPECT_EQ(object["msg"], "bad \"rule\"\nsecond line");
  std::string ts = object["ts"];
  ASSERT_EQ(ts.size(), std::string("2024-01-02T03:04:05.678Z").size()) << ts;
  EXPECT_EQ(ts[10], 'T');
  EXPECT_EQ(ts.back(), 'Z');
}

TEST(JsonFormatterTest, AccessLinesMergeTheirFields) {
  auto object = nlohmann::json::parse(
      logThroughJson("access", formatAccessEntry(sampleEntry(), LogFormat::kJson)));
  EXPECT_EQ(object["msg"], "request");
  EXPECT_EQ(object["code"], 200);
  EXPECT_EQ(object["verb"], "GET");
}

TEST(VerbosityTest, UpstreamLevels) {
  struct Case {
    int verbosity;
    spdlog::level::level_enum level;
  };
  // Upstream (klog): -v=6 adds one line per request; 8+ adds bodies (trace here).
  const Case cases[] = {{0, spdlog::level::info},  {1, spdlog::level::info},
                        {5, spdlog::level::info},  {6, spdlog::level::debug},
                        {7, spdlog::level::debug}, {8, spdlog::level::trace},
                        {10, spdlog::level::trace}};
  for (const auto& c : cases) EXPECT_EQ(levelForVerbosity(c.verbosity), c.level) << c.verbosity;
}

}  // namespace
}  // namespace metrics_adapter::logging
