// The aggregated discovery document (GET /apis as the kube-aggregator asks for it) at 10,000 and
// 100,000 discovered custom metrics, without the network: its size beside the legacy
// per-version lists, the time to build it for a new registry snapshot (the first request after
// a relist; later ones are answered from the cache), and the memory the cached document keeps
// (RSS before and after, malloc_trim'd). Each metric is served for pods and namespaces, as a
// GPU rule with namespace and pod labels is. Medians over --runs new snapshots
// (docs/performance.md "Aggregated discovery and OpenAPI").
//   aggregated_discovery_bench [--metrics 10000,100000] [--runs 5]

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "metrics_adapter/api/openapi_documents.h"
#include "metrics_adapter/api/router.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/server/request_info.h"
#include "process_stats.h"
#include "unit/fake_prometheus.h"

namespace {

using namespace metrics_adapter;  // NOLINT(google-build-using-namespace): a bench's main file

constexpr const char* kRules = R"(
rules:
- seriesQuery: '{__name__=~"^gpu_.*"}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
)";

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

server::HttpResponse get(const api::Router& router, const std::string& target,
                         const std::string& accept) {
  server::HttpRequest request;
  request.method = "GET";
  request.target = target;
  request.headers.emplace_back("Accept", accept);
  return router.route(request, server::parseRequestInfo(request.method, request.target));
}

void measure(std::size_t metrics, int runs) {
  auto prometheus = std::make_shared<testing::FakePrometheus>();
  auto& series = prometheus->series_by_selector["{__name__=~\"^gpu_.*\"}"];
  for (std::size_t i = 0; i < metrics; ++i) {
    series.push_back({"gpu_metric_" + std::to_string(i), {"namespace", "pod"}});
  }
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  rule_set->backends = prometheus::BackendSet::single(prometheus);
  std::vector<std::string> warnings;
  rule_set->rules = discovery::compileRules(config::parseConfig(kRules, "bench.yaml"),
                                            *rule_set->mapper, &warnings);
  auto relister = std::make_shared<discovery::Relister>(rule_set, discovery::RelistOptions{});
  api::Router router(api::RouterParts{.snapshots = [relister] { return relister->snapshot(); }});
  const std::string aggregated =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

  std::vector<double> build_ms, cached_us, legacy_ms;
  std::size_t aggregated_bytes = 0, legacy_bytes = 0;
  long rss_added = 0;
  for (int run = 0; run < runs; ++run) {
    relister->relistOnce();  // a new snapshot: nothing cached for it
    // The legacy documents first, as they are in the cache in a running adapter.
    auto start = std::chrono::steady_clock::now();
    legacy_bytes =
        get(router, "/apis/custom.metrics.k8s.io/v1beta1", "application/json").bodyText().size() +
        get(router, "/apis/custom.metrics.k8s.io/v1beta2", "application/json").bodyText().size();
    legacy_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    malloc_trim(0);
    const long before = bench::rssKib();
    start = std::chrono::steady_clock::now();
    const auto first = get(router, "/apis", aggregated);
    build_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    malloc_trim(0);
    rss_added = bench::rssKib() - before;
    aggregated_bytes = first.bodyText().size();
    start = std::chrono::steady_clock::now();
    const auto again = get(router, "/apis", aggregated);
    cached_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
    if (again.shared_body != first.shared_body) std::cerr << "not answered from the cache\n";
  }
  std::printf("| %zu | %.1f MiB | %.1f MiB | %.0f ms | %.0f ms | %.1f us | %ld MiB |\n", metrics,
              static_cast<double>(aggregated_bytes) / (1 << 20),
              static_cast<double>(legacy_bytes) / (1 << 20), median(build_ms), median(legacy_ms),
              median(cached_us), rss_added / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {10000, 100000};
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--runs") {
      runs = std::stoi(argv[i + 1]);
    } else if (flag == "--metrics") {
      sizes.clear();
      std::stringstream list(argv[i + 1]);
      std::string item;
      while (std::getline(list, item, ',')) sizes.push_back(std::stoul(item));
    } else {
      std::cerr << "usage: aggregated_discovery_bench [--metrics N,M] [--runs R]\n";
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const api::OpenApiDocuments openapi = api::buildOpenApiDocuments(true, "bench");
  std::printf(
      "OpenAPI documents (whatever the number of metrics): v2 %zu bytes, v3 index %zu "
      "bytes, %zu v3 documents, built in %.1f ms\n\n",
      openapi.v2.size(), openapi.v3_index.size(), openapi.v3.size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  std::printf(
      "| metrics | aggregated /apis | legacy v1beta1 + v1beta2 | aggregated build (new "
      "snapshot) | legacy build | aggregated, cached | RSS the cached document adds |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const std::size_t metrics : sizes) measure(metrics, runs);
  return 0;
}
