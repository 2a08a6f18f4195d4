// The adapter's own CPU for GET /apis/metrics.k8s.io/v1beta1/pods, without the network: the
// server's ResourceMetricsHandler with config/resource-rules.yaml, a lister holding P Running
// pods in N namespaces and a Prometheus that hands over decoded samples (one container a pod),
// timed in three stages, each in a function of its own:
//   list    the lister's copy of the pods the request covers (as the cached lister copies them)
//   usage   ResourceMetrics::podMetrics (2 x N queries to the fake, decoding samples into usage)
//   render  ResourceMetricsHandler::render, what the router sends (listing, usage, the
//           PodMetricsList written as JSON text)
// Prints the median and p99 of each over --iterations, for the list over every namespace and
// for the HPA's request of one namespace, and the peak RSS growth of one usage step and of one
// whole answer (render), from VmHWM reset through /proc/self/clear_refs (Linux). No Google
// Benchmark: a plain loop is enough for milliseconds per call.
//
//   resource_render_bench [--namespaces 100] [--pods-per-namespace 100] [--iterations 50]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/api/resource_metrics_handler.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/resource/resource_metrics.h"
#include "unit/fake_prometheus.h"

namespace {

namespace api = metrics_adapter::api;
namespace kube = metrics_adapter::kube;
namespace prometheus = metrics_adapter::prometheus;
namespace resource = metrics_adapter::resource;

struct Options {
  std::size_t namespaces = 100;
  std::size_t pods_per_namespace = 100;
  std::size_t iterations = 50;
};

std::string namespaceName(std::size_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "ns-%02zu", i);
  return name;
}

std::string podName(std::size_t ns, std::size_t pod) {
  char name[64];
  std::snprintf(name, sizeof name, "pod-%02zu-%03zu", ns, pod);
  return name;
}

// Every pod, sorted by namespace and name as the cached lister answers, labels as a
// Deployment's pods carry them.
class ClusterPods : public kube::ObjectLister {
 public:
  explicit ClusterPods(const Options& options) {
    for (std::size_t ns = 0; ns < options.namespaces; ++ns) {
      for (std::size_t pod = 0; pod < options.pods_per_namespace; ++pod) {
        pods_.push_back(kube::ObjectMeta{namespaceName(ns),
                                         podName(ns, pod),
                                         {{"app", "bench"}, {"pod-template-hash", "5d4f8c7b9"}},
                                         "2026-11-25T07:00:00Z"});
      }
    }
  }

  std::vector<std::string> listNames(
      const kube::ResourceInfo& resource, const std::string& namespace_name,
      const metrics_adapter::promql::LabelSelector& selector) override {
    std::vector<std::string> names;
    for (const auto& pod : listObjects(resource, namespace_name, selector))
      names.push_back(pod.name);
    return names;
  }

  // Copies, as the cached lister does from its snapshot. The bench's pods all match any
  // selector the bench sends (app=bench or none).
  std::vector<kube::ObjectMeta> listObjects(const kube::ResourceInfo&,
                                            const std::string& namespace_name,
                                            const metrics_adapter::promql::LabelSelector&,
                                            const std::string& = "") override {
    std::vector<kube::ObjectMeta> out;
    for (const auto& pod : pods_) {
      if (namespace_name.empty() || pod.namespace_name == namespace_name) out.push_back(pod);
    }
    return out;
  }

 private:
  std::vector<kube::ObjectMeta> pods_;
};

// The samples of each namespace's CPU and memory query, decoded ahead of time.
std::map<std::string, std::pair<prometheus::QueryResult, prometheus::QueryResult>, std::less<>>
namespaceAnswers(const Options& options) {
  std::map<std::string, std::pair<prometheus::QueryResult, prometheus::QueryResult>, std::less<>>
      answers;
  for (std::size_t ns = 0; ns < options.namespaces; ++ns) {
    auto& [cpu, memory] = answers[namespaceName(ns)];
    for (std::size_t pod = 0; pod < options.pods_per_namespace; ++pod) {
      const std::map<std::string, std::string> labels = {{"container", "app"},
                                                         {"pod", podName(ns, pod)}};
      cpu.samples.push_back({labels, 0.001 * static_cast<double>(1 + pod * 7 % 2000), 1.7e9});
      memory.samples.push_back({labels, static_cast<double>((1 + pod * 13 % 1024) << 20), 1.7e9});
    }
  }
  return answers;
}

double millisSince(std::chrono::steady_clock::time_point began) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began)
      .count();
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const auto index =
      static_cast<std::size_t>(p / 100.0 * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

// A kB field of /proc/self/status (VmRSS, VmHWM) in MiB; 0 when unreadable.
double statusMib(std::string_view field) {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (!status) return 0;
  char line[256];
  double mib = 0;
  while (std::fgets(line, sizeof line, status)) {
    const std::string_view text(line);
    if (text.starts_with(field) && text.size() > field.size() && text[field.size()] == ':') {
      mib = std::strtod(line + field.size() + 1, nullptr) / 1024.0;
      break;
    }
  }
  std::fclose(status);
  return mib;
}

// Peak RSS growth (MiB) while `work` runs: VmHWM, reset to VmRSS first, less VmRSS before.
double peakGrowthMib(const std::function<void()>& work) {
  if (std::FILE* clear = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", clear);
    std::fclose(clear);
  }
  const double before = statusMib("VmRSS");
  work();
  return statusMib("VmHWM") - before;
}

[[gnu::noinline]] std::vector<kube::ObjectMeta> listOnce(
    ClusterPods& lister, const api::ResourceMetricsRequest& request) {
  return lister.listObjects({}, request.namespace_name, {});
}

[[gnu::noinline]] resource::PodMetricsResult usageOnce(
    const resource::ResourceMetrics& metrics, const prometheus::Backend& backend,
    const metrics_adapter::discovery::CompiledResourceRules& rules,
    const std::vector<resource::PodRef>& refs) {
  return metrics.podMetrics(backend, rules, refs, prometheus::Clock::now());
}

[[gnu::noinline]] std::string renderOnce(
    const api::ResourceMetricsHandler& handler, const api::ResourceMetricsRequest& request,
    const metrics_adapter::discovery::CompiledResourceRules& rules,
    const prometheus::Backend& backend, const kube::RestMapper& mapper) {
  return handler.render(request, rules, backend, mapper) + '\n';
}

void run(const char* label, const api::ResourceMetricsRequest& request, const Options& options,
         const api::ResourceMetricsHandler& handler, const resource::ResourceMetrics& metrics,
         ClusterPods& lister, const std::shared_ptr<metrics_adapter::testing::FakePrometheus>& fake,
         const metrics_adapter::discovery::CompiledResourceRules& rules,
         const kube::RestMapper& mapper) {
  const prometheus::Backend backend = metrics_adapter::testing::asBackend(fake);
  std::vector<resource::PodRef> refs;
  for (const auto& pod : lister.listObjects({}, request.namespace_name, {}))
    refs.push_back({pod.namespace_name, pod.name});
  const double usage_peak = peakGrowthMib([&] { usageOnce(metrics, backend, rules, refs); });
  const double answer_peak =
      peakGrowthMib([&] { renderOnce(handler, request, rules, backend, mapper); });
  std::vector<double> list, usage, render;
  std::size_t items = 0, bytes = 0;
  for (std::size_t i = 0; i < options.iterations; ++i) {
    auto began = std::chrono::steady_clock::now();
    const auto listed = listOnce(lister, request);
    list.push_back(millisSince(began));
    began = std::chrono::steady_clock::now();
    const auto result = usageOnce(metrics, backend, rules, refs);
    usage.push_back(millisSince(began));
    began = std::chrono::steady_clock::now();
    const std::string text = renderOnce(handler, request, rules, backend, mapper);
    render.push_back(millisSince(began));
    items = result.pods.size();
    bytes = text.size();
    fake->queries.clear();
  }
  std::printf("%s: %zu pods with usage, %zu bytes of JSON, %zu iterations\n", label, items, bytes,
              options.iterations);
  std::printf("  peak RSS growth, first call: usage %.1f MiB, render %.1f MiB\n", usage_peak,
              answer_peak);
  const auto row = [](const char* stage, const std::vector<double>& values) {
    std::printf("  %-62s p50 %8.3f  p99 %8.3f ms\n", stage, percentile(values, 50),
                percentile(values, 99));
  };
  row("list   (copying the pods' metadata out of the lister)", list);
  row("usage  (podMetrics: 2 queries a namespace to a fake, decoding)", usage);
  row("render (list + usage + the PodMetricsList as JSON text)", render);
  std::printf("  %-62s p50 %8.3f ms\n", "render - list - usage (writing the JSON)",
              percentile(render, 50) - percentile(list, 50) - percentile(usage, 50));
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view name = argv[i];
    const auto value = static_cast<std::size_t>(std::strtoull(argv[i + 1], nullptr, 10));
    if (name == "--namespaces") {
      options.namespaces = std::max<std::size_t>(value, 1);
    } else if (name == "--pods-per-namespace") {
      options.pods_per_namespace = std::max<std::size_t>(value, 1);
    } else if (name == "--iterations") {
      options.iterations = std::max<std::size_t>(value, 1);
    } else {
      std::fprintf(stderr,
                   "usage: resource_render_bench [--namespaces N] [--pods-per-namespace P] "
                   "[--iterations I]\n");
      return 2;
    }
  }
  const kube::RestMapper mapper = kube::RestMapper::builtin();
  std::shared_ptr<const metrics_adapter::discovery::CompiledResourceRules> rules;
  metrics_adapter::discovery::compileRules(
      metrics_adapter::config::loadConfigFile(MA_SOURCE_DIR "/config/resource-rules.yaml"), mapper,
      nullptr, &rules);

  const auto answers = namespaceAnswers(options);
  auto fake = std::make_shared<metrics_adapter::testing::FakePrometheus>();
  fake->answer = [&answers](const std::string& promql) {
    // The namespace matcher comes first: namespace="ns-07",pod=~"...".
    const auto at = promql.find("namespace=\"") + 11;
    const auto found = answers.find(std::string_view(promql).substr(at, promql.find('"', at) - at));
    if (found == answers.end()) return prometheus::QueryResult{};
    const bool cpu = promql.find("container_cpu_") != std::string::npos;
    return cpu ? found->second.first : found->second.second;
  };
  auto lister = std::make_shared<ClusterPods>(options);
  auto metrics = std::make_shared<const resource::ResourceMetrics>(
      resource::ResourceMetricsOptions{}, nullptr);
  const api::ResourceMetricsHandler handler(lister, metrics);

  api::ResourceMetricsRequest every;
  run("GET /apis/metrics.k8s.io/v1beta1/pods", every, options, handler, *metrics, *lister, fake,
      *rules, mapper);
  api::ResourceMetricsRequest hpa;
  hpa.namespace_name = namespaceName(0);
  hpa.label_selector = "app=bench";
  run("GET /apis/metrics.k8s.io/v1beta1/namespaces/ns-00/pods?labelSelector=app=bench", hpa,
      options, handler, *metrics, *lister, fake, *rules, mapper);
  return 0;
}
