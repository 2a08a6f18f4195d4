#include "cli/doctor/doctor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <tuple>
#include <vector>

#include "cli/check_config/check_config.h"
#include "cli/doctor/doctor_adapter_config.h"
#include "cli/doctor/doctor_cluster.h"
#include "cli/doctor/doctor_diagnosis.h"
#include "cli/doctor/doctor_report.h"
#include "cli/doctor/doctor_scale_to_zero.h"
#include "metrics_adapter/app/backend_pool.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/hpa/hpa_object.h"
#include "metrics_adapter/kube/api_discovery.h"
#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::cli {
namespace {

constexpr int kDoctorUnhealthy = 1;
constexpr int kDoctorCannotRun = 2;

constexpr const char* kDoctorUsage =
    "usage: metrics-adapter doctor hpa NAME [-n NS] [RULES]\n"
    "       metrics-adapter doctor hpa (-n NS | -A) [RULES]\n"
    "       metrics-adapter doctor -f hpa.yaml [-n NS] [RULES]\n"
    "         [-o json] [--kubeconfig FILE] [the server's --prometheus-* flags]\n"
    "       RULES: --config FILE --prometheus-url URL, or by default the ConfigMap and\n"
    "       --prometheus-url of the Deployment --adapter NS/NAME (custom-metrics/metrics-adapter)\n"
    "       as a kubectl plugin (the binary on PATH as kubectl-metrics_adapter):\n"
    "       kubectl metrics-adapter doctor hpa NAME -n NS [RULES]\n";

std::map<std::string, app::ToolFlag> doctorFlags(DoctorOptions* options) {
  auto all = [options](const std::string& value) {
    options->all_namespaces = app::parseBoolFlag("all-namespaces", value);
  };
  auto output = [options](const std::string& value) {
    if (value != "json" && value != "text") throw app::FlagError("--output: json or text");
    options->json_output = value == "json";
  };
  const app::ToolFlag namespace_flag{
      .help = "the HPA's namespace (default: default)",
      .apply = app::storeText(options, &DoctorOptions::namespace_name)};
  const app::ToolFlag file_flag{.help = "HPAs from a YAML or JSON file (not yet applied ones too)",
                                .apply = app::storeText(options, &DoctorOptions::file)};
  const app::ToolFlag output_flag{.help = "text (default) or json", .apply = output};
  const app::ToolFlag all_flag{
      .boolean = true, .help = "every HPA of every namespace", .apply = all};
  return {
      {"namespace", namespace_flag},
      {"n", namespace_flag},
      {"filename", file_flag},
      {"f", file_flag},
      {"output", output_flag},
      {"o", output_flag},
      {"all-namespaces", all_flag},
      {"A", all_flag},
      {"kubeconfig",
       {.help = "kubeconfig to read the cluster with (default: $KUBECONFIG, ~/.kube/config, "
                "in-cluster)",
        .apply = app::storeText(options, &DoctorOptions::kubeconfig)}},
      {"config",
       {.help = "the adapter's rules file (default: read from the --adapter Deployment)",
        .apply = app::storeText(options, &DoctorOptions::config_file)}},
      {"adapter",
       {.help = "NS/NAME of the adapter's Deployment whose ConfigMap and --prometheus-url are "
                "used when --config is not given (default custom-metrics/metrics-adapter)",
        .apply = app::storeText(options, &DoctorOptions::adapter)}},
  };
}

// The client kubectl would use: --kubeconfig, the first file of $KUBECONFIG, ~/.kube/config,
// then the pod's service account.
std::shared_ptr<kube::KubeApi> doctorKubeClient(const DoctorOptions& options) {
  std::string path = options.kubeconfig;
  if (path.empty()) {
    if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
      path = std::string(env).substr(0, std::string(env).find(':'));
    }
  }
  if (path.empty()) {
    if (const char* home = std::getenv("HOME")) {
      const std::string candidate = std::string(home) + "/.kube/config";
      if (std::filesystem::exists(candidate)) path = candidate;
    }
  }
  if (!path.empty()) return std::make_shared<kube::KubeClient>(kube::loadKubeconfig(path));
  if (auto in_cluster = kube::inClusterOptions())
    return std::make_shared<kube::KubeClient>(*in_cluster);
  throw std::invalid_argument(
      "no Kubernetes API: give --kubeconfig or set KUBECONFIG (or run in a pod)");
}

// The HPAs the words name, as the API (or the file) gives them.
std::vector<hpa::Hpa> selectHpas(const DoctorOptions& options, DoctorCluster& cluster) {
  const std::string namespace_name =
      options.namespace_name.empty() ? "default" : options.namespace_name;
  std::vector<nlohmann::json> objects;
  if (!options.file.empty()) {
    std::ifstream in(options.file);
    if (!in) throw std::invalid_argument(options.file + ": cannot read");
    std::stringstream text;
    text << in.rdbuf();
    for (auto& document : hpa::yamlDocumentsToJson(text.str())) {
      const std::string kind = document.value("kind", "");
      if (kind.ends_with("List") && document.contains("items")) {
        for (auto& item : document["items"]) objects.push_back(item);
      } else {
        objects.push_back(std::move(document));
      }
    }
  } else if (!options.hpa_name.empty()) {
    objects.push_back(cluster.hpa(namespace_name, options.hpa_name));
  } else {
    objects = cluster.hpas(options.all_namespaces ? "" : namespace_name);
  }
  std::vector<hpa::Hpa> hpas;
  hpas.reserve(objects.size());
  for (const auto& object : objects) hpas.push_back(hpa::parseHpa(object, namespace_name));
  std::sort(hpas.begin(), hpas.end(), [](const hpa::Hpa& a, const hpa::Hpa& b) {
    return std::tie(a.namespace_name, a.name) < std::tie(b.namespace_name, b.name);
  });
  return hpas;
}

}  // namespace

DoctorOptions parseDoctorFlags(std::span<const std::string> args) {
  DoctorOptions options;
  std::vector<std::string> words;
  const std::vector<std::string> read =
      app::parseToolFlags(args, doctorFlags(&options), options.shared, &words);
  options.prometheus_url_given =
      std::find(read.begin(), read.end(), "prometheus-url") != read.end();
  if (!options.config_file.empty() && !options.prometheus_url_given) {
    throw app::FlagError("--config needs --prometheus-url (the Prometheus the adapter asks)");
  }
  if (options.adapter.find('/') == std::string::npos) throw app::FlagError("--adapter: NS/NAME");
  if (options.file.empty()) {
    if (words.empty() || words[0] != "hpa")
      throw app::FlagError("say what to check: hpa NAME or -f FILE");
    if (words.size() > 2) throw app::FlagError("one HPA name at a time");
    if (words.size() == 2) options.hpa_name = words[1];
  } else if (!words.empty()) {
    throw app::FlagError("-f reads the HPAs from the file: no hpa NAME with it");
  }
  if (options.all_namespaces && !options.hpa_name.empty()) {
    throw app::FlagError("--all-namespaces checks every HPA: no NAME with it");
  }
  return options;
}

namespace {

// The rules file and flags the check runs with: --config, or the adapter Deployment's
// ConfigMap (written to a file of our own for the loader) and its --prometheus-url.
struct DoctorRules {
  std::string config_file;
  std::string from_cluster;  // the ConfigMap, when read from the cluster
};

DoctorRules adapterRules(std::span<const std::string> args, kube::KubeApi& kube_api,
                         DoctorOptions& options) {
  if (!options.config_file.empty()) return {options.config_file, ""};
  const auto slash = options.adapter.find('/');
  const AdapterDeploymentConfig found = readAdapterDeploymentConfig(
      kube_api, options.adapter.substr(0, slash), options.adapter.substr(slash + 1));
  if (!options.prometheus_url_given) {
    if (!found.prometheus_url) {
      throw std::runtime_error("deployment " + options.adapter +
                               " has no --prometheus-url: give one");
    }
    // Read again with the Deployment's URL, by the one parser of the flags.
    std::vector<std::string> words(args.begin(), args.end());
    words.push_back("--prometheus-url=" + *found.prometheus_url);
    options = parseDoctorFlags(words);
  }
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("metrics-adapter-doctor-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << found.config_text;
  return {file.string(), found.source};
}

}  // namespace

std::string doctorUsage() { return kDoctorUsage + app::toolFlagsUsage(doctorFlags(nullptr)); }

int runDoctor(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (std::find_if(args.begin(), args.end(), [](const std::string& word) {
        return word == "--help" || word == "-h";
      }) != args.end()) {
    out << doctorUsage();
    return 0;
  }
  DoctorOptions options;
  try {
    options = parseDoctorFlags(args);
  } catch (const app::FlagError& e) {
    err << "doctor: " << e.what() << "\n" << doctorUsage();
    return kDoctorCannotRun;
  }
  std::shared_ptr<kube::KubeApi> kube_api;
  DoctorRules rules;
  try {
    kube_api = doctorKubeClient(options);
    rules = adapterRules(args, *kube_api, options);
  } catch (const std::exception& e) {
    err << "doctor: " << e.what() << "\n";
    return kDoctorCannotRun;
  }
  const std::optional<OfflineRules> loaded = loadOffline(rules.config_file, err);
  if (!rules.from_cluster.empty()) std::filesystem::remove(rules.config_file);
  if (!loaded) return kDoctorCannotRun;
  if (!rules.from_cluster.empty())
    err << "doctor: the adapter's rules from " << rules.from_cluster << "\n";
  std::vector<HpaDiagnosis> diagnoses;
  try {
    auto backends = app::toolBackends(loaded->config, options.shared.prometheus);
    std::vector<kube::ResourceInfo> resources;
    try {
      resources = kube::discoverResources(*kube_api, std::chrono::seconds(10));
    } catch (const std::exception& e) {
      err << "doctor: API discovery failed, using the built-in REST mapping: " << e.what() << "\n";
      resources = kube::RestMapper::builtin().resources();
    }
    DoctorCluster cluster(kube_api, kube::RestMapper(std::move(resources)));
    const std::vector<hpa::Hpa> hpas = selectHpas(options, cluster);
    // One relist, as the server's, answers for every HPA.
    const auto rule_set = withBackends(loaded->rule_set, backends);
    const DiscoveryRun run = relistOnce(rule_set, options.shared.relist);
    for (const auto& [key, error] : run.errors) {
      err << "doctor: seriesQuery " << key.second << " failed: " << error << "\n";
    }
    // Read only for a metric the first relist does not find: a metric whose series are gone.
    std::optional<DiscoveryRun> history;
    auto history_run = [&]() -> const DiscoveryRun* {
      if (!history) {
        discovery::RelistOptions longer = options.shared.relist;
        longer.max_age = std::max<std::chrono::milliseconds>(longer.max_age, kZeroLookback);
        history = relistOnce(rule_set, longer);
      }
      return &*history;
    };
    const DoctorContext context{.run = &run,
                                .forecast_rules = &loaded->config.forecast_rules,
                                .cluster = &cluster,
                                .query_timeout = options.shared.query_timeout,
                                .max_age = options.shared.relist.max_age,
                                .history = history_run};
    for (const auto& hpa : hpas) diagnoses.push_back(diagnoseHpa(hpa, context));
  } catch (const config::ConfigError& e) {
    err << "invalid configuration: " << e.what() << "\n";
    return kDoctorCannotRun;
  } catch (const std::exception& e) {
    err << "doctor: " << e.what() << "\n";
    return kDoctorCannotRun;
  }
  if (options.json_output) {
    out << doctorJson(diagnoses).dump(2) << "\n";
  } else {
    writeDoctorText(out, diagnoses);
  }
  const bool ok = !diagnoses.empty() && std::all_of(diagnoses.begin(), diagnoses.end(),
                                                    [](const auto& d) { return d.ok; });
  return ok ? 0 : kDoctorUnhealthy;
}

}  // namespace metrics_adapter::cli
