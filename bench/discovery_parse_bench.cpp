// The CPU a relist spends per series without the network: a /api/v1/series answer of N
// synthetic series (synthetic_series.h) read from memory by parseSeriesStream, alone and folded
// into the findings of config/gpu-dcgm-exporter.yaml's rules as the relister does; its
// SeriesScanner fed the answer in one piece; and, for comparison, nlohmann's SAX parser with a
// handler that does nothing (the floor of the parser SeriesScanner replaced).

#include <benchmark/benchmark.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "discovery/findings_builder.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "prometheus/series_scanner.h"
#include "prometheus/series_stream_parser.h"
#include "synthetic_series.h"

namespace {

using metrics_adapter::prometheus::parseSeriesStream;

std::string seriesAnswer(std::size_t series) {
  std::string body = R"({"status":"success","data":[)";
  for (std::size_t i = 0; i < series; ++i) {
    if (i > 0) body += ',';
    bench::appendSeries(body, i, bench::SeriesShape{});
  }
  return body + "]}";
}

void setCounters(benchmark::State& state, const std::string& body) {
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body.size()));
}

void parseOnly(benchmark::State& state) {
  const std::string body = seriesAnswer(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    std::istringstream in(body);
    std::size_t labels = 0;
    parseSeriesStream(in, [&](std::string_view, const std::vector<std::string_view>& names) {
      labels += names.size();
    });
    benchmark::DoNotOptimize(labels);
  }
  setCounters(state, body);
}

void scanFromMemory(benchmark::State& state) {
  const std::string body = seriesAnswer(static_cast<std::size_t>(state.range(0)));
  const std::function<void()> no_hook;
  for (auto _ : state) {
    std::size_t labels = 0;
    const metrics_adapter::prometheus::SeriesVisitor visitor =
        [&](std::string_view, const std::vector<std::string_view>& names) {
          labels += names.size();
        };
    metrics_adapter::prometheus::SeriesScanner scanner(visitor, no_hook);
    scanner.feed(body);
    benchmark::DoNotOptimize(scanner.finish());
    benchmark::DoNotOptimize(labels);
  }
  setCounters(state, body);
}

void parseAndFold(benchmark::State& state) {
  namespace discovery = metrics_adapter::discovery;
  const std::string body = seriesAnswer(static_cast<std::size_t>(state.range(0)));
  const auto config =
      metrics_adapter::config::loadConfigFile(MA_SOURCE_DIR "/config/gpu-dcgm-exporter.yaml");
  const auto mapper = metrics_adapter::kube::RestMapper::builtin();
  std::vector<std::string> warnings;
  const auto rules = discovery::compileRules(config, mapper, &warnings);
  for (auto _ : state) {
    std::vector<discovery::FindingsBuilder> builders;
    for (const auto& rule : rules) builders.emplace_back(*rule);
    std::istringstream in(body);
    parseSeriesStream(in, [&](std::string_view name, const std::vector<std::string_view>& names) {
      for (auto& builder : builders) builder.add(name, names);
    });
    for (auto& builder : builders) benchmark::DoNotOptimize(builder.finish());
  }
  setCounters(state, body);
}

// The floor under any parser built on nlohmann's SAX interface (parseSeriesStream was one until
// SeriesScanner): a handler that does nothing, fed from a std::istream or from memory.
struct NoOpSax : nlohmann::json_sax<nlohmann::json> {
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

void saxFromStream(benchmark::State& state) {
  const std::string body = seriesAnswer(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    std::istringstream in(body);
    NoOpSax sax;
    benchmark::DoNotOptimize(nlohmann::json::sax_parse(in, &sax));
  }
  setCounters(state, body);
}

void saxFromMemory(benchmark::State& state) {
  const std::string body = seriesAnswer(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    NoOpSax sax;
    benchmark::DoNotOptimize(nlohmann::json::sax_parse(body.begin(), body.end(), &sax));
  }
  setCounters(state, body);
}

BENCHMARK(saxFromStream)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(saxFromMemory)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(parseOnly)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(scanFromMemory)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(parseAndFold)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
