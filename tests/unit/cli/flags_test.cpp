#include "metrics_adapter/app/flags.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "cli/check_config/check_config.h"
#include "cli/explain/explain.h"
#include "unit/app/credential_files.h"
#include "unit/net/scoped_env.h"
#include "unit/net/test_certificates.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::app {
namespace {

using std::chrono::milliseconds;
using testing::credentialFiles;

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
  EXPECT_EQ(options.log.verbosity, 10);
  EXPECT_EQ(options.config_file, "/etc/adapter/config.yaml");
  EXPECT_NO_THROW(parse({"--config=c", "--disable-http2"}));  // we never speak HTTP/2
  EXPECT_THROW(parse({"--config=c", "--disable-http2=maybe"}), FlagError);
}

TEST(FlagsTest, SeparateValuesSingleDashAndRepeatedHeaders) {
  auto options = parse({"-config", "c.yaml", "-v=2", "--prometheus-header", "X-Scope-OrgID=team-a",
                        "--prometheus-header=Authorization=Basic abc=", "--logtostderr",
                        "--metrics-max-age=5m", "--tls-cipher-suites=A,B"});
  EXPECT_EQ(options.config_file, "c.yaml");
  EXPECT_EQ(options.log.verbosity, 2);
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
      {{"--config=c", "--prometheus-auth-incluster", "--prometheus-auth-config=/k"},
       "--prometheus-auth-config and --prometheus-auth-incluster cannot be used together"},
      {{"--config=c", "--prometheus-auth-config=/nonexistent/kubeconfig"},
       "--prometheus-auth-config: kubeconfig /nonexistent/kubeconfig: cannot read it"},
      {{"--config=c", "--authentication-mode=open"}, "--authentication-mode"},
      {{"--config=c", "--logtostderr=maybe"}, "--logtostderr"},
      {{"--config"}, "needs an argument: --config"},
      {{"--config=c", "--tls-min-version=VersionTLS9"}, "--tls-min-version"},
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

TEST(FlagsTest, TlsSniCertKeyIsRepeatableAndKeepsTheOrder) {
  const auto options =
      parse({"--config=c", "--tls-sni-cert-key=/tls/a.crt,/tls/a.key", "--tls-sni-cert-key",
             "/tls/b.crt, /tls/b.key : B.example.com, *.example.com"});
  const std::vector<server::SniCertKey> expected = {
      {.cert_file = "/tls/a.crt", .key_file = "/tls/a.key", .names = {}},
      {.cert_file = "/tls/b.crt",
       .key_file = "/tls/b.key",
       .names = {"b.example.com", "*.example.com"}},
  };
  EXPECT_EQ(options.server.sni_cert_keys, expected);
  EXPECT_TRUE(parse({"--config=c"}).server.sni_cert_keys.empty());
}

TEST(FlagsTest, BadTlsSniCertKeyNamesTheFlagAndTheValue) {
  for (const std::string value :
       {"only.crt", "a.crt,", "a.crt,a.key:", "a.crt,a.key:x.com,,y.com", "a.crt,a.key,c.pem"}) {
    try {
      parse({"--config=c", "--tls-sni-cert-key=" + value});
      ADD_FAILURE() << "accepted " << value;
    } catch (const FlagError& error) {
      EXPECT_NE(std::string(error.what()).find("--tls-sni-cert-key: \"" + value + "\": "),
                std::string::npos)
          << error.what();
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

TEST(FlagsTest, LogBacktraceAtTakesKlogsPrintedDefaultAndRefusesWithTheFlagsName) {
  EXPECT_EQ(parse({"--config=c", "--log_backtrace_at=:0"}).log.log_backtrace_at, ":0");
  EXPECT_EQ(parse({"--config=c", "--log_backtrace_at", "relist.cpp:+12"}).log.log_backtrace_at,
            "relist.cpp:+12");
  try {
    parse({"--config=c", "--log_backtrace_at=relist:12"});
    ADD_FAILURE() << "a file without a '.' was accepted";
  } catch (const FlagError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("--log_backtrace_at: ", 0), 0u) << error.what();
  }
}

TEST(FlagsTest, HelpNeedsNoConfig) {
  EXPECT_TRUE(parse({"--help"}).show_help);
  EXPECT_NE(usage().find("--prometheus-url"), std::string::npos);
}

TEST(FlagsTest, LogFormatIsTextOrJson) {
  using logging::LogFormat;
  EXPECT_EQ(parse({"--config=c"}).log.format, LogFormat::kText);  // issue 6: text by default
  EXPECT_EQ(parse({"--config=c", "--log-format=json"}).log.format, LogFormat::kJson);
  EXPECT_EQ(parse({"--config=c", "--log-format", "text"}).log.format, LogFormat::kText);
  try {
    parse({"--config=c", "--log-format=xml"});
    ADD_FAILURE() << "--log-format=xml accepted";
  } catch (const FlagError& error) {
    EXPECT_NE(std::string(error.what()).find("--log-format"), std::string::npos) << error.what();
  }
}

// Every Prometheus client flag, with a value unlike its default.
const std::map<std::string, std::string>& prometheusFlagValues() {
  static const std::map<std::string, std::string> kValues = {
      {"prometheus-auth-config", credentialFiles().kubeconfig},
      {"prometheus-auth-incluster", "true"},
      {"prometheus-url", "https://prometheus.monitoring.svc:9090/sub?x=1"},
      {"prometheus-verb", "POST"},
      {"prometheus-header", "X-Scope-OrgID=team-a"},
      {"prometheus-token-file", "/var/run/secrets/prometheus/token"},
      {"prometheus-ca-file", "/etc/prometheus/ca.crt"},
      {"prometheus-client-tls-cert-file", "/etc/prometheus/client.crt"},
      {"prometheus-client-tls-key-file", "/etc/prometheus/client.key"},
      {"prometheus-timeout", "3s"},
      {"prometheus-max-response-bytes", "1048576"},
  };
  return kValues;
}

// The --prometheus-* flags the server's usage lists.
std::set<std::string> serverPrometheusFlags() {
  std::set<std::string> names;
  const std::string text = usage();
  for (auto at = text.find("--prometheus-"); at != std::string::npos;
       at = text.find("--prometheus-", at + 1)) {
    names.insert(text.substr(at + 2, text.find_first_of("= ", at) - at - 2));
  }
  return names;
}

// What a tool (cli) read into its copy of the server's options, given one flag's words.
using ToolParse = std::function<AdapterOptions(const std::vector<std::string>&)>;

std::vector<std::pair<std::string, ToolParse>> tools() {
  return {
      {"check-config",
       [](const std::vector<std::string>& words) {
         std::vector<std::string> args = {"config.yaml"};
         args.insert(args.end(), words.begin(), words.end());
         return cli::parseCheckConfigFlags(args).shared;
       }},
      {"explain",
       [](const std::vector<std::string>& words) {
         std::vector<std::string> args = {"--config=config.yaml", "--metric=m",
                                          "--prometheus-url=http://p:9090"};
         args.insert(args.end(), words.begin(), words.end());
         return cli::parseExplainFlags(args).shared;
       }},
  };
}

TEST(ToolFlagsTest, EveryPrometheusClientFlagOfTheServerLandsInTheSameOptionsInEachTool) {
  const std::set<std::string> server_flags = serverPrometheusFlags();
  ASSERT_GE(server_flags.size(), 11u);  // url, verb, header, token, CA, cert, key, timeout, bytes,
                                        // auth-config, auth-incluster
  for (const auto& flag : server_flags) {
    ASSERT_TRUE(prometheusFlagValues().count(flag)) << "no test value for --" << flag;
  }
  const net::testing::ScopedEnv service_account("METRICS_ADAPTER_SERVICE_ACCOUNT_DIR",
                                                credentialFiles().dir.path().c_str());
  const AdapterOptions defaults;
  for (const auto& [flag, value] : prometheusFlagValues()) {
    ASSERT_TRUE(server_flags.count(flag)) << "--" << flag << " is not a server flag";
    // A switch takes no separate value word.
    const std::vector<std::string> second_form = flag == "prometheus-auth-incluster"
                                                     ? std::vector<std::string>{"-" + flag}
                                                     : std::vector<std::string>{"-" + flag, value};
    for (const std::vector<std::string>& words :
         {std::vector<std::string>{"--" + flag + "=" + value}, second_form}) {
      std::vector<std::string> server_args = {"--config=c"};
      server_args.insert(server_args.end(), words.begin(), words.end());
      if (flag != "prometheus-url") server_args.push_back("--prometheus-url=http://p:9090");
      const AdapterOptions server = parseFlags(server_args);
      const AdapterOptions baseline = flag == "prometheus-url"
                                          ? defaults
                                          : parse({"--config=c", "--prometheus-url=http://p:9090"});
      EXPECT_TRUE(server.prometheus != baseline.prometheus ||
                  server.query_timeout != baseline.query_timeout)
          << "--" << flag << " changed nothing";
      for (const auto& [tool, parseTool] : tools()) {
        std::vector<std::string> tool_words = words;
        if (flag != "prometheus-url" && tool == "check-config") {
          tool_words.push_back("--prometheus-url=http://p:9090");
        }
        const AdapterOptions read = parseTool(tool_words);
        EXPECT_EQ(read.prometheus, server.prometheus) << tool << " " << words[0];
        EXPECT_EQ(read.query_timeout, server.query_timeout) << tool << " " << words[0];
      }
    }
  }
}

TEST(ToolFlagsTest, RepeatedHeadersAndMaxAgeAsTheServerReadsThem) {
  const std::vector<std::string> words = {"--prometheus-header", "X-Scope-OrgID=team-a",
                                          "--prometheus-header=Authorization=Basic abc=",
                                          "--prometheus-header=X-Empty", "--metrics-max-age=5m"};
  std::vector<std::string> server_args = {"--config=c", "--prometheus-url=http://p:9090"};
  server_args.insert(server_args.end(), words.begin(), words.end());
  const AdapterOptions server = parseFlags(server_args);
  ASSERT_EQ(server.prometheus.headers.size(), 3u);
  for (const auto& [tool, parseTool] : tools()) {
    std::vector<std::string> tool_words = words;
    tool_words.push_back("--prometheus-url=http://p:9090");
    const AdapterOptions read = parseTool(tool_words);
    EXPECT_EQ(read.prometheus, server.prometheus) << tool;
    EXPECT_EQ(read.relist.max_age, server.relist.max_age) << tool;
  }
}

TEST(ToolFlagsTest, ToolsRefuseWhatTheServerRefusesWithTheSameMessage) {
  const std::vector<std::vector<std::string>> refused = {
      {"--prometheus-verb=PUT"},
      {"--prometheus-timeout=soon"},
      {"--prometheus-max-response-bytes=10"},
      {"--prometheus-header==x"},
      {"--prometheus-auth-config=/nonexistent/auth.yaml"},
      {"--prometheus-auth-config=/auth.yaml", "--prometheus-auth-incluster"},
      {"--prometheus-ca-file"},  // no value
  };
  for (const auto& words : refused) {
    std::vector<std::string> server_args = {"--config=c"};
    server_args.insert(server_args.end(), words.begin(), words.end());
    std::string server_message;
    try {
      parseFlags(server_args);
      ADD_FAILURE() << "the server accepted " << words[0];
    } catch (const FlagError& e) {
      server_message = e.what();
    }
    for (const auto& [tool, parseTool] : tools()) {
      try {
        parseTool(words);
        ADD_FAILURE() << tool << " accepted " << words[0];
      } catch (const FlagError& e) {
        EXPECT_EQ(e.what(), server_message) << tool;
      }
    }
  }
}

TEST(ToolFlagsTest, ServerOnlyFlagsAreUnknownToTools) {
  for (const auto& [tool, parseTool] : tools()) {
    for (const char* flag : {"--secure-port=6443", "--metrics-cache-ttl=1s", "--dry-run"}) {
      try {
        parseTool({flag});
        ADD_FAILURE() << tool << " accepted " << flag;
      } catch (const FlagError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown flag"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(ToolFlagsTest, ToolUsageListsTheSharedFlags) {
  const std::string text = toolFlagsUsage({});
  for (const auto& flag : serverPrometheusFlags()) {
    EXPECT_TRUE(text.find("--" + flag + "=") != std::string::npos ||
                text.find("--" + flag + " ") != std::string::npos)
        << flag;
  }
  EXPECT_EQ(text.find("--secure-port"), std::string::npos);
}

// --help's descriptions start in one column whether the flag takes a value (--name=VALUE) or
// not; only a flag too wide for that column pushes its own description further.
TEST(FlagsTest, UsageDescriptionsStartInOneColumn) {
  for (const std::string& text : {usage(), toolFlagsUsage({})}) {
    std::set<std::size_t> columns;
    std::size_t lines = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("  --")) continue;
      ++lines;
      const std::size_t flag_end = line.find(' ', 2);
      ASSERT_NE(flag_end, std::string::npos) << line;
      const std::size_t description = line.find_first_not_of(' ', flag_end);
      ASSERT_NE(description, std::string::npos) << line;
      EXPECT_GE(description - flag_end, 2U) << line;
      if (flag_end <= 2 + 44) columns.insert(description);
    }
    EXPECT_GT(lines, 10U);
    EXPECT_EQ(columns.size(), 1U) << text;
  }
}

// --help groups the server's flags as the Kubernetes components do, each flag once.
TEST(FlagsTest, UsageGroupsTheFlags) {
  std::map<std::string, std::vector<std::string>> sections;
  std::string section;
  std::istringstream in(usage());
  for (std::string line; std::getline(in, line);) {
    if (line.ends_with(" flags:")) section = line;
    if (line.starts_with("  --"))
      sections[section].push_back(line.substr(4, line.find_first_of("= ", 4) - 4));
  }
  for (const char* title :
       {"Generic flags:", "Secure serving flags:", "Authentication flags:", "Authorization flags:",
        "Audit flags:", "Prometheus flags:", "Rules and discovery flags:", "Logging flags:"}) {
    EXPECT_FALSE(sections[title].empty()) << title;
  }
  for (const std::string& name : sections["Audit flags:"]) EXPECT_TRUE(name.starts_with("audit-"));
  for (const std::string& name : sections["Prometheus flags:"]) {
    EXPECT_TRUE(name.starts_with("prometheus-")) << name;
  }
  const auto& logging = sections["Logging flags:"];
  EXPECT_NE(std::find(logging.begin(), logging.end(), "vmodule"), logging.end());
  const auto& serving = sections["Secure serving flags:"];
  EXPECT_NE(std::find(serving.begin(), serving.end(), "secure-port"), serving.end());
  std::size_t listed = 0;
  for (const auto& [title, names] : sections) listed += names.size();
  std::size_t lines = 0;
  std::istringstream again(usage());
  for (std::string line; std::getline(again, line);) lines += line.starts_with("  --") ? 1 : 0;
  EXPECT_EQ(listed, lines);
}

// A tool's one-letter flag is printed with the long flag it stands for, as kubectl prints them.
TEST(FlagsTest, ToolUsagePrintsAShortFlagWithItsLongForm) {
  const std::map<std::string, ToolFlag> own = {
      {"n", {.help = "the namespace"}},
      {"namespace", {.help = "the namespace"}},
      {"A", {.boolean = true, .help = "every namespace"}},
      {"all-namespaces", {.boolean = true, .help = "every namespace"}},
      {"x", {.help = "alone"}}};
  const std::string text = toolFlagsUsage(own);
  EXPECT_NE(text.find("  -n, --namespace=VALUE "), std::string::npos) << text;
  EXPECT_NE(text.find("  -A, --all-namespaces "), std::string::npos) << text;
  EXPECT_NE(text.find("  -x VALUE "), std::string::npos) << text;
  EXPECT_EQ(text.find("--n="), std::string::npos) << text;
  EXPECT_EQ(text.find("--A "), std::string::npos) << text;
}

TEST(FlagsTest, ListerKubeconfigIsListerThenKubeconfigThenNone) {
  struct Case {
    std::vector<std::string> args;
    std::string flag;
    std::string path;
  };
  const Case cases[] = {
      {{"--config=c"}, "", ""},
      {{"--config=c", "--kubeconfig=/k"}, "kubeconfig", "/k"},
      {{"--config=c", "--lister-kubeconfig=/l"}, "lister-kubeconfig", "/l"},
      {{"--config=c", "--kubeconfig=/k", "--lister-kubeconfig=/l"}, "lister-kubeconfig", "/l"},
  };
  for (const auto& c : cases) {
    const KubeconfigChoice chosen = listerKubeconfig(parse(c.args));
    EXPECT_EQ(chosen.flag, c.flag) << c.args.back();
    EXPECT_EQ(chosen.path, c.path) << c.args.back();
  }
}

}  // namespace
}  // namespace metrics_adapter::app
