#include "cli/dry_run.h"

#include <boost/asio/ip/address.hpp>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "metrics_adapter/app/backend_pool.h"
#include "metrics_adapter/audit/audit_options.h"
#include "metrics_adapter/auth/authenticator.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/logging/logging.h"
#include "metrics_adapter/prometheus/prometheus_client.h"
#include "metrics_adapter/server/https_server.h"

namespace metrics_adapter::cli {
namespace {

// What the checks found: problems fail the dry run, notes make up the summary line.
struct Findings {
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

// Which rules each backend serves: "backend gpu (http://thanos:10902): rules[0], forecastRules[0]".
std::vector<std::string> backendUses(const config::AdapterConfig& config,
                                     const prometheus::BackendSet& backends) {
  std::map<std::string, std::vector<std::string>> uses;
  auto use = [&](const std::string& backend, std::string rule) {
    uses[backend].push_back(std::move(rule));
  };
  for (std::size_t i = 0; i < config.rules.size(); ++i) {
    use(config.rules[i].backend, "rules[" + std::to_string(i) + "]");
  }
  for (std::size_t i = 0; i < config.external_rules.size(); ++i) {
    use(config.external_rules[i].backend, "externalRules[" + std::to_string(i) + "]");
  }
  if (config.resource_rules) use(config.resource_rules->backend, "resourceRules");
  for (std::size_t i = 0; i < config.forecast_rules.size(); ++i) {
    use(config.forecast_rules[i].backend, "forecastRules[" + std::to_string(i) + "]");
  }
  std::vector<std::string> lines;
  for (const auto& backend : backends.all()) {
    std::string line = "backend " + backend->name + " (" + backend->url + "): ";
    const auto& rules = uses[backend->name];
    if (rules.empty()) line += "no rules";
    for (std::size_t i = 0; i < rules.size(); ++i) line += (i ? ", " : "") + rules[i];
    lines.push_back(std::move(line));
  }
  return lines;
}

// The backends the server would build from the config and the --prometheus-* flags.
void checkBackends(const app::AdapterOptions& options, const config::AdapterConfig& config,
                   Findings& found) {
  try {
    const auto backends = app::toolBackends(config, options.prometheus);
    for (auto& line : backendUses(config, *backends)) found.notes.push_back(std::move(line));
  } catch (const std::exception& e) {
    found.problems.emplace_back(e.what());
  }
}

void checkConfig(const app::AdapterOptions& options, Findings& found) {
  try {
    const config::AdapterConfig config = config::loadConfigFile(options.config_file);
    std::vector<std::string> warnings;
    // As the server compiles them when the Kubernetes API cannot be asked for its resources.
    std::shared_ptr<const discovery::CompiledResourceRules> resource_rules;
    discovery::compileRules(config, kube::RestMapper::builtin(), &warnings, &resource_rules);
    for (auto& warning : warnings) found.warnings.push_back(std::move(warning));
    found.notes.push_back("config " + options.config_file + " (" +
                          std::to_string(config.rules.size()) + " rules, " +
                          std::to_string(config.external_rules.size()) + " externalRules)");
    if (!config.forecast_rules.empty()) {
      found.notes.push_back(std::to_string(config.forecast_rules.size()) + " forecastRules");
    }
    if (resource_rules) {
      found.notes.push_back("metrics.k8s.io from resourceRules (window " +
                            (resource_rules->window.empty() ? "0s" : resource_rules->window) + ")");
    }
    checkBackends(options, config, found);
  } catch (const config::ConfigError& e) {
    found.problems.push_back(std::string("invalid configuration: ") + e.what());
    checkBackends(options, config::AdapterConfig{}, found);  // the flags' default still counts
  }
}

// Loads the kubeconfig a flag names and builds the client the server would build from it.
void checkKubeconfig(const std::string& flag, const std::string& path, Findings& found) {
  try {
    kube::KubeClient client(kube::loadKubeconfig(path));
  } catch (const std::exception& e) {
    found.problems.push_back("--" + flag + ": " + e.what());
  }
}

// The Kubernetes API for the object lister and, in delegated mode, TokenReview and
// SubjectAccessReview, resolved in the server's order.
void checkKubernetes(const app::AdapterOptions& options, Findings& found) {
  std::string lister = "none (wildcard requests with a labelSelector would answer 503)";
  const app::KubeconfigChoice chosen = app::listerKubeconfig(options);
  if (!chosen.path.empty()) {
    checkKubeconfig(chosen.flag, chosen.path, found);
    lister = chosen.path;
  } else if (auto in_cluster = kube::inClusterOptions()) {
    try {
      kube::KubeClient client(*in_cluster);
      lister = "in-cluster";
    } catch (const std::exception& e) {
      found.problems.push_back(std::string("in-cluster service account: ") + e.what());
    }
  } else if (options.auth.delegated) {
    lister = "in-cluster (not present here; checked when the server starts in a pod)";
  }
  found.notes.push_back("Kubernetes API " + lister);
  if (!options.auth.delegated) {
    found.notes.emplace_back("authentication none (local use only)");
    return;
  }
  if (!options.auth.authentication_kubeconfig.empty()) {
    checkKubeconfig("authentication-kubeconfig", options.auth.authentication_kubeconfig, found);
  }
  if (!options.auth.authorization_kubeconfig.empty()) {
    checkKubeconfig("authorization-kubeconfig", options.auth.authorization_kubeconfig, found);
  }
  found.notes.emplace_back("authentication delegated");
}

void checkCaFile(const char* flag, const std::string& path, Findings& found) {
  if (path.empty()) return;
  std::ifstream file(path);
  if (!file) {
    found.problems.push_back(std::string("--") + flag + ": cannot read " + path);
    return;
  }
  std::stringstream pem;
  pem << file.rdbuf();
  try {
    auth::checkCaBundle(pem.str());
  } catch (const std::exception& e) {
    found.problems.push_back(std::string("--") + flag + ": " + path + ": " + e.what());
  }
}

void checkServing(const app::AdapterOptions& options, Findings& found) {
  const server::ServerOptions& serving = options.server;
  boost::system::error_code error;
  boost::asio::ip::make_address(serving.bind_address, error);
  if (error)
    found.problems.push_back("--bind-address: \"" + serving.bind_address +
                             "\" is not an IP address");
  const std::string where = "HTTPS on " + serving.bind_address + ":" + std::to_string(serving.port);
  if (serving.tls_cert_file.empty() != serving.tls_key_file.empty()) {
    found.problems.emplace_back(
        "--tls-cert-file and --tls-private-key-file must be given together");
    return;
  }
  try {
    const auto certificate = server::checkServingCertificate(serving);
    if (const std::size_t sni = serving.sni_cert_keys.size(); sni > 0) {
      found.notes.push_back(std::to_string(sni) + " SNI certificate" + (sni == 1 ? "" : "s") +
                            " (--tls-sni-cert-key)");
    }
    if (!certificate) {
      found.notes.push_back(where + " with a self-signed certificate in " + serving.cert_dir);
      return;
    }
    if (!certificate->valid_now) {
      found.warnings.push_back(serving.tls_cert_file + " is not valid now (valid from " +
                               certificate->not_before + " until " + certificate->not_after + ")");
    }
    found.notes.push_back(where + " with " + serving.tls_cert_file + " (valid until " +
                          certificate->not_after + ")");
  } catch (const std::exception& e) {
    found.problems.emplace_back(e.what());
  }
}

// The audit policy and backends, and the log files, as the server would open them.
void checkAuditAndLogs(const app::AdapterOptions& options, Findings& found) {
  try {
    audit::checkAuditOptions(options.audit);
    if (!options.audit.policy_file.empty()) found.notes.emplace_back("audit policy checked");
  } catch (const std::exception& e) {
    found.problems.emplace_back(e.what());
  }
  try {
    logging::checkLogOptions(options.log);
  } catch (const std::exception& e) {
    found.problems.emplace_back(e.what());
  }
  for (const std::string& word : options.ignored_arguments) {
    found.warnings.push_back("\"" + word + "\" is not a flag and is ignored");
  }
  for (const app::StartupNotice& notice : options.notices) {
    if (notice.warning) found.warnings.push_back(notice.text);
  }
}

}  // namespace

int runDryRun(const app::AdapterOptions& options, std::ostream& out, std::ostream& err) {
  Findings found;
  checkConfig(options, found);
  checkKubernetes(options, found);
  checkCaFile("client-ca-file", options.auth.client_ca_file, found);
  checkCaFile("requestheader-client-ca-file", options.auth.requestheader_client_ca_file, found);
  checkServing(options, found);
  checkAuditAndLogs(options, found);

  if (!found.problems.empty()) {
    for (const auto& problem : found.problems) err << "dry run: " << problem << "\n";
    err << "dry run: the server would not start (" << found.problems.size() << " problem"
        << (found.problems.size() == 1 ? "" : "s") << ")\n";
    return 1;
  }
  for (const auto& warning : found.warnings) out << "warning: " << warning << "\n";
  out << "dry run OK:";
  for (std::size_t i = 0; i < found.notes.size(); ++i) {
    out << (i == 0 ? " " : "; ") << found.notes[i];
  }
  out << "\n";
  return 0;
}

}  // namespace metrics_adapter::cli
