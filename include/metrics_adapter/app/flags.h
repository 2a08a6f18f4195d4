#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/audit/audit_options.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/kube/cached_object_lister.h"
#include "metrics_adapter/logging/log_options.h"
#include "metrics_adapter/prometheus/prometheus_client.h"
#include "metrics_adapter/server/https_server.h"

namespace metrics_adapter::app {

// Who may call the adapter (docs/api-contract.md "Authentication (delegated)" and
// "Authorization (delegated)"), as the generic apiserver flags say.
struct AuthOptions {
  bool delegated = true;                  // --authentication-mode=delegated|none
  std::string authentication_kubeconfig;  // TokenReview and the auth ConfigMap
  std::string authorization_kubeconfig;   // SubjectAccessReview
  bool skip_lookup = false;               // --authentication-skip-lookup: no ConfigMap
  // --authentication-tolerate-lookup-failure: start although the ConfigMap could not be read
  // (forbidden, unreachable); without it such a failure stops the start, as upstream.
  bool tolerate_lookup_failure = false;
  std::string client_ca_file;
  std::string requestheader_client_ca_file;
  // Unset lists come from the extension-apiserver-authentication ConfigMap.
  std::optional<std::vector<std::string>> requestheader_allowed_names;
  std::optional<std::vector<std::string>> requestheader_username_headers;
  std::optional<std::vector<std::string>> requestheader_group_headers;
  std::optional<std::vector<std::string>> requestheader_extra_headers_prefix;
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
  std::chrono::milliseconds token_cache_ttl{std::chrono::seconds(10)};
  std::chrono::milliseconds authorized_ttl{std::chrono::seconds(10)};
  std::chrono::milliseconds unauthorized_ttl{std::chrono::seconds(10)};
};

// What a flag that names something we do differently does here, said once at start (e.g.
// --profiling: "no /debug/pprof here: profile with perf"). Never a silent no-op.
struct StartupNotice {
  bool warning = false;  // a value we could not honour as given (e.g. a TLS floor below 1.2)
  std::string text;
};

// Everything the command line decides.
struct AdapterOptions {
  std::string config_file;
  prometheus::PrometheusClientOptions prometheus;
  // --prometheus-auth-config and --prometheus-auth-incluster. parseFlags and parseToolFlags have
  // already put their credentials into `prometheus` (app/prometheus_auth.h); kept for messages.
  std::string prometheus_auth_config;
  bool prometheus_auth_incluster = false;
  std::chrono::milliseconds query_timeout{std::chrono::seconds(10)};
  // --metrics-cache-ttl: how long one Prometheus answer serves identical queries; 0 = only
  // queries in flight together (or for the same millisecond) share one.
  std::chrono::milliseconds metrics_cache_ttl{0};
  discovery::RelistOptions relist;
  std::string lister_kubeconfig;  // --lister-kubeconfig: objects and discovery
  std::string kubeconfig;         // --kubeconfig: used when --lister-kubeconfig is not given
  std::chrono::milliseconds discovery_interval{std::chrono::minutes(1)};
  kube::ObjectListerOptions object_lister;
  AuthOptions auth;
  server::ServerOptions server;
  logging::LogOptions log;
  audit::AuditOptions audit;
  // --debug-socket-path: a Unix socket serving /metrics, the health paths and the effective
  // flags without authentication (upstream serves its debug handlers there).
  std::string debug_socket_path;
  // --client-qps / --client-burst: the rate of calls to the Kubernetes API for objects and
  // discovery (token bucket), as upstream's lister client; 0 qps = unlimited.
  double client_qps = 0;
  int client_burst = 0;
  // Words that are not flags (the chart's leading "/adapter"): ignored, as upstream's command
  // line ignores them, with one warning at start.
  std::vector<std::string> ignored_arguments;
  std::vector<StartupNotice> notices;
  // Every flag given, as name and value, in order (the debug socket's /debug/flags).
  std::vector<std::pair<std::string, std::string>> given_flags;
  // How often the config file's identity (resolved path, inode, mtime, size) is checked.
  std::chrono::milliseconds config_check_interval{std::chrono::seconds(2)};
  bool show_help = false;
  bool show_version = false;
  bool dry_run = false;  // --dry-run: check flags, config and files, then exit (cli/dry_run.h)
};

// The kubeconfig the flags choose for listing objects and API discovery: --lister-kubeconfig,
// else --kubeconfig. Both empty when neither is given: then the in-cluster service account is
// used when there is one, else no Kubernetes API.
struct KubeconfigChoice {
  std::string flag;  // "lister-kubeconfig" or "kubeconfig"
  std::string path;
};
KubeconfigChoice listerKubeconfig(const AdapterOptions& options);

// A command-line problem; what() names the flag.
class FlagError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses prometheus-adapter-compatible flags (`--name=value`, `--name value`, `-name=value`).
// Unknown flags, and upstream flags not implemented yet, are FlagErrors, never ignored.
// --prometheus-auth-config/-incluster are applied here (their files are read), so a bad
// kubeconfig or service-account token is a FlagError naming the flag.
AdapterOptions parseFlags(std::span<const std::string> args);

// A flag of one tool only (e.g. explain's --metric), read with the server's syntax.
struct ToolFlag {
  bool boolean = false;  // a switch: `--name` alone means true
  std::string help;
  std::function<void(const std::string& value)> apply;  // throws FlagError
};

// A ToolFlag's apply that stores the value in one text field of a tool's options.
template <typename Options>
std::function<void(const std::string&)> storeText(Options* options, std::string Options::*field) {
  return [options, field](const std::string& value) { options->*field = value; };
}

// Reads a tool's words (check-config, explain) with the server's syntax and the server's own
// definitions of the flags they share: every Prometheus client flag (--prometheus-url, -verb,
// -header, -token-file, -ca-file, -client-tls-cert-file, -client-tls-key-file, -auth-config,
// -auth-incluster, -timeout, -max-response-bytes) and --metrics-max-age. Those land in `options`
// exactly as parseFlags puts them (options.prometheus, options.query_timeout,
// options.relist.max_age); `own` are the tool's flags; positional words are appended to
// `positional`, or are an error when it is null. Unknown and server-only flags are FlagErrors.
// Returns the names of the flags read, in order.
std::vector<std::string> parseToolFlags(std::span<const std::string> args,
                                        const std::map<std::string, ToolFlag>& own,
                                        AdapterOptions& options,
                                        std::vector<std::string>* positional);

// Help lines for `own` and the flags parseToolFlags shares with the server.
std::string toolFlagsUsage(const std::map<std::string, ToolFlag>& own);

// A boolean flag's value as parseFlags reads it (true/false/1/0/t/f); throws FlagError.
bool parseBoolFlag(const std::string& name, const std::string& value);

// Go time.ParseDuration syntax ("1m", "1h30m", "500ms", "1.5s"); throws FlagError.
std::chrono::milliseconds parseGoDuration(std::string_view text);

std::string usage();

}  // namespace metrics_adapter::app
