#include "metrics_adapter/prometheus/prometheus_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "metrics_adapter/telemetry/self_metrics.h"
#include "metrics_adapter/text/ascii.h"
#include "prometheus/request_headers.h"
#include "unit/net/deflate_text.h"
#include "unit/prometheus/fake_prometheus.h"

namespace metrics_adapter::prometheus {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::FakePrometheus;
using testing::formValue;
using testing::RecordedRequest;
using testing::Reply;
using Kind = PrometheusError::Kind;

constexpr milliseconds kGenerous{10000};  // calls that must succeed; never reached
const Clock::time_point kAt{milliseconds(1700000000123)};

constexpr milliseconds kStep{60000};

const std::string kEmptyVector =
    R"({"status":"success","data":{"resultType":"vector","result":[]}})";

Reply json(std::string body, int status = 200) {
  Reply reply;
  reply.status = status;
  reply.body = std::move(body);
  return reply;
}

FakePrometheus::Handler always(Reply reply) {
  return [reply](const RecordedRequest&) { return reply; };
}

PrometheusClientOptions optionsFor(const FakePrometheus& fake, const std::string& suffix = "") {
  PrometheusClientOptions options;
  options.url = fake.url() + suffix;
  options.client_timeout = kGenerous;
  return options;
}

// Runs `call` and returns the PrometheusError it must throw.
template <typename Call>
PrometheusError errorOf(Call&& call) {
  try {
    call();
  } catch (const PrometheusError& e) {
    return e;
  }
  ADD_FAILURE() << "no PrometheusError";
  return PrometheusError(Kind::kBadResponse, -1, "none");
}

// The parameters of a request, whichever of target or body carries them.
std::string paramsOf(const RecordedRequest& request) {
  return request.method == "POST" ? request.body : request.query();
}

TEST(PrometheusClientQueryTest, SendsQueryTimeAndTimeoutAndParsesTheVector) {
  FakePrometheus fake(always(json(R"({"status":"success","data":{"resultType":"vector","result":[)"
                                  R"({"metric":{"pod":"a"},"value":[1700000000.1,"1.5"]},)"
                                  R"({"metric":{"pod":"b"},"value":[1700000000.1,"NaN"]},)"
                                  R"({"metric":{"pod":"c"},"value":[1700000000.1,"+Inf"]},)"
                                  R"({"metric":{"pod":"d"},"value":[1700000000.1,"1e308"]}]}})")));
  PrometheusClient client(optionsFor(fake));

  const QueryResult result = client.query("sum(rate(x[1m]))", kAt, milliseconds(5000));

  ASSERT_EQ(result.samples.size(), 4u);
  EXPECT_EQ(result.samples[0].labels.at("pod"), "a");
  EXPECT_DOUBLE_EQ(result.samples[0].value, 1.5);
  EXPECT_TRUE(std::isnan(result.samples[1].value));
  EXPECT_EQ(result.samples[2].value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(result.samples[3].value, 1e308);

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path(), "/api/v1/query");
  EXPECT_EQ(formValue(requests[0].query(), "query"), "sum(rate(x[1m]))");
  EXPECT_EQ(formValue(requests[0].query(), "time"), "1700000000.123");
  EXPECT_EQ(formValue(requests[0].query(), "timeout"), "5s");
  EXPECT_EQ(requests[0].header("accept"), "application/json");
}

TEST(PrometheusClientQueryTest, TimeoutParameterIsTheEffectiveTimeout) {
  FakePrometheus fake(always(json(kEmptyVector)));
  PrometheusClientOptions options = optionsFor(fake);
  options.client_timeout = milliseconds(1500);
  PrometheusClient client(options);
  client.query("up", kAt, milliseconds(60000));  // capped by client_timeout
  client.query("up", kAt, milliseconds(250));
  client.query("up", kAt, milliseconds(0));  // no per-call limit: client_timeout
  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(formValue(requests[0].query(), "timeout"), "1500ms");
  EXPECT_EQ(formValue(requests[1].query(), "timeout"), "250ms");
  EXPECT_EQ(formValue(requests[2].query(), "timeout"), "1500ms");
}

// The value of an unlabelled metric in `exposition`, or -1 when it is absent.
double metricValue(const std::string& exposition, const std::string& name) {
  const auto at = exposition.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(exposition.substr(at + name.size() + 2));
}

TEST(PrometheusClientQueryTest, SamplesWithUnservableTimesAreLeftOutAndCounted) {
  FakePrometheus fake(always(json(
      R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"pod":"a"},"value":[1e300,"1"]},{"metric":{"pod":"b"},"value":[-1e300,"2"]},)"
      R"({"metric":{"pod":"c"},"value":[253402300800,"3"]},{"metric":{"pod":"d"},"value":[1700000000,"4"]}]}})")));
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  PrometheusClient client(optionsFor(fake), metrics);
  for (int answer = 0; answer < 2; ++answer) {
    const QueryResult result = client.query("up", kAt, kGenerous);
    ASSERT_EQ(result.samples.size(), 1u);
    EXPECT_EQ(result.samples[0].labels.at("pod"), "d");
    EXPECT_EQ(result.bad_samples, 3u);
  }
  const std::string exposition = metrics->exposition();
  EXPECT_EQ(metricValue(exposition, "metrics_adapter_prometheus_bad_samples_total"), 6)
      << exposition;
  // Calls are recorded in the SelfMetrics the client was given.
  EXPECT_NE(exposition.find(R"(endpoint="query",outcome="success"} 2)"), std::string::npos)
      << exposition;
}

TEST(PrometheusClientQueryTest, AwkwardPromQLArrivesIntactWithEitherVerb) {
  const std::string promql =
      "sum by (pod) (rate(http_requests_total{path=~\"/a|/b\", q!=\"x&y=z+1%\"}[5m]))\n"
      "  / on() group_left \"\xC3\xA9t\xC3\xA9 \xE2\x82\xAC #frag\" + 1";
  for (const std::string verb : {"GET", "POST"}) {
    FakePrometheus fake(always(json(kEmptyVector)));
    PrometheusClientOptions options = optionsFor(fake);
    options.verb = verb;
    PrometheusClient client(options);
    client.query(promql, kAt, kGenerous);
    const auto requests = fake.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].method, verb);
    EXPECT_EQ(formValue(paramsOf(requests[0]), "query"), promql) << verb;
  }
}

TEST(PrometheusClientQueryTest, LongQueriesGoByPostAsAForm) {
  FakePrometheus fake(always(json(kEmptyVector)));
  PrometheusClientOptions options = optionsFor(fake);
  options.post_threshold_bytes = 100;
  PrometheusClient client(options);

  std::string long_query = "up{pod=~\"";
  for (int i = 0; i < 40; ++i) long_query += "pod-" + std::to_string(i) + "|";
  long_query += "\"}";
  client.query("up", kAt, kGenerous);
  client.query(long_query, kAt, kGenerous);

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[1].method, "POST");
  EXPECT_EQ(requests[1].target, "/api/v1/query");
  EXPECT_EQ(requests[1].header("content-type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(formValue(requests[1].body, "query"), long_query);
  EXPECT_EQ(formValue(requests[1].body, "time"), "1700000000.123");
}

TEST(PrometheusClientQueryTest, BasePathAndQueryParametersAreKeptOnEveryCall) {
  FakePrometheus fake([](const RecordedRequest& request) {
    if (request.path().ends_with("/series")) return json(R"({"status":"success","data":[]})");
    return json(kEmptyVector);
  });
  for (const std::string verb : {"GET", "POST"}) {
    PrometheusClientOptions options = optionsFor(fake, "/prom/?dedup=true&partial_response=false");
    options.verb = verb;
    PrometheusClient client(options);
    client.query("up", kAt, kGenerous);
    client.series("up", kAt, kGenerous, [](auto, const auto&) {});
  }
  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 4u);
  const std::string kept = "dedup=true&partial_response=false";
  EXPECT_EQ(requests[0].path(), "/prom/api/v1/query");
  EXPECT_TRUE(requests[0].query().starts_with(kept + "&query=")) << requests[0].target;
  EXPECT_EQ(requests[1].path(), "/prom/api/v1/series");
  EXPECT_TRUE(requests[1].query().starts_with(kept + "&match")) << requests[1].target;
  EXPECT_EQ(requests[2].target, "/prom/api/v1/query?" + kept);
  EXPECT_EQ(formValue(requests[2].body, "query"), "up");
  EXPECT_EQ(requests[3].target, "/prom/api/v1/series?" + kept);
  EXPECT_EQ(formValue(requests[3].body, "match[]"), "up");
}

const std::string kEmptyMatrix =
    R"({"status":"success","data":{"resultType":"matrix","result":[]}})";

TEST(PrometheusClientRangeTest, SendsQueryStartEndStepAndTimeoutAndParsesTheMatrix) {
  FakePrometheus fake(always(json(R"({"status":"success","data":{"resultType":"matrix","result":[)"
                                  R"({"metric":{"pod":"a"},"values":[[1700000000,"1.5"],)"
                                  R"([1700000060,"NaN"],[1700000120,"-Inf"]]}]}})")));
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  PrometheusClient client(optionsFor(fake), metrics);

  const RangeResult result = client.queryRange("sum(rate(x[1m]))", kAt, kAt + milliseconds(3600000),
                                               kStep, milliseconds(5000));

  ASSERT_EQ(result.series.size(), 1u);
  EXPECT_EQ(result.series[0].labels.at("pod"), "a");
  ASSERT_EQ(result.series[0].values.size(), 3u);
  EXPECT_EQ(result.series[0].times[1], 1700000060);
  EXPECT_EQ(result.series[0].values[0], 1.5);
  EXPECT_TRUE(std::isnan(result.series[0].values[1]));
  EXPECT_EQ(result.series[0].values[2], -std::numeric_limits<double>::infinity());

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path(), "/api/v1/query_range");
  EXPECT_EQ(formValue(requests[0].query(), "query"), "sum(rate(x[1m]))");
  EXPECT_EQ(formValue(requests[0].query(), "start"), "1700000000.123");
  EXPECT_EQ(formValue(requests[0].query(), "end"), "1700003600.123");
  EXPECT_EQ(formValue(requests[0].query(), "step"), "60.000");
  EXPECT_EQ(formValue(requests[0].query(), "timeout"), "5s");
  EXPECT_EQ(requests[0].header("accept"), "application/json");
  EXPECT_NE(metrics->exposition().find(R"(endpoint="query_range",outcome="success"} 1)"),
            std::string::npos)
      << metrics->exposition();
}

TEST(PrometheusClientRangeTest, FractionalStepsAndTheEffectiveTimeoutAreSent) {
  FakePrometheus fake(always(json(kEmptyMatrix)));
  PrometheusClientOptions options = optionsFor(fake);
  options.client_timeout = milliseconds(1500);
  PrometheusClient client(options);
  client.queryRange("up", kAt, kAt + milliseconds(1000), milliseconds(250), milliseconds(60000));
  client.queryRange("up", kAt, kAt + milliseconds(90000), milliseconds(15000), milliseconds(0));
  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(formValue(requests[0].query(), "step"), "0.250");
  EXPECT_EQ(formValue(requests[0].query(), "timeout"), "1500ms");
  EXPECT_EQ(formValue(requests[1].query(), "step"), "15.000");
  EXPECT_EQ(formValue(requests[1].query(), "end"), "1700000090.123");
}

TEST(PrometheusClientRangeTest, VerbAndPostThresholdApplyAsToQueries) {
  std::string long_query = "up{pod=~\"";
  for (int i = 0; i < 40; ++i) long_query += "pod-" + std::to_string(i) + "|";
  long_query += "\"}";
  for (const std::string verb : {"GET", "POST"}) {
    FakePrometheus fake(always(json(kEmptyMatrix)));
    PrometheusClientOptions options = optionsFor(fake, "/prom/?dedup=true");
    options.verb = verb;
    options.post_threshold_bytes = 200;
    options.headers = {{"X-Scope-OrgID", "tenant-1"}};
    PrometheusClient client(options);
    client.queryRange("up", kAt, kAt + kStep, kStep, kGenerous);
    client.queryRange(long_query, kAt, kAt + kStep, kStep, kGenerous);
    const auto requests = fake.requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0].method, verb);
    EXPECT_EQ(requests[1].method, "POST") << verb;
    for (const auto& request : requests) {
      EXPECT_EQ(request.path(), "/prom/api/v1/query_range");
      EXPECT_TRUE(request.query().starts_with("dedup=true")) << request.target;
      EXPECT_EQ(request.header("x-scope-orgid"), "tenant-1");
      EXPECT_EQ(formValue(paramsOf(request), "start"), "1700000000.123");
      EXPECT_EQ(formValue(paramsOf(request), "end"), "1700000060.123");
      EXPECT_EQ(formValue(paramsOf(request), "step"), "60.000");
    }
    EXPECT_EQ(formValue(paramsOf(requests[0]), "query"), "up");
    EXPECT_EQ(requests[1].target, "/prom/api/v1/query_range?dedup=true");
    EXPECT_EQ(requests[1].header("content-type"), "application/x-www-form-urlencoded");
    EXPECT_EQ(formValue(requests[1].body, "query"), long_query);
  }
}

TEST(PrometheusClientRangeTest, ErrorsAreThoseOfQueries) {
  FakePrometheus fake([](const RecordedRequest& request) {
    const std::string query = formValue(request.query(), "query");
    if (query == "refused") {
      return json(R"({"status":"error","errorType":"bad_data","error":"exceeded maximum )"
                  R"(resolution of 11,000 points per timeseries"})",
                  400);
    }
    if (query == "vector") return json(kEmptyVector);
    if (query == "cut") return json(kEmptyMatrix.substr(0, 40));
    return json(kEmptyMatrix + std::string(1000, ' '));  // larger than the limit
  });
  PrometheusClientOptions options = optionsFor(fake);
  options.max_response_bytes = 1000;
  PrometheusClient client(options);
  const auto range_error = [&](const std::string& promql) {
    return errorOf([&] { client.queryRange(promql, kAt, kAt + kStep, kStep, kGenerous); });
  };
  const PrometheusError refused = range_error("refused");
  EXPECT_EQ(refused.kind(), Kind::kApiError);
  EXPECT_EQ(refused.httpStatus(), 400);
  EXPECT_STREQ(refused.what(),
               "bad_data: exceeded maximum resolution of 11,000 points per timeseries");
  const PrometheusError vector = range_error("vector");
  EXPECT_EQ(vector.kind(), Kind::kBadResponse);
  EXPECT_EQ(vector.httpStatus(), 200);
  EXPECT_NE(std::string(vector.what()).find("\"vector\""), std::string::npos) << vector.what();
  EXPECT_EQ(range_error("cut").kind(), Kind::kBadResponse);
  const PrometheusError big = range_error("big");
  EXPECT_EQ(big.kind(), Kind::kBadResponse);
  EXPECT_NE(std::string(big.what()).find("1000"), std::string::npos) << big.what();
}

TEST(PrometheusClientRangeTest, PointsWithUnservableTimesAreCounted) {
  FakePrometheus fake(always(json(R"({"status":"success","data":{"resultType":"matrix","result":[)"
                                  R"({"metric":{},"values":[[-5,"1"],[1700000000,"2"]]}]}})")));
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  PrometheusClient client(optionsFor(fake), metrics);
  const RangeResult result = client.queryRange("up", kAt, kAt, kStep, kGenerous);
  EXPECT_EQ(result.bad_samples, 1u);
  EXPECT_EQ(metricValue(metrics->exposition(), "metrics_adapter_prometheus_bad_samples_total"), 1);
}

class TokenDirectory {
 public:
  TokenDirectory() {
    dir_ = fs::temp_directory_path() / ("ma-client-token-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  ~TokenDirectory() { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / "token").string(); }
  void write(const std::string& content) const {
    std::ofstream(dir_ / "token.new", std::ios::binary) << content;
    fs::rename(dir_ / "token.new", dir_ / "token");
  }

 private:
  fs::path dir_;
};

TEST(PrometheusClientAuthTest, SendsExtraHeadersAndTheCurrentBearerToken) {
  TokenDirectory tokens;
  tokens.write("tok-1\n");
  FakePrometheus fake([](const RecordedRequest& request) {
    if (request.path().ends_with("/series")) return json(R"({"status":"success","data":[]})");
    return json(kEmptyVector);
  });
  PrometheusClientOptions options = optionsFor(fake);
  options.headers = {{"X-Scope-OrgID", "tenant-a"}, {"X-Extra", "v=1"}};
  options.token_file = tokens.path();
  options.token_recheck_interval = milliseconds(0);
  PrometheusClient client(options);

  client.query("up", kAt, kGenerous);
  tokens.write("  tok-2  \n");
  client.series("up", kAt, kGenerous, [](auto, const auto&) {});

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const auto& request : requests) {
    EXPECT_EQ(request.header("x-scope-orgid"), "tenant-a");
    EXPECT_EQ(request.header("x-extra"), "v=1");
  }
  EXPECT_EQ(requests[0].header("authorization"), "Bearer tok-1");
  EXPECT_EQ(requests[1].header("authorization"), "Bearer tok-2");
}

TEST(PrometheusClientHeadersTest, RepeatedHeadersGoAsSeparateCanonicalLinesInOrder) {
  FakePrometheus fake(always(json(kEmptyVector)));
  PrometheusClientOptions options = optionsFor(fake);
  options.headers = {
      {"x-scope-orgid", "tenant-a"}, {"thanos-tenant", "t"}, {"X-SCOPE-ORGID", "tenant-b"}};
  PrometheusClient client(options);
  client.query("up", kAt, kGenerous);

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 1u);
  std::vector<std::pair<std::string, std::string>> sent;
  for (const auto& [name, value] : requests[0].header_lines) {
    if (name == "X-Scope-Orgid" || name == "Thanos-Tenant") sent.emplace_back(name, value);
  }
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"Thanos-Tenant", "t"}, {"X-Scope-Orgid", "tenant-a"}, {"X-Scope-Orgid", "tenant-b"}};
  EXPECT_EQ(sent, expected);
  // No other spelling of the tenant header went out.
  const auto tenant_lines = std::count_if(
      requests[0].header_lines.begin(), requests[0].header_lines.end(),
      [](const auto& line) { return text::equalsIgnoringAsciiCase(line.first, "x-scope-orgid"); });
  EXPECT_EQ(tenant_lines, 2);
}

TEST(PrometheusClientAuthTest, BasicAuthFromAPasswordFileFollowsItsChanges) {
  TokenDirectory passwords;
  passwords.write("pa:ss-1\n");
  FakePrometheus fake(always(json(kEmptyVector)));
  PrometheusClientOptions options = optionsFor(fake);
  options.basic_auth_username = "adapter";
  options.basic_auth_password_file = passwords.path();
  options.token_recheck_interval = milliseconds(0);
  PrometheusClient client(options);
  client.query("up", kAt, kGenerous);
  passwords.write("pa:ss-2");
  client.query("up", kAt, kGenerous);

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header("authorization"), basicAuthorization("adapter", "pa:ss-1"));
  EXPECT_EQ(requests[1].header("authorization"), basicAuthorization("adapter", "pa:ss-2"));
  EXPECT_EQ(requests[1].header("authorization"), "Basic YWRhcHRlcjpwYTpzcy0y");
}

TEST(PrometheusClientAuthTest, InlineCredentialsFromAKubeconfig) {
  FakePrometheus fake(always(json(kEmptyVector)));
  PrometheusClientOptions bearer = optionsFor(fake);
  bearer.bearer_token = "inline-token";
  PrometheusClient(bearer).query("up", kAt, kGenerous);
  PrometheusClientOptions basic = optionsFor(fake);
  basic.basic_auth_username = "u";
  basic.basic_auth_password = "p";
  PrometheusClient(basic).query("up", kAt, kGenerous);

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header("authorization"), "Bearer inline-token");
  EXPECT_EQ(requests[1].header("authorization"), "Basic dTpw");
}

TEST(PrometheusClientAuthTest, ConflictingCredentialsAreRefusedNamingTheField) {
  FakePrometheus fake(always(json(kEmptyVector)));
  TokenDirectory tokens;
  tokens.write("secret\n");
  struct Case {
    std::function<void(PrometheusClientOptions&)> change;
    std::string expected;
  };
  const Case cases[] = {
      {[&](auto& o) {
         o.basic_auth_username = "u";
         o.basic_auth_password_file = tokens.path();
         o.token_file = tokens.path();
       },
       "basic auth (basic_auth_username) and a bearer token"},
      {[&](auto& o) {
         o.basic_auth_username = "u";
         o.basic_auth_password = "p";
         o.bearer_token = "t";
       },
       "basic auth (basic_auth_username) and a bearer token"},
      {[&](auto& o) {
         o.basic_auth_username = "u";
         o.basic_auth_password_file = tokens.path();
         o.headers = {{"authorization", "Bearer x"}};
       },
       "--prometheus-header Authorization=... and basic auth"},
      {[&](auto& o) {
         o.bearer_token = "t";
         o.headers = {{"Authorization", "Bearer x"}};
       },
       "--prometheus-header Authorization=... and a bearer token"},
      {[&](auto& o) {
         o.token_file = tokens.path();
         o.bearer_token = "t";
       },
       "--prometheus-token-file and a kubeconfig token"},
      {[](auto& o) { o.basic_auth_username = "u"; },
       "basic_auth_username is set without basic_auth_password_file"},
      {[&](auto& o) { o.basic_auth_password_file = tokens.path(); },
       "basic_auth_username: not set"},
      {[](auto& o) {
         o.basic_auth_username = "u";
         o.basic_auth_password_file = "/nonexistent/password";
       },
       "basic_auth_password_file: cannot read /nonexistent/password"},
      {[](auto& o) { o.bearer_token = "a\r\nX-Evil: 1"; }, "line break"},
  };
  for (const auto& c : cases) {
    PrometheusClientOptions options = optionsFor(fake);
    c.change(options);
    try {
      PrometheusClient client(options);
      ADD_FAILURE() << "accepted, expected " << c.expected;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
}

TEST(PrometheusClientOptionsTest, InvalidOptionsNameTheirFlag) {
  FakePrometheus fake(always(json(kEmptyVector)));
  struct Case {
    std::function<void(PrometheusClientOptions&)> change;
    std::string flag;
  };
  const Case cases[] = {
      {[](auto& o) { o.verb = "PUT"; }, "--prometheus-verb"},
      {[](auto& o) { o.url = "ftp://x"; }, "--prometheus-url"},
      {[](auto& o) { o.token_file = "/nonexistent/token"; }, "--prometheus-token-file"},
      {[](auto& o) { o.ca_file = "/nonexistent/ca.pem"; }, "--prometheus-ca-file"},
      {[](auto& o) { o.client_cert_file = "/nonexistent/cert.pem"; },
       "--prometheus-client-tls-key-file"},
      {[](auto& o) {
         o.headers = {{"Bad Name", "v"}};
       },
       "--prometheus-header"},
      {[](auto& o) {
         o.headers = {{"X-A", "v\r\nInjected: 1"}};
       },
       "--prometheus-header"},
  };
  for (const auto& c : cases) {
    PrometheusClientOptions options = optionsFor(fake);
    c.change(options);
    try {
      PrometheusClient client(options);
      ADD_FAILURE() << "accepted, expected an error naming " << c.flag;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.flag), std::string::npos) << e.what();
    }
  }
}

TEST(PrometheusClientErrorTest, PrometheusErrorBodiesSurfaceWhateverTheStatus) {
  const std::string body =
      R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""})";
  for (const int status : {400, 422, 503, 200}) {
    FakePrometheus fake(always(json(body, status)));
    PrometheusClient client(optionsFor(fake));
    const PrometheusError error = errorOf([&] { client.query("up{", kAt, kGenerous); });
    EXPECT_EQ(error.kind(), Kind::kApiError) << status;
    EXPECT_EQ(error.httpStatus(), status);
    EXPECT_STREQ(error.what(), R"(bad_data: 1:5: parse error: unexpected "}")");
  }
}

TEST(PrometheusClientErrorTest, NonJsonErrorPagesReportStatusAndBodyStart) {
  Reply reply = json(
      "<html>\r\n<body><h1>502 Bad Gateway</h1>\n</body>\n</html>\n" + std::string(1000, 'x'), 502);
  reply.content_type = "text/html";
  FakePrometheus fake(always(reply));
  PrometheusClient client(optionsFor(fake));
  const PrometheusError error = errorOf([&] { client.query("up", kAt, kGenerous); });
  EXPECT_EQ(error.kind(), Kind::kHttpStatus);
  EXPECT_EQ(error.httpStatus(), 502);
  const std::string message = error.what();
  EXPECT_TRUE(message.starts_with(
      "unexpected HTTP status 502 from Prometheus: <html> <body><h1>502 Bad Gateway</h1> </body> "
      "</html> xxx"))
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_LT(message.size(), 300u);
}

TEST(PrometheusClientErrorTest, TruncatedJsonIsABadResponse) {
  FakePrometheus fake(
      always(json(R"({"status":"success","data":{"resultType":"vector","result":[{"me)")));
  PrometheusClient client(optionsFor(fake));
  const PrometheusError error = errorOf([&] { client.query("up", kAt, kGenerous); });
  EXPECT_EQ(error.kind(), Kind::kBadResponse);
  EXPECT_EQ(error.httpStatus(), 200);
}

TEST(PrometheusClientErrorTest, AnswersLargerThanTheLimitAreBadResponses) {
  // A valid answer padded with whitespace to a known size.
  const std::string fits = kEmptyVector + std::string(1000 - kEmptyVector.size(), ' ');
  const std::string too_big = fits + " ";
  const auto chunked = [](const std::string& body) {
    Reply reply;
    reply.chunks = [body, sent = false](std::string& chunk) mutable {
      if (sent) return false;
      chunk = body;
      sent = true;
      return true;
    };
    return reply;
  };
  // Both with Content-Length (refused before reading) and chunked (counted while reading).
  for (const bool use_chunks : {false, true}) {
    FakePrometheus fake([&](const RecordedRequest& request) {
      const std::string& body = formValue(request.query(), "query") == "big" ? too_big : fits;
      return use_chunks ? chunked(body) : json(body);
    });
    PrometheusClientOptions options = optionsFor(fake);
    options.max_response_bytes = 1000;
    PrometheusClient client(options);
    EXPECT_NO_THROW(client.query("fits", kAt, kGenerous)) << use_chunks;
    const PrometheusError error = errorOf([&] { client.query("big", kAt, kGenerous); });
    EXPECT_EQ(error.kind(), Kind::kBadResponse) << use_chunks;
    EXPECT_NE(std::string(error.what()).find("1000"), std::string::npos) << error.what();
  }
}

TEST(PrometheusClientErrorTest, ConnectionRefusedIsUnreachableWithTheCause) {
  unsigned short port = 0;
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor probe(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    port = probe.local_endpoint().port();
  }  // closed: nothing listens there now
  PrometheusClientOptions options;
  options.url = "http://127.0.0.1:" + std::to_string(port);
  PrometheusClient client(options);
  const PrometheusError error = errorOf([&] { client.query("up", kAt, kGenerous); });
  EXPECT_EQ(error.kind(), Kind::kUnreachable);
  EXPECT_EQ(error.httpStatus(), 0);
  // The client-facing message names no address; the log's detail does.
  EXPECT_STREQ(error.what(), "cannot reach Prometheus: Connection refused");
  EXPECT_EQ(error.detail(), "GET http://127.0.0.1:" + std::to_string(port) +
                                "/api/v1/query: cannot reach Prometheus: Connection refused");
}

// Whatever Prometheus or a proxy in front of it quotes back, a client-facing message names no
// URL, address, port, URL query or credential; detail() keeps them for the log.
TEST(PrometheusClientErrorTest, ClientMessagesNameNoAddressOrCredential) {
  const std::string token_value = "token-s3cr3t-9f8e";
  std::string quoted;  // filled once the fake's port is known
  std::mutex mutex;
  int status = 502;
  bool as_prometheus_error = false;
  FakePrometheus fake([&](const RecordedRequest&) {
    std::lock_guard lock(mutex);
    if (as_prometheus_error) {
      return json(R"({"status":"error","errorType":"unavailable","error":")" + quoted + R"("})",
                  status);
    }
    return json(quoted, status);
  });
  const std::string address = fake.url().substr(std::string("http://").size());  // host:port
  const std::string port = address.substr(address.find(':') + 1);
  PrometheusClientOptions options = optionsFor(fake, "/prom?tenant=tenant-s3cr3t-77&dedup=true");
  options.headers = {{"X-Scope-OrgID", "org-s3cr3t-1234"},
                     {"Authorization", "Bearer " + token_value},
                     {"X-Short", "1"}};
  {
    std::lock_guard lock(mutex);
    quoted = "127.0.0.10 and prometheus_http_requests_total are no secrets; upstream " +
             options.url + " via " + address + " (host 127.0.0.1) org-s3cr3t-1234 Bearer " +
             token_value + " tenant-s3cr3t-77";
  }
  PrometheusClient client(options);
  const std::vector<std::string> secrets = {fake.url(), address, ":" + port, "s3cr3t"};
  for (const bool prometheus_error : {false, true}) {
    for (const int code : {502, 400}) {
      {
        std::lock_guard lock(mutex);
        as_prometheus_error = prometheus_error;
        status = code;
      }
      const PrometheusError query_error = errorOf([&] { client.query("up", kAt, kGenerous); });
      const PrometheusError series_error =
          errorOf([&] { client.series("up", kAt, kGenerous, [](auto, const auto&) {}); });
      const PrometheusError range_error = errorOf(
          [&] { client.queryRange("up", kAt, kAt + milliseconds(60000), kStep, kGenerous); });
      for (const auto& error : {query_error, series_error, range_error}) {
        const std::string message = error.what();
        for (const auto& secret : secrets) {
          EXPECT_EQ(message.find(secret), std::string::npos)
              << "\"" << secret << "\" in: " << message;
        }
        std::string without_lookalike = message;
        if (const auto at = without_lookalike.find("127.0.0.10"); at != std::string::npos) {
          without_lookalike.erase(at, 10);
        }
        EXPECT_EQ(without_lookalike.find("127.0.0.1"), std::string::npos) << message;
        // Prometheus's own words stay, and so does what only looks like the host.
        EXPECT_NE(message.find("127.0.0.10 and prometheus_http_requests_total are no secrets"),
                  std::string::npos)
            << message;
        EXPECT_NE(message.find("[redacted]"), std::string::npos) << message;
        EXPECT_NE(error.detail().find(fake.url() + "/prom/api/v1/"), std::string::npos)
            << error.detail();
      }
    }
  }
}

TEST(PrometheusClientErrorTest, ClientMessagesNameNoBasicAuthCredential) {
  const std::string password = "pw-s3cr3t-4711";
  const std::string encoded = basicAuthorization("adapter", password).substr(6);
  FakePrometheus fake(always(json("proxy saw " + password + " in Basic " + encoded, 401)));
  PrometheusClientOptions options = optionsFor(fake);
  options.basic_auth_username = "adapter";
  options.basic_auth_password = password;
  PrometheusClient client(options);
  const std::string message = errorOf([&] { client.query("up", kAt, kGenerous); }).what();
  EXPECT_EQ(message.find("s3cr3t"), std::string::npos) << message;
  EXPECT_EQ(message.find(encoded), std::string::npos) << message;
  EXPECT_NE(message.find("proxy saw [redacted] in Basic [redacted]"), std::string::npos) << message;
}

TEST(PrometheusClientTimeoutTest, HungServerCannotHoldACallPastItsDeadline) {
  Reply hang;
  hang.mode = Reply::Mode::kHang;
  FakePrometheus fake(always(hang));
  PrometheusClient client(optionsFor(fake));

  const PrometheusError query_error = errorOf([&] { client.query("up", kAt, milliseconds(300)); });
  EXPECT_EQ(query_error.kind(), Kind::kTimeout);
  EXPECT_STREQ(query_error.what(), "Prometheus did not answer within 300ms");

  const PrometheusError series_error =
      errorOf([&] { client.series("up", kAt, milliseconds(300), [](auto, const auto&) {}); });
  EXPECT_EQ(series_error.kind(), Kind::kTimeout);

  const PrometheusError range_error =
      errorOf([&] { client.queryRange("up", kAt, kAt, kStep, milliseconds(300)); });
  EXPECT_EQ(range_error.kind(), Kind::kTimeout);
  EXPECT_STREQ(range_error.what(), "Prometheus did not answer within 300ms");
}

TEST(PrometheusClientTimeoutTest, CancelCallsEndsCallsInProgressAndLaterOnes) {
  Reply hang;
  hang.mode = Reply::Mode::kHang;
  FakePrometheus fake(always(hang));
  PrometheusClient client(optionsFor(fake));
  std::thread canceller([&] {
    while (fake.requests().empty()) std::this_thread::sleep_for(milliseconds(10));
    client.cancelCalls();
  });
  // The relist's deadline, far beyond the test: only the cancellation can end the call.
  const PrometheusError error =
      errorOf([&] { client.series("up", kAt, milliseconds(60000), [](auto, const auto&) {}); });
  canceller.join();
  EXPECT_EQ(error.kind(), Kind::kUnreachable);
  EXPECT_NE(std::string(error.what()).find("the adapter is shutting down"), std::string::npos)
      << error.what();

  const PrometheusError later = errorOf([&] { client.query("up", kAt, kGenerous); });
  EXPECT_EQ(later.kind(), Kind::kUnreachable);
  EXPECT_EQ(fake.requests().size(), 1u);  // never sent
}

TEST(PrometheusClientTimeoutTest, ClientTimeoutCapsLongerCallTimeouts) {
  Reply hang;
  hang.mode = Reply::Mode::kHang;
  FakePrometheus fake(always(hang));
  PrometheusClientOptions options = optionsFor(fake);
  options.client_timeout = milliseconds(300);
  PrometheusClient client(options);
  const PrometheusError error = errorOf([&] { client.query("up", kAt, milliseconds(60000)); });
  EXPECT_EQ(error.kind(), Kind::kTimeout);
  EXPECT_STREQ(error.what(), "Prometheus did not answer within 300ms");
}

TEST(PrometheusClientTimeoutTest, BodyThatStopsMidwayTimesOut) {
  Reply stall = json(R"({"status":"success","data":[{"__name__":"up"},)");
  stall.mode = Reply::Mode::kStallMidBody;
  FakePrometheus fake(always(stall));
  PrometheusClient client(optionsFor(fake));
  const PrometheusError series_error =
      errorOf([&] { client.series("up", kAt, milliseconds(300), [](auto, const auto&) {}); });
  EXPECT_EQ(series_error.kind(), Kind::kTimeout);
  EXPECT_EQ(series_error.httpStatus(), 200);
  const PrometheusError query_error = errorOf([&] { client.query("up", kAt, milliseconds(300)); });
  EXPECT_EQ(query_error.kind(), Kind::kTimeout);
}

TEST(PrometheusClientSeriesTest, SendsMatchAndStartAndPassesNamesOnly) {
  FakePrometheus fake(always(
      json(R"({"status":"success","data":[{"__name__":"up","job":"node","instance":"a:9100"}]})")));
  PrometheusClient client(optionsFor(fake));
  std::vector<std::string> seen;
  client.series(R"({__name__=~"^container_.*",container!="POD"})", kAt, kGenerous,
                [&](std::string_view name, const std::vector<std::string_view>& labels) {
                  seen.emplace_back(name);
                  for (const auto label : labels) seen.emplace_back(label);
                });
  EXPECT_EQ(seen, (std::vector<std::string>{"up", "job", "instance"}));
  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path(), "/api/v1/series");
  EXPECT_EQ(formValue(requests[0].query(), "match[]"),
            R"({__name__=~"^container_.*",container!="POD"})");
  EXPECT_EQ(formValue(requests[0].query(), "start"), "1700000000.123");
  EXPECT_EQ(formValue(requests[0].query(), "timeout"), "");  // not a series parameter
}

std::string gzip(const std::string& text) { return net::testing::deflateText(text); }

TEST(PrometheusClientSeriesTest, AsksForGzipAndParsesTheSmallChunksPrometheusSends) {
  std::string answer = R"({"status":"success","data":[)";
  std::vector<std::string> expected;
  for (int i = 0; i < 3000; ++i) {
    const std::string name = "gpu_metric_" + std::to_string(i % 7);
    answer += (i > 0 ? "," : "") + (R"({"__name__":")" + name + R"(","pod":"p)" +
                                    std::to_string(i) + R"(","namespace":"n"})");
    expected.insert(expected.end(), {name, "pod", "namespace"});
  }
  answer += "]}";
  const std::string compressed = gzip(answer);
  ASSERT_LT(compressed.size(), answer.size() / 4);
  Reply reply;
  reply.headers = {{"Content-Encoding", "gzip"}};
  auto sent = std::make_shared<std::size_t>(0);
  reply.chunks = [compressed, sent](std::string& chunk) {  // 2 KiB chunks, as Go's net/http
    if (*sent >= compressed.size()) return false;
    chunk = compressed.substr(*sent, 2048);
    *sent += chunk.size();
    return true;
  };
  FakePrometheus fake([reply](const RecordedRequest& request) {
    return request.path() == "/api/v1/series" ? reply : json(kEmptyVector);
  });
  PrometheusClient client(optionsFor(fake));
  std::vector<std::string> seen;
  client.series("{__name__=~\"gpu_.*\"}", kAt, kGenerous,
                [&](std::string_view name, const std::vector<std::string_view>& labels) {
                  seen.emplace_back(name);
                  for (const auto label : labels) seen.emplace_back(label);
                });
  EXPECT_EQ(seen, expected);
  ASSERT_EQ(fake.requests().size(), 1u);
  // Exactly "gzip", as Go's client asks: Prometheus 2.42 does not compress for "gzip;q=0.5".
  EXPECT_EQ(fake.requests()[0].header("accept-encoding"), "gzip");

  client.query("up", kAt, kGenerous);  // small answers wanted soon: asked plain
  EXPECT_EQ(fake.requests()[1].header("accept-encoding"), "");
}

// A gzipped answer damaged on the way or cut short fails the call, saying so: the series it held
// are not handed on as if they were the whole answer.
TEST(PrometheusClientSeriesTest, ADamagedOrCutGzipAnswerFailsTheCall) {
  std::string answer = R"({"status":"success","data":[)";
  for (int i = 0; i < 200; ++i) {
    answer += (i > 0 ? "," : "") + (R"({"__name__":"gpu","pod":"p)" + std::to_string(i) + "\"}");
  }
  answer += "]}";
  const std::string compressed = gzip(answer);
  std::string damaged = compressed;
  damaged[damaged.size() - 8] = static_cast<char>(damaged[damaged.size() - 8] ^ 1);
  // Cut inside the trailer: every series is in, and the JSON is whole, but the check is not.
  const std::string cut = compressed.substr(0, compressed.size() - 3);
  for (const auto& [body, reason] :
       {std::pair{damaged, "CRC-32 mismatch"}, std::pair{cut, "the gzip answer was cut short"}}) {
    Reply reply;
    reply.headers = {{"Content-Encoding", "gzip"}};
    reply.body = body;
    FakePrometheus fake(always(reply));
    PrometheusClient client(optionsFor(fake));
    const PrometheusError error =
        errorOf([&] { client.series("gpu", kAt, kGenerous, [](auto, const auto&) {}); });
    EXPECT_EQ(error.kind(), Kind::kBadResponse) << reason;
    EXPECT_NE(std::string(error.what()).find(reason), std::string::npos) << error.what();
  }
}

TEST(PrometheusClientSeriesTest, ErrorsAndNullData) {
  {
    FakePrometheus fake(always(json(
        R"({"status":"error","errorType":"bad_data","error":"1:2: parse error: unexpected end"})",
        400)));
    PrometheusClient client(optionsFor(fake));
    const PrometheusError error =
        errorOf([&] { client.series("{", kAt, kGenerous, [](auto, const auto&) {}); });
    EXPECT_EQ(error.kind(), Kind::kApiError);
    EXPECT_EQ(error.httpStatus(), 400);
    EXPECT_STREQ(error.what(), "bad_data: 1:2: parse error: unexpected end");
  }
  {
    FakePrometheus fake(always(json(R"({"status":"error","errorType":"internal","error":"x"})")));
    PrometheusClient client(optionsFor(fake));
    const PrometheusError error =
        errorOf([&] { client.series("up", kAt, kGenerous, [](auto, const auto&) {}); });
    EXPECT_EQ(error.kind(), Kind::kApiError);
    EXPECT_STREQ(error.what(), "internal: x");
  }
  {
    FakePrometheus fake(always(json(R"({"status":"success","data":null})")));
    PrometheusClient client(optionsFor(fake));
    int visited = 0;
    client.series("up", kAt, kGenerous, [&](auto, const auto&) { ++visited; });
    EXPECT_EQ(visited, 0);
  }
}

// Progress shared between the fake's generator and the visitor.
struct StreamProgress {
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t visited = 0;
};

TEST(PrometheusClientSeriesTest, LargeAnswersAreStreamedSeriesBySeries) {
  constexpr std::size_t kSeries = 40000;  // ~3 MB: far past any buffer, quick under ASan too
  constexpr std::size_t kPerChunk = 1000;
  auto progress = std::make_shared<StreamProgress>();
  auto streamed = std::make_shared<std::atomic<bool>>(false);

  FakePrometheus fake([progress, streamed](const RecordedRequest&) {
    Reply reply;
    reply.chunks = [progress, streamed, next = std::size_t{0}](std::string& chunk) mutable {
      if (next > kSeries) return false;
      if (next == 0) chunk = R"({"status":"success","data":[)";
      if (next == kSeries / 2) {
        // Half the answer is out; the client must have visited series already, which it can
        // only do if it parses while the body is still arriving.
        std::unique_lock lock(progress->mutex);
        streamed->store(progress->changed.wait_for(lock, std::chrono::seconds(10),
                                                   [&] { return progress->visited > 0; }));
      }
      if (next == kSeries) {
        chunk += R"(],"warnings":["many series"]})";
        ++next;
        return true;
      }
      for (std::size_t end = next + kPerChunk; next < end; ++next) {
        if (next != 0) chunk += ",";
        chunk += R"({"__name__":"metric_)" + std::to_string(next % 100) +
                 R"(","instance":"10.0.0.)" + std::to_string(next % 250) +
                 R"(:9100","job":"node","pod":"pod-)" + std::to_string(next) + R"("})";
      }
      return true;
    };
    return reply;
  });
  PrometheusClient client(optionsFor(fake));

  std::set<std::string> names;
  std::size_t bad_labels = 0;
  client.series("{job=\"node\"}", kAt, kGenerous,
                [&](std::string_view name, const std::vector<std::string_view>& labels) {
                  names.emplace(name);
                  const std::vector<std::string_view> expected{"instance", "job", "pod"};
                  if (labels != expected) ++bad_labels;
                  std::lock_guard lock(progress->mutex);
                  ++progress->visited;
                  progress->changed.notify_all();
                });

  EXPECT_EQ(progress->visited, kSeries);
  EXPECT_EQ(names.size(), 100u);
  EXPECT_TRUE(names.count("metric_0") == 1 && names.count("metric_99") == 1);
  EXPECT_EQ(bad_labels, 0u);
  EXPECT_TRUE(streamed->load());
}

TEST(PrometheusClientSeriesTest, VisitorExceptionsPropagateAndTheClientStaysUsable) {
  FakePrometheus fake(always(json(R"({"status":"success","data":[{"__name__":"a"}]})")));
  PrometheusClient client(optionsFor(fake));
  EXPECT_THROW(client.series("up", kAt, kGenerous,
                             [](auto, const auto&) { throw std::logic_error("visitor"); }),
               std::logic_error);
  int visited = 0;
  client.series("up", kAt, kGenerous, [&](auto, const auto&) { ++visited; });
  EXPECT_EQ(visited, 1);
}

TEST(PrometheusClientConcurrencyTest, OneClientServesManyThreads) {
  FakePrometheus fake([](const RecordedRequest& request) {
    const std::string value = formValue(request.query(), "query");
    return json(R"({"status":"success","data":{"resultType":"scalar","result":[1,")" + value +
                R"("]}})");
  });
  PrometheusClient client(optionsFor(fake));
  constexpr int kThreads = 6;
  constexpr int kCallsPerThread = 5;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        const int n = t * 100 + i;
        const QueryResult result = client.query(std::to_string(n), kAt, kGenerous);
        if (result.samples.size() != 1 || result.samples[0].value != n) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(fake.requests().size(), static_cast<std::size_t>(kThreads * kCallsPerThread));
}

}  // namespace
}  // namespace metrics_adapter::prometheus
