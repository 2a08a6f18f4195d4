#pragma once

#include <iosfwd>
#include <span>
#include <string>

#include "metrics_adapter/app/flags.h"

namespace metrics_adapter::cli {

// The words of `metrics-adapter doctor` (also `kubectl metrics-adapter doctor`, the same words).
struct DoctorOptions {
  std::string hpa_name;         // `doctor hpa NAME`; "" = every HPA in scope
  std::string namespace_name;   // -n; "" = default
  bool all_namespaces = false;  // -A
  std::string file;             // -f: HPAs from a YAML/JSON file instead of the cluster's
  bool json_output = false;     // -o json
  std::string kubeconfig;       // --kubeconfig; else $KUBECONFIG, ~/.kube/config, in-cluster
  std::string config_file;      // --config: the adapter's rules; "" = read them from `adapter`
  // --adapter NS/NAME: the adapter's Deployment, whose ConfigMap holds the rules (and whose
  // --prometheus-url is used unless one is given) when --config is not given.
  std::string adapter = "custom-metrics/metrics-adapter";
  bool prometheus_url_given = false;
  app::AdapterOptions shared;  // the server's Prometheus flags and --metrics-max-age
};

// Throws FlagError for unknown flags and missing or conflicting words.
DoctorOptions parseDoctorFlags(std::span<const std::string> args);

// `metrics-adapter doctor ...`; `args` are the words after "doctor". Returns 0 when every metric
// of every HPA checked has a value and nothing stands between the HPA and the adapter, 1 when
// one does not, 2 when the check could not run (flags, config, the Kubernetes API).
int runDoctor(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// doctor's usage and flags, for --help and for an error.
std::string doctorUsage();

}  // namespace metrics_adapter::cli
