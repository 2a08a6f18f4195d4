#include "metrics_adapter/app/flags.h"

#include <gtest/gtest.h>

namespace metrics_adapter::app {
namespace {

using std::chrono::milliseconds;

AdapterOptions parse(std::vector<std::string> args) { return parseFlags(args); }

TEST(FlagsTest, TheAlibabaWalkthroughDeploymentArgsAreAccepted) {
  auto options =
      parse({"--secure-port=6443", "--tls-cert-file=/var/run/serving-cert/serving.crt",
             "--tls-private-key-file=/var/run/serving-cert/serving.key", "--logtostderr=true",
             "--prometheus-url=http://prometheus-svc.kube-system.svc.cluster.local:9090/",
             "--metrics-relist-interval=1m", "--v=10", "--config=/etc/adapter/config.yaml"});
  EXPECT_EQ(options.server.port, 6443);
  EXPECT_EQ(options.server.tls_cert_file, "/var/run/serving-cert/serving.crt");
  EXPECT_EQ(options.prometheus.url, "http://prometheus-svc.kube-system.svc.cluster.local:9090/");
  EXPECT_EQ(options.relist.interval, milliseconds(60000));
  EXPECT_EQ(options.relist.max_age, milliseconds(120000));  // 2 x interval by default
  EXPECT_EQ(options.verbosity, 10);
  EXPECT_EQ(options.config_file, "/etc/adapter/config.yaml");
  EXPECT_NO_THROW(parse({"--config=c", "--disable-http2"}));  // we never speak HTTP/2
  EXPECT_THROW(parse({"--config=c", "--disable-http2=maybe"}), FlagError);
}

TEST(FlagsTest, SeparateValuesSingleDashAndRepeatedHeaders) {
  auto options = parse({"-config", "c.yaml", "-v=2", "--prometheus-header", "X-Scope-OrgID=team-a",
                        "--prometheus-header=Authorization=Basic abc=", "--logtostderr",
                        "--metrics-max-age=5m", "--tls-cipher-suites=A,B"});
  EXPECT_EQ(options.config_file, "c.yaml");
  EXPECT_EQ(options.verbosity, 2);
  ASSERT_EQ(options.prometheus.headers.size(), 2u);
  EXPECT_EQ(options.prometheus.headers[1].first, "Authorization");
  EXPECT_EQ(options.prometheus.headers[1].second, "Basic abc=");  // split at the first '='
  EXPECT_EQ(options.relist.max_age, milliseconds(300000));
  EXPECT_EQ(options.server.tls_cipher_suites, (std::vector<std::string>{"A", "B"}));
}

TEST(FlagsTest, ErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const Case cases[] = {
      {{}, "--config"},
      {{"--config=c", "--rate-interval=5m"}, "unknown flag: --rate-interval"},
      {{"--config=c", "--prometheus-verb=PUT"}, "--prometheus-verb"},
      {{"--config=c", "--secure-port=70000"}, "--secure-port"},
      {{"--config=c", "--metrics-relist-interval=soon"}, "invalid duration \"soon\""},
      {{"--config=c", "--metrics-relist-interval=10m", "--metrics-max-age=1m"},
       "--metrics-max-age"},
      {{"--config=c", "--prometheus-auth-incluster"}, "--prometheus-auth-incluster"},
      {{"--config=c", "--authentication-mode=open"}, "--authentication-mode"},
      {{"--config=c", "--logtostderr=maybe"}, "--logtostderr"},
      {{"--config"}, "needs an argument: --config"},
      {{"config.yaml"}, "unexpected argument"},
      {{"--config=c", "--tls-min-version=VersionTLS10"}, "--tls-min-version"},
  };
  for (const auto& c : cases) {
    try {
      parse(c.args);
      ADD_FAILURE() << "accepted: " << c.expected;
    } catch (const FlagError& error) {
      EXPECT_NE(std::string(error.what()).find(c.expected), std::string::npos) << error.what();
    }
  }
}

TEST(FlagsTest, PrometheusMaxResponseBytesBoundsQueryAnswers) {
  EXPECT_EQ(parse({"--config=c"}).prometheus.max_response_bytes, std::size_t{16} << 20);
  EXPECT_EQ(parse({"--config=c", "--prometheus-max-response-bytes=1048576"})
                .prometheus.max_response_bytes,
            std::size_t{1} << 20);
  EXPECT_THROW(parse({"--config=c", "--prometheus-max-response-bytes=10"}), FlagError);
  EXPECT_THROW(parse({"--config=c", "--prometheus-max-response-bytes=1Gi"}), FlagError);
}

TEST(GoDurationTest, Table) {
  struct Case {
    const char* text;
    long long ms;
  };
  const Case cases[] = {{"0", 0},       {"30s", 30000}, {"1m", 60000},    {"1h30m", 5400000},
                        {"500ms", 500}, {"1.5s", 1500}, {"2m0s", 120000}, {"-1s", -1000},
                        {"1000us", 1},  {"10m", 600000}};
  for (const auto& c : cases) EXPECT_EQ(parseGoDuration(c.text).count(), c.ms) << c.text;
  for (const char* bad : {"", "1", "s", "1x", "1.2.3s", "m1", "1 m"}) {
    EXPECT_THROW(parseGoDuration(bad), FlagError) << bad;
  }
}

TEST(FlagsTest, DelegatedAuthFlagsOfTheGenericApiserver) {
  auto options =
      parse({"--config=c", "--requestheader-client-ca-file=/ca/front-proxy.crt",
             "--requestheader-allowed-names=", "--requestheader-group-headers=X-G,X-H",
             "--authorization-always-allow-paths=/healthz,/metrics", "--authentication-skip-lookup",
             "--authentication-token-webhook-cache-ttl=30s"});
  EXPECT_TRUE(options.auth.delegated);
  EXPECT_EQ(options.auth.requestheader_client_ca_file, "/ca/front-proxy.crt");
  ASSERT_TRUE(options.auth.requestheader_allowed_names);
  EXPECT_TRUE(options.auth.requestheader_allowed_names->empty());  // empty: any CN
  EXPECT_EQ(*options.auth.requestheader_group_headers, (std::vector<std::string>{"X-G", "X-H"}));
  EXPECT_FALSE(options.auth.requestheader_username_headers);  // from the ConfigMap
  EXPECT_EQ(options.auth.always_allow_paths, (std::vector<std::string>{"/healthz", "/metrics"}));
  EXPECT_TRUE(options.auth.skip_lookup);
  EXPECT_EQ(options.auth.token_cache_ttl, milliseconds(30000));
  EXPECT_FALSE(parse({"--config=c", "--authentication-mode=none"}).auth.delegated);
}

TEST(FlagsTest, HelpNeedsNoConfig) {
  EXPECT_TRUE(parse({"--help"}).show_help);
  EXPECT_NE(usage().find("--prometheus-url"), std::string::npos);
}

TEST(FlagsTest, LogFormatIsTextOrJson) {
  EXPECT_EQ(parse({"--config=c"}).log_format, LogFormat::kText);  // issue 6: text by default
  EXPECT_EQ(parse({"--config=c", "--log-format=json"}).log_format, LogFormat::kJson);
  EXPECT_EQ(parse({"--config=c", "--log-format", "text"}).log_format, LogFormat::kText);
  try {
    parse({"--config=c", "--log-format=xml"});
    ADD_FAILURE() << "--log-format=xml accepted";
  } catch (const FlagError& error) {
    EXPECT_NE(std::string(error.what()).find("--log-format"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace metrics_adapter::app
