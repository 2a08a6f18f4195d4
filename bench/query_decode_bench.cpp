// The adapter's own CPU for an HPA's pods/* request over N pods, without the network:
// - decoding Prometheus's /api/v1/query answer (parseQueryResponse on an instant vector of N
//   samples held in memory), with labels as the rules' `by (<<.GroupBy>>)` queries return them
//   (namespace, pod) and with every dcgm-exporter label (synthetic_series.h);
// - answering the request once the samples are decoded: CustomMetricsHandler with
//   config/gpu-dcgm-exporter.yaml, a lister naming N pods and a Prometheus that hands over N
//   samples, up to the MetricValueList's JSON text.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/prometheus/prometheus_client.h"
#include "synthetic_series.h"
#include "unit/fake_prometheus.h"

namespace {

namespace api = metrics_adapter::api;
namespace discovery = metrics_adapter::discovery;
namespace prometheus = metrics_adapter::prometheus;

using prometheus::parseQueryResponse;

void appendValue(std::string& body, std::size_t index) {
  body += R"(,"value":[1763778400.123,")";
  body += std::to_string(40 + index % 6000 / 100.0);
  body += R"("]})";
}

std::string groupedAnswer(std::size_t pods) {
  std::string body = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (std::size_t i = 0; i < pods; ++i) {
    if (i > 0) body += ',';
    body += R"({"metric":{"namespace":"bench","pod":"bench-pod-)" + std::to_string(i) + R"("})";
    appendValue(body, i);
  }
  return body + "]}}";
}

std::string fullLabelAnswer(std::size_t pods) {
  std::string body = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (std::size_t i = 0; i < pods; ++i) {
    if (i > 0) body += ',';
    body += R"({"metric":)";
    bench::appendSeries(body, i * bench::kMaxMetrics, bench::SeriesShape{});
    appendValue(body, i);
  }
  return body + "]}}";
}

void decode(benchmark::State& state, const std::string& body) {
  for (auto _ : state) {
    auto result = parseQueryResponse(body);
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body.size()));
}

void decodeGrouped(benchmark::State& state) {
  decode(state, groupedAnswer(static_cast<std::size_t>(state.range(0))));
}

void decodeFullLabels(benchmark::State& state) {
  decode(state, fullLabelAnswer(static_cast<std::size_t>(state.range(0))));
}

class ListedPods : public metrics_adapter::kube::ObjectLister {
 public:
  std::vector<std::string> names;
  std::vector<std::string> listNames(const metrics_adapter::kube::ResourceInfo&, const std::string&,
                                     const metrics_adapter::promql::LabelSelector&) override {
    return names;
  }
  std::vector<metrics_adapter::kube::ObjectMeta> listObjects(
      const metrics_adapter::kube::ResourceInfo&, const std::string&,
      const metrics_adapter::promql::LabelSelector&, const std::string& = "") override {
    std::vector<metrics_adapter::kube::ObjectMeta> objects;
    for (const auto& name : names) {
      metrics_adapter::kube::ObjectMeta object;
      object.name = name;
      objects.push_back(std::move(object));
    }
    return objects;
  }
};

// One answer's body, in a function of its own so that callgrind can count it
// (--toggle-collect='*answerOnce*'; the fake's query(), a copy of the samples, is inside).
[[gnu::noinline]] std::string answerOnce(const api::CustomMetricsHandler& handler,
                                         const api::CustomMetricRequest& request) {
  return handler.render(request);
}

void answerPodsRequest(benchmark::State& state) {
  const auto pods = static_cast<std::size_t>(state.range(0));
  auto fake = std::make_shared<metrics_adapter::testing::FakePrometheus>();
  fake->series_by_selector[R"({__name__=~"^DCGM_FI_.*",namespace!="",pod!=""})"] = {
      {"DCGM_FI_DEV_GPU_UTIL", {"Hostname", "namespace", "pod", "service"}}};
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::make_shared<const metrics_adapter::kube::RestMapper>(
      metrics_adapter::kube::RestMapper::builtin());
  std::vector<std::string> warnings;
  rule_set->rules = discovery::compileRules(
      metrics_adapter::config::loadConfigFile(MA_SOURCE_DIR "/config/gpu-dcgm-exporter.yaml"),
      *rule_set->mapper, &warnings);
  rule_set->backends = prometheus::BackendSet::single(fake);
  auto relister = std::make_shared<discovery::Relister>(rule_set, discovery::RelistOptions{});
  relister->relistOnce();

  auto lister = std::make_shared<ListedPods>();
  prometheus::QueryResult answer;
  for (std::size_t i = 0; i < pods; ++i) {
    const std::string pod = "bench-pod-" + std::to_string(i);
    lister->names.push_back(pod);
    answer.samples.push_back(prometheus::Sample{
        {{"namespace", "bench"}, {"pod", pod}}, 40 + i % 6000 / 100.0, 1763778400.123});
  }
  fake->answer = [&answer](const std::string&) { return answer; };
  api::CustomMetricsHandler handler([relister] { return relister->snapshot(); }, lister,
                                    api::CustomMetricsOptions{});
  api::CustomMetricRequest request;
  request.version = "v1beta1";
  request.resource = "pods";
  request.namespace_name = "bench";
  request.name = "*";
  request.metric = "DCGM_FI_DEV_GPU_UTIL";
  request.label_selector = "app=bench";

  for (auto _ : state) {
    std::string body = answerOnce(handler, request);
    benchmark::DoNotOptimize(body);
    fake->queries.clear();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(decodeGrouped)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(decodeFullLabels)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(answerPodsRequest)->Arg(100)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
