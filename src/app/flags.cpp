#include "metrics_adapter/app/flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>

#include "app/prometheus_auth.h"
#include "metrics_adapter/audit/audit_options.h"
#include "metrics_adapter/server/sni_cert_key.h"

namespace metrics_adapter::app {

// klog's flags are read here and given their meaning by the logging module.
using logging::LogSeverity;
namespace {

struct Flag {
  std::string help;
  bool boolean = false;
  std::function<void(AdapterOptions&, const std::string&)> apply;
};

std::chrono::seconds parseSeconds(const std::string& value) {
  return std::chrono::duration_cast<std::chrono::seconds>(parseGoDuration(value));
}

long parseInteger(const std::string& name, const std::string& value, long min, long max) {
  long result = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (error != std::errc() || end != value.data() + value.size() || result < min || result > max) {
    throw FlagError("--" + name + ": \"" + value + "\" is not a whole number from " +
                    std::to_string(min) + " to " + std::to_string(max));
  }
  return result;
}

bool parseBool(const std::string& name, const std::string& value) {
  if (value == "true" || value == "1" || value == "t" || value == "TRUE" || value == "True") {
    return true;
  }
  if (value == "false" || value == "0" || value == "f" || value == "FALSE" || value == "False") {
    return false;
  }
  throw FlagError("--" + name + ": \"" + value + "\" is not a boolean");
}

double parseNumber(const std::string& name, const std::string& value) {
  double result = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (error != std::errc() || end != value.data() + value.size() || !(result >= 0) ||
      result > 1e6) {
    throw FlagError("--" + name + ": \"" + value + "\" is not a number from 0 to 1000000");
  }
  return result;
}

logging::LogFormat parseLogFormat(const std::string& name, const std::string& value) {
  if (value != "text" && value != "json") {
    throw FlagError("--" + name + ": must be text or json, not \"" + value + "\"");
  }
  return value == "json" ? logging::LogFormat::kJson : logging::LogFormat::kText;
}

// klog's --stderrthreshold: a severity name or its number.
LogSeverity parseSeverity(const std::string& value) {
  static const std::map<std::string, LogSeverity> kNames = {
      {"INFO", LogSeverity::kInfo},       {"0", LogSeverity::kInfo},
      {"WARNING", LogSeverity::kWarning}, {"1", LogSeverity::kWarning},
      {"ERROR", LogSeverity::kError},     {"2", LogSeverity::kError},
      {"FATAL", LogSeverity::kFatal},     {"3", LogSeverity::kFatal}};
  std::string upper = value;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto found = kNames.find(upper);
  if (found == kNames.end()) {
    throw FlagError("--stderrthreshold: \"" + value +
                    "\" is not a severity (INFO, WARNING, ERROR, FATAL or 0-3)");
  }
  return found->second;
}

std::vector<std::string> splitList(const std::string& value) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (begin <= value.size()) {
    std::size_t end = value.find(',', begin);
    if (end == std::string::npos) end = value.size();
    if (end > begin) items.push_back(value.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

// The flags of the server's own concerns; the audit module defines its --audit-* flags itself.
std::map<std::string, Flag> serverFlags() {
  return {
      {"config",
       {"path to the rules file (prometheus-adapter format); required", false,
        [](AdapterOptions& o, const std::string& v) { o.config_file = v; }}},
      {"prometheus-url",
       {"Prometheus base URL (default https://localhost)", false,
        [](AdapterOptions& o, const std::string& v) { o.prometheus.url = v; }}},
      {"prometheus-verb",
       {"HTTP verb for Prometheus queries: GET or POST (default GET)", false,
        [](AdapterOptions& o, const std::string& v) {
          if (v != "GET" && v != "POST") {
            throw FlagError("--prometheus-verb: must be GET or POST, not \"" + v + "\"");
          }
          o.prometheus.verb = v;
        }}},
      {"prometheus-header",
       {"extra header name=value on every Prometheus call; repeatable", false,
        [](AdapterOptions& o, const std::string& v) {
          auto eq = v.find('=');
          if (eq == 0 || v.empty()) {
            throw FlagError("--prometheus-header: expected name=value, got \"" + v + "\"");
          }
          o.prometheus.headers.emplace_back(v.substr(0, eq),
                                            eq == std::string::npos ? "" : v.substr(eq + 1));
        }}},
      {"prometheus-token-file",
       {"bearer token file (trimmed, re-read when it changes)", false,
        [](AdapterOptions& o, const std::string& v) { o.prometheus.token_file = v; }}},
      {"prometheus-auth-config",
       {"kubeconfig whose current context's credentials and TLS settings are used for Prometheus "
        "(its server URL is ignored); ignored when --prometheus-ca-file is set",
        false, [](AdapterOptions& o, const std::string& v) { o.prometheus_auth_config = v; }}},
      {"prometheus-auth-incluster",
       {"use the pod's service-account token and CA for Prometheus (e.g. behind "
        "kube-rbac-proxy); ignored when --prometheus-ca-file is set",
        true,
        [](AdapterOptions& o, const std::string& v) {
          o.prometheus_auth_incluster = parseBool("prometheus-auth-incluster", v);
        }}},
      {"prometheus-ca-file",
       {"CA bundle trusted for Prometheus, added to the system roots", false,
        [](AdapterOptions& o, const std::string& v) { o.prometheus.ca_file = v; }}},
      {"prometheus-client-tls-cert-file",
       {"client certificate for Prometheus", false,
        [](AdapterOptions& o, const std::string& v) { o.prometheus.client_cert_file = v; }}},
      {"prometheus-client-tls-key-file",
       {"client key for Prometheus", false,
        [](AdapterOptions& o, const std::string& v) { o.prometheus.client_key_file = v; }}},
      {"prometheus-timeout",
       {"deadline of one Prometheus query (default 10s)", false,
        [](AdapterOptions& o, const std::string& v) { o.query_timeout = parseGoDuration(v); }}},
      {"metrics-cache-ttl",
       {"how long one Prometheus answer also serves identical queries, for many HPAs on one "
        "metric (default 0: only identical queries in flight together share one)",
        false,
        [](AdapterOptions& o, const std::string& v) {
          o.metrics_cache_ttl = parseGoDuration(v);
          if (o.metrics_cache_ttl < std::chrono::milliseconds(0)) {
            throw FlagError("--metrics-cache-ttl must not be negative");
          }
        }}},
      {"prometheus-max-response-bytes",
       {"largest Prometheus query answer read; larger ones fail (default 16777216)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.prometheus.max_response_bytes = static_cast<std::size_t>(
              parseInteger("prometheus-max-response-bytes", v, 4096, 1L << 32));
        }}},
      {"metrics-relist-interval",
       {"how often to rediscover series (default 1m)", false,
        [](AdapterOptions& o, const std::string& v) { o.relist.interval = parseGoDuration(v); }}},
      {"metrics-max-age",
       {"discovery look-back window (default 2 x relist interval)", false,
        [](AdapterOptions& o, const std::string& v) { o.relist.max_age = parseGoDuration(v); }}},
      {"authentication-mode",
       {"delegated (default): trust the front proxy, TokenReview and SubjectAccessReview as "
        "upstream; none: no authentication or authorization, for local use only",
        false,
        [](AdapterOptions& o, const std::string& v) {
          if (v != "delegated" && v != "none") {
            throw FlagError("--authentication-mode: must be delegated or none, not \"" + v + "\"");
          }
          o.auth.delegated = v == "delegated";
        }}},
      {"authentication-kubeconfig",
       {"kubeconfig for TokenReview and the authentication ConfigMap (default: --kubeconfig, "
        "else in-cluster)",
        false,
        [](AdapterOptions& o, const std::string& v) { o.auth.authentication_kubeconfig = v; }}},
      {"authorization-kubeconfig",
       {"kubeconfig for SubjectAccessReview (default: --kubeconfig, else in-cluster)", false,
        [](AdapterOptions& o, const std::string& v) { o.auth.authorization_kubeconfig = v; }}},
      {"authentication-skip-lookup",
       {"do not read kube-system/extension-apiserver-authentication", true,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.skip_lookup = parseBool("authentication-skip-lookup", v);
        }}},
      {"client-ca-file",
       {"CA bundle for client certificates (user = CN, groups = O)", false,
        [](AdapterOptions& o, const std::string& v) { o.auth.client_ca_file = v; }}},
      {"requestheader-client-ca-file",
       {"CA bundle of the front proxy's client certificate (X-Remote-* headers are trusted only "
        "with it)",
        false,
        [](AdapterOptions& o, const std::string& v) { o.auth.requestheader_client_ca_file = v; }}},
      {"requestheader-allowed-names",
       {"front-proxy certificate common names to accept (comma-separated; empty: any)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.requestheader_allowed_names = splitList(v);
        }}},
      {"requestheader-username-headers",
       {"headers carrying the user name (default X-Remote-User)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.requestheader_username_headers = splitList(v);
        }}},
      {"requestheader-group-headers",
       {"headers carrying groups (default X-Remote-Group)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.requestheader_group_headers = splitList(v);
        }}},
      {"requestheader-extra-headers-prefix",
       {"header prefixes carrying extra user attributes (default X-Remote-Extra-)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.requestheader_extra_headers_prefix = splitList(v);
        }}},
      {"authorization-always-allow-paths",
       {"paths allowed without authorization (default /healthz,/readyz,/livez)", false,
        [](AdapterOptions& o, const std::string& v) { o.auth.always_allow_paths = splitList(v); }}},
      {"authentication-token-webhook-cache-ttl",
       {"how long TokenReview answers are cached (default 10s)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.token_cache_ttl = parseGoDuration(v);
        }}},
      {"authorization-webhook-cache-authorized-ttl",
       {"how long allowing SubjectAccessReview answers are cached (default 10s)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.authorized_ttl = parseGoDuration(v);
        }}},
      {"authorization-webhook-cache-unauthorized-ttl",
       {"how long denying SubjectAccessReview answers are cached (default 10s)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.unauthorized_ttl = parseGoDuration(v);
        }}},
      {"header-timeout",
       {"time a client has to send the request headers (default 10s)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.server.header_timeout = parseSeconds(v);
        }}},
      {"dry-run",
       {"check the flags, the config file and every file the flags name as the server would, "
        "print a one-line summary and exit (0: would start, 1: would not)",
        true,
        [](AdapterOptions& o, const std::string& v) { o.dry_run = parseBool("dry-run", v); }}},
      {"disable-http2",
       {"accepted for compatibility: the adapter only ever speaks HTTP/1.1", true,
        [](AdapterOptions&, const std::string& v) { parseBool("disable-http2", v); }}},
      {"lister-kubeconfig",
       {"kubeconfig for listing objects and API discovery (default: --kubeconfig, else "
        "in-cluster, else no Kubernetes API)",
        false, [](AdapterOptions& o, const std::string& v) { o.lister_kubeconfig = v; }}},
      {"kubeconfig",
       {"kubeconfig for the Kubernetes API (default: in-cluster when running in a pod)", false,
        [](AdapterOptions& o, const std::string& v) { o.kubeconfig = v; }}},
      {"discovery-interval",
       {"how often to re-read the cluster's resources, e.g. for new CRDs (default 1m)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.discovery_interval = parseGoDuration(v);
        }}},
      {"object-cache-ttl",
       {"ignored, accepted for compatibility: object lists are kept current by a watch (the "
        "value must still be a duration)",
        false, [](AdapterOptions&, const std::string& v) { parseGoDuration(v); }}},
      {"secure-port",
       {"HTTPS port (default 6443)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.server.port = static_cast<std::uint16_t>(parseInteger("secure-port", v, 0, 65535));
        }}},
      {"bind-address",
       {"address to listen on (default 0.0.0.0)", false,
        [](AdapterOptions& o, const std::string& v) { o.server.bind_address = v; }}},
      {"cert-dir",
       {"where a self-signed certificate is kept when no --tls-cert-file is given", false,
        [](AdapterOptions& o, const std::string& v) { o.server.cert_dir = v; }}},
      {"tls-cert-file",
       {"serving certificate (PEM); reloaded when it changes", false,
        [](AdapterOptions& o, const std::string& v) { o.server.tls_cert_file = v; }}},
      {"tls-private-key-file",
       {"serving key (PEM)", false,
        [](AdapterOptions& o, const std::string& v) { o.server.tls_key_file = v; }}},
      {"tls-sni-cert-key",
       {"cert.crt,key.key[:pattern,...]: a pair served to clients whose SNI matches a pattern "
        "(example.com, *.example.com, or an IP for clients sending no SNI); without patterns, "
        "the certificate's own names; exact beats wildcard, patterns beat extracted names; "
        "repeatable; reloaded when the files change",
        false,
        [](AdapterOptions& o, const std::string& v) {
          try {
            o.server.sni_cert_keys.push_back(server::parseSniCertKey(v));
          } catch (const std::invalid_argument& e) {
            throw FlagError("--tls-sni-cert-key: \"" + v + "\": " + e.what());
          }
        }}},
      {"tls-min-version",
       {"VersionTLS12 (default) or VersionTLS13; VersionTLS10 and VersionTLS11 are served with "
        "TLS 1.2 as the floor, with a warning (the aggregator and every client speak 1.2)",
        false,
        [](AdapterOptions& o, const std::string& v) {
          if (v == "VersionTLS10" || v == "VersionTLS11") {
            o.server.tls_min_version = "VersionTLS12";
            o.notices.push_back({true, "--tls-min-version=" + v +
                                           ": TLS 1.2 is the floor here; serving VersionTLS12"});
            return;
          }
          if (v != "VersionTLS12" && v != "VersionTLS13") {
            throw FlagError(
                "--tls-min-version: must be VersionTLS10, VersionTLS11, VersionTLS12 or "
                "VersionTLS13, not \"" +
                v + "\"");
          }
          o.server.tls_min_version = v;
        }}},
      {"tls-cipher-suites",
       {"comma-separated IANA cipher suite names", false,
        [](AdapterOptions& o, const std::string& v) {
          o.server.tls_cipher_suites = splitList(v);
        }}},
      {"max-requests-inflight",
       {"requests handled or queued at once (default 400)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.server.max_in_flight =
              static_cast<std::size_t>(parseInteger("max-requests-inflight", v, 1, 100000));
        }}},
      {"request-timeout",
       {"deadline of one API request (default 1m0s)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.server.request_timeout = parseSeconds(v);
        }}},
      {"v",
       {"log verbosity: 0-5 info, 6-7 debug (one access-log line per request), 8+ trace", false,
        [](AdapterOptions& o, const std::string& v) {
          o.log.verbosity = static_cast<int>(parseInteger("v", v, 0, 100));
        }}},
      {"log-format",
       {"text (default) or json: one JSON object per line with ts, level, msg", false,
        [](AdapterOptions& o, const std::string& v) {
          o.log.format = parseLogFormat("log-format", v);
        }}},
      {"logging-format",
       {"text (default) or json, as Kubernetes components write (same as --log-format)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.log.format = parseLogFormat("logging-format", v);
        }}},
      {"logtostderr",
       {"log to stderr only (default true); false: to --log_file or --log_dir", true,
        [](AdapterOptions& o, const std::string& v) {
          o.log.logtostderr = parseBool("logtostderr", v);
        }}},
      {"alsologtostderr",
       {"with --logtostderr=false: log to the files and to stderr", true,
        [](AdapterOptions& o, const std::string& v) {
          o.log.alsologtostderr = parseBool("alsologtostderr", v);
        }}},
      {"stderrthreshold",
       {"with --logtostderr=false: messages at or above this severity also go to stderr (INFO, "
        "WARNING, ERROR, FATAL or 0-3; default ERROR)",
        false,
        [](AdapterOptions& o, const std::string& v) { o.log.stderrthreshold = parseSeverity(v); }}},
      {"log_dir",
       {"with --logtostderr=false: write metrics-adapter.INFO, .WARNING and .ERROR here", false,
        [](AdapterOptions& o, const std::string& v) { o.log.log_dir = v; }}},
      {"log_file",
       {"with --logtostderr=false: write every message to this file (wins over --log_dir)", false,
        [](AdapterOptions& o, const std::string& v) { o.log.log_file = v; }}},
      {"log_file_max_size",
       {"MB a log file may grow to before it is rotated; 0: never (default 1800)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.log.log_file_max_size_mb =
              static_cast<std::uint64_t>(parseInteger("log_file_max_size", v, 0, 1L << 40));
        }}},
      {"vmodule",
       {"pattern=N,...: verbosity per source file (glob over the file name without extension, "
        "e.g. connection=8,relist*=6)",
        false,
        [](AdapterOptions& o, const std::string& v) {
          try {
            o.log.vmodule = logging::parseVmodule(v);
          } catch (const std::invalid_argument& e) {
            throw FlagError(e.what());
          }
        }}},
      {"skip_headers",
       {"no timestamp and level before each text line", true,
        [](AdapterOptions& o, const std::string& v) {
          o.log.skip_headers = parseBool("skip_headers", v);
        }}},
      {"skip_log_headers",
       {"no \"Log file created at\" lines at the top of new log files", true,
        [](AdapterOptions& o, const std::string& v) {
          o.log.skip_log_headers = parseBool("skip_log_headers", v);
        }}},
      {"add_dir_header",
       {"show the source file with its directory in each line's header", true,
        [](AdapterOptions& o, const std::string& v) {
          o.log.add_dir_header = parseBool("add_dir_header", v);
        }}},
      {"one_output",
       {"with --log_dir: each message only in the file of its own severity", true,
        [](AdapterOptions& o, const std::string& v) {
          o.log.one_output = parseBool("one_output", v);
        }}},
      {"log_backtrace_at",
       {"file:line: a stack trace follows the message logged there", false,
        [](AdapterOptions& o, const std::string& v) {
          try {
            logging::parseBacktraceAt(
                v);  // the one reader of the flag, so a refusal names the flag
          } catch (const std::invalid_argument& error) {
            throw FlagError(error.what());
          }
          o.log.log_backtrace_at = v;
        }}},
      {"log-flush-frequency",
       {"how often buffered log lines are flushed (default 5s)", false,
        [](AdapterOptions& o, const std::string& v) {
          o.log.flush_frequency = parseGoDuration(v);
          if (o.log.flush_frequency <= std::chrono::milliseconds(0)) {
            throw FlagError("--log-flush-frequency must be positive");
          }
        }}},
      {"permit-port-sharing",
       {"bind with SO_REUSEPORT: several adapters may listen on one port (the kernel spreads the "
        "connections)",
        true,
        [](AdapterOptions& o, const std::string& v) {
          o.server.reuse_port = parseBool("permit-port-sharing", v);
        }}},
      {"permit-address-sharing",
       {"bind with SO_REUSEADDR (always on here, as in Go's listeners: a restart never waits for "
        "sockets in TIME_WAIT)",
        true,
        [](AdapterOptions&, const std::string& v) { parseBool("permit-address-sharing", v); }}},
      {"http2-max-streams-per-connection",
       {"accepted; the adapter serves HTTP/1.1 only, one request at a time per connection, so "
        "there are no streams to limit (connections: --max-requests-inflight)",
        false,
        [](AdapterOptions& o, const std::string& v) {
          parseInteger("http2-max-streams-per-connection", v, 0, 1L << 31);
          o.notices.push_back({false,
                               "--http2-max-streams-per-connection: HTTP/1.1 only here, "
                               "one request at a time per connection"});
        }}},
      {"authentication-tolerate-lookup-failure",
       {"start although kube-system/extension-apiserver-authentication cannot be read (then "
        "only the CA flags given are trusted); default false: such a failure stops the start",
        true,
        [](AdapterOptions& o, const std::string& v) {
          o.auth.tolerate_lookup_failure = parseBool("authentication-tolerate-lookup-failure", v);
        }}},
      {"profiling",
       {"accepted; there is no /debug/pprof here (a Go runtime feature): profile with "
        "perf record -g -p PID",
        true,
        [](AdapterOptions& o, const std::string& v) {
          if (parseBool("profiling", v)) {
            o.notices.push_back({false,
                                 "--profiling: no /debug/pprof here; profile the process "
                                 "with perf record -g -p <pid> (docs/troubleshooting.md)"});
          }
        }}},
      {"contention-profiling",
       {"accepted; no Go lock profiles here: perf lock or perf record -e sched:sched_switch", true,
        [](AdapterOptions& o, const std::string& v) {
          if (parseBool("contention-profiling", v)) {
            o.notices.push_back({false,
                                 "--contention-profiling: no Go lock profiles here; use "
                                 "perf lock or perf sched on the process"});
          }
        }}},
      {"enable-priority-and-fairness",
       {"accepted; requests are limited by --max-requests-inflight (429 beyond it), not by "
        "API Priority and Fairness",
        true,
        [](AdapterOptions& o, const std::string& v) {
          if (parseBool("enable-priority-and-fairness", v)) {
            o.notices.push_back(
                {false,
                 "--enable-priority-and-fairness: in-flight limits instead of priority "
                 "and fairness (--max-requests-inflight, 429 with Retry-After beyond it)"});
          }
        }}},
      {"debug-socket-path",
       {"a Unix socket serving /metrics, /healthz, /livez, /readyz and /debug/flags (GET; PUT "
        "/debug/flags/v sets --v) without authentication",
        false, [](AdapterOptions& o, const std::string& v) { o.debug_socket_path = v; }}},
      {"client-qps",
       {"calls per second to the Kubernetes API for objects and discovery (token bucket); "
        "default 0: unlimited (watches keep the object lists current)",
        false,
        [](AdapterOptions& o, const std::string& v) {
          o.client_qps = parseNumber("client-qps", v);
        }}},
      {"client-burst",
       {"calls to the Kubernetes API that may go at once above --client-qps (default 10 when "
        "--client-qps is set)",
        false,
        [](AdapterOptions& o, const std::string& v) {
          o.client_burst = static_cast<int>(parseInteger("client-burst", v, 0, 1000000));
        }}},
      {"help",
       {"print this help", true,
        [](AdapterOptions& o, const std::string& v) { o.show_help = parseBool("help", v); }}},
      {"version",
       {"print the version", true,
        [](AdapterOptions& o, const std::string& v) { o.show_version = parseBool("version", v); }}},
  };
}

const std::map<std::string, Flag>& flagTable() {
  static const std::map<std::string, Flag> kTable = [] {
    std::map<std::string, Flag> table = serverFlags();
    for (const audit::FlagDefinition& flag : audit::auditFlags()) {
      table.emplace(flag.name, Flag{flag.help, flag.boolean,
                                    [apply = flag.apply](AdapterOptions& o, const std::string& v) {
                                      apply(o.audit, v);
                                    }});
    }
    return table;
  }();
  return kTable;
}

}  // namespace

std::chrono::milliseconds parseGoDuration(std::string_view text) {
  const std::string original(text);
  auto fail = [&] {
    return FlagError("invalid duration \"" + original + "\" (examples: 30s, 1m, 1h30m)");
  };
  if (text.empty()) throw fail();
  bool negative = false;
  if (text.front() == '-' || text.front() == '+') {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text == "0") return std::chrono::milliseconds(0);
  static const std::map<std::string, double, std::less<>> kUnitsMs = {
      {"ns", 1e-6}, {"us", 1e-3}, {"µs", 1e-3}, {"ms", 1.0}, {"s", 1e3}, {"m", 6e4}, {"h", 3.6e6}};
  double total_ms = 0;
  if (text.empty()) throw fail();
  while (!text.empty()) {
    std::size_t number_end = 0;
    while (number_end < text.size() &&
           ((text[number_end] >= '0' && text[number_end] <= '9') || text[number_end] == '.')) {
      ++number_end;
    }
    if (number_end == 0) throw fail();
    double number = 0;
    auto [ptr, error] = std::from_chars(text.data(), text.data() + number_end, number);
    if (error != std::errc() || ptr != text.data() + number_end) throw fail();
    text.remove_prefix(number_end);
    std::size_t unit_end = 0;
    while (unit_end < text.size() &&
           !((text[unit_end] >= '0' && text[unit_end] <= '9') || text[unit_end] == '.')) {
      ++unit_end;
    }
    auto unit = kUnitsMs.find(text.substr(0, unit_end));
    if (unit == kUnitsMs.end()) throw fail();
    text.remove_prefix(unit_end);
    total_ms += number * unit->second;
  }
  if (total_ms > 1e12) throw fail();
  auto ms = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(total_ms)));
  return negative ? -ms : ms;
}

namespace {

// Turns --prometheus-auth-config/-incluster into credentials in options.prometheus, after all
// flags are read (--prometheus-ca-file anywhere on the line overrules them).
void applyPrometheusAuth(AdapterOptions& options) {
  try {
    applyPrometheusAuthFlags(options.prometheus_auth_config, options.prometheus_auth_incluster,
                             options.prometheus);
  } catch (const FlagError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw FlagError(e.what());
  }
}

// The flags a tool reads with the server's definitions: every Prometheus client flag, and the
// discovery look-back its series calls use.
bool sharedWithTools(const std::string& name) {
  return name.starts_with("prometheus-") || name == "metrics-max-age";
}

// The one reading of command-line words, for the server and the tools: `--name=value`,
// `--name value`, `-name=value`, switches alone mean true. `own` (tools only) comes first, then
// the server's table, all of it for the server (`tool` false), the shared flags for a tool.
// Returns the names applied, in order.
std::vector<std::string> readFlags(std::span<const std::string> args, bool tool,
                                   const std::map<std::string, ToolFlag>& own,
                                   AdapterOptions& options, std::vector<std::string>* positional) {
  std::vector<std::string> applied;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      if (!positional) {
        // The server, as upstream's command line: a word that is no flag (the Helm chart's
        // leading "/adapter") is ignored, and said once at start.
        options.ignored_arguments.push_back(arg);
        continue;
      }
      positional->push_back(arg);
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = body;
    std::optional<std::string> value;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    const auto own_flag = own.find(name);
    const auto flag = flagTable().find(name);
    const bool is_own = own_flag != own.end();
    if (!is_own && (flag == flagTable().end() || (tool && !sharedWithTools(name)))) {
      throw FlagError("unknown flag: --" + name);
    }
    if (!value) {
      if (is_own ? own_flag->second.boolean : flag->second.boolean) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        throw FlagError("flag needs an argument: --" + name);
      }
    }
    try {
      if (is_own) {
        own_flag->second.apply(*value);
      } else {
        flag->second.apply(options, *value);
      }
    } catch (const std::invalid_argument& e) {
      // Every message names its flag (the duration parser's alone names only the value).
      const std::string flag_name = "--" + name;
      const std::string message = e.what();
      if (message.find(flag_name) != std::string::npos) throw FlagError(message);
      std::string named = flag_name;
      named.append(": ").append(message);
      throw FlagError(named);
    }
    if (!tool) options.given_flags.emplace_back(name, *value);
    applied.push_back(name);
  }
  return applied;
}

// The sections of --help, in their order.
enum class FlagGroup {
  kGeneric,
  kServing,
  kAuthentication,
  kAuthorization,
  kAudit,
  kPrometheus,
  kRules,
  kLogging
};

const char* flagGroupTitle(FlagGroup group) {
  switch (group) {
    case FlagGroup::kGeneric:
      return "Generic";
    case FlagGroup::kServing:
      return "Secure serving";
    case FlagGroup::kAuthentication:
      return "Authentication";
    case FlagGroup::kAuthorization:
      return "Authorization";
    case FlagGroup::kAudit:
      return "Audit";
    case FlagGroup::kPrometheus:
      return "Prometheus";
    case FlagGroup::kRules:
      return "Rules and discovery";
    case FlagGroup::kLogging:
      return "Logging";
  }
  return "Other";
}

// Which section a flag is listed in, by its name: the prefixes the Kubernetes components' flag
// sets use, and klog's flags.
FlagGroup flagGroup(std::string_view name) {
  const auto starts = [name](std::string_view prefix) { return name.starts_with(prefix); };
  if (starts("audit-")) return FlagGroup::kAudit;
  if (starts("authentication-") || starts("requestheader-") || name == "client-ca-file") {
    return FlagGroup::kAuthentication;
  }
  if (starts("authorization-")) return FlagGroup::kAuthorization;
  if (starts("prometheus-")) return FlagGroup::kPrometheus;
  if (starts("log") || name == "v" || name == "vmodule" || name == "add_dir_header" ||
      name == "alsologtostderr" || name == "one_output" || name == "skip_headers" ||
      name == "skip_log_headers" || name == "stderrthreshold") {
    return FlagGroup::kLogging;
  }
  if (name == "config" || starts("metrics-") || name == "discovery-interval" ||
      name == "kubeconfig" || name == "lister-kubeconfig" || name == "object-cache-ttl" ||
      starts("client-")) {
    return FlagGroup::kRules;
  }
  if (name == "help" || name == "version" || name == "dry-run" || name == "profiling" ||
      name == "contention-profiling" || name == "debug-socket-path") {
    return FlagGroup::kGeneric;
  }
  return FlagGroup::kServing;
}

// One line of --help: the flag as typed, then its description.
struct UsageLine {
  std::string flag;
  const std::string* help;
};

void addUsageLine(std::vector<UsageLine>& lines, const std::string& name, bool boolean,
                  const std::string& help) {
  lines.push_back({.flag = "--" + name + (boolean ? "" : "=VALUE"), .help = &help});
}

// Every description starts in one column, as pflag prints them: two spaces after the widest
// flag, except that a flag wider than kUsageColumn (a handful) is not allowed to push every
// description off the screen; its own description then follows two spaces after it.
std::size_t usageColumn(const std::vector<UsageLine>& lines) {
  constexpr std::size_t kUsageColumn = 44;
  std::size_t column = 0;
  for (const UsageLine& line : lines) {
    if (line.flag.size() <= kUsageColumn) column = std::max(column, line.flag.size());
  }
  return column;
}

std::string formatUsage(const std::vector<UsageLine>& lines,
                        std::optional<std::size_t> shared_column = std::nullopt) {
  const std::size_t column = shared_column.value_or(usageColumn(lines));
  std::string text;
  for (const UsageLine& line : lines) {
    text += "  " + line.flag;
    text += std::string(line.flag.size() < column ? column - line.flag.size() + 2 : 2, ' ');
    text += *line.help + "\n";
  }
  return text;
}

}  // namespace

KubeconfigChoice listerKubeconfig(const AdapterOptions& options) {
  if (!options.lister_kubeconfig.empty()) {
    return {.flag = "lister-kubeconfig", .path = options.lister_kubeconfig};
  }
  if (!options.kubeconfig.empty()) return {.flag = "kubeconfig", .path = options.kubeconfig};
  return {};
}

bool parseBoolFlag(const std::string& name, const std::string& value) {
  return parseBool(name, value);
}

std::vector<std::string> parseToolFlags(std::span<const std::string> args,
                                        const std::map<std::string, ToolFlag>& own,
                                        AdapterOptions& options,
                                        std::vector<std::string>* positional) {
  std::vector<std::string> applied = readFlags(args, true, own, options, positional);
  applyPrometheusAuth(options);
  return applied;
}

std::string toolFlagsUsage(const std::map<std::string, ToolFlag>& own) {
  // A one-letter flag is the short form of the long flag with the same description (doctor's
  // -n and --namespace): one line, "-n, --namespace=VALUE", as kubectl prints them.
  std::vector<UsageLine> lines;
  std::set<std::string> merged;
  for (const auto& [name, flag] : own) {
    if (name.size() == 1) continue;
    std::string shorts;
    for (const auto& [letter, short_flag] : own) {
      if (letter.size() == 1 && short_flag.help == flag.help) {
        shorts += "-" + letter + ", ";
        merged.insert(letter);
      }
    }
    shorts.append("--").append(name).append(flag.boolean ? "" : "=VALUE");
    lines.push_back({.flag = std::move(shorts), .help = &flag.help});
  }
  for (const auto& [letter, flag] : own) {
    if (letter.size() == 1 && merged.count(letter) == 0) {
      lines.push_back({.flag = "-" + letter + (flag.boolean ? "" : " VALUE"), .help = &flag.help});
    }
  }
  for (const auto& [name, flag] : flagTable()) {
    if (sharedWithTools(name)) addUsageLine(lines, name, flag.boolean, flag.help);
  }
  return formatUsage(lines);
}

AdapterOptions parseFlags(std::span<const std::string> args) {
  AdapterOptions options;
  const std::vector<std::string> applied = readFlags(args, false, {}, options, nullptr);
  const bool max_age_set =
      std::find(applied.begin(), applied.end(), "metrics-max-age") != applied.end();
  if (options.show_help || options.show_version) return options;
  applyPrometheusAuth(options);
  if (options.config_file.empty()) {
    throw FlagError("no metrics discovery configuration file specified (use --config)");
  }
  if (options.relist.interval <= std::chrono::milliseconds(0)) {
    throw FlagError("--metrics-relist-interval must be positive");
  }
  if (!max_age_set) options.relist.max_age = options.relist.interval * 2;
  if (options.discovery_interval <= std::chrono::milliseconds(0)) {
    throw FlagError("--discovery-interval must be positive");
  }
  if (options.relist.max_age < options.relist.interval) {
    throw FlagError("--metrics-max-age must be at least --metrics-relist-interval");
  }
  return options;
}

std::string usage() {
  // Grouped as the Kubernetes components group theirs, each group's descriptions in one column.
  std::map<FlagGroup, std::vector<UsageLine>> groups;
  std::vector<UsageLine> every;
  for (const auto& [name, flag] : flagTable()) {
    addUsageLine(groups[flagGroup(name)], name, flag.boolean, flag.help);
    addUsageLine(every, name, flag.boolean, flag.help);
  }
  const std::size_t column = usageColumn(every);
  std::string text =
      "Usage: metrics-adapter --config=FILE [flags]\n       metrics-adapter COMMAND [flags]\n";
  for (const auto& [group, lines] : groups) {
    text += "\n";
    text += flagGroupTitle(group);
    text += " flags:\n";
    text += formatUsage(lines, column);
  }
  return text;
}

}  // namespace metrics_adapter::app
