#pragma once

// The synthetic dcgm-exporter GPU series the benchmarks discover: series i is metric
// kMetricNames[i % metrics] of GPU i / metrics; GPUs sit eight to a node and each serves one
// pod: the first `pods` GPUs serve pods bench-pod-<k> in namespace "bench", the others pods in
// 200 other namespaces. About 330 bytes of JSON per series.

#include <cstddef>
#include <cstdio>
#include <iterator>
#include <string>

namespace bench {

constexpr const char* kMetricNames[] = {
    "DCGM_FI_DEV_GPU_UTIL",          "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_FB_USED",           "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_GPU_TEMP",          "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",       "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_MEM_CLOCK",         "DCGM_FI_DEV_ENC_UTIL",
    "DCGM_FI_DEV_DEC_UTIL",          "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
};
constexpr std::size_t kMaxMetrics = std::size(kMetricNames);

struct SeriesShape {
  std::size_t metrics = kMaxMetrics;  // distinct series names
  std::size_t pods = 100;             // bench-pod-0 .. in namespace "bench"
};

// Appends series `index` as a /api/v1/series JSON object.
inline void appendSeries(std::string& out, std::size_t index, const SeriesShape& shape) {
  const std::size_t gpu = index / shape.metrics;
  const std::size_t node = gpu / 8;
  out += R"({"__name__":")";
  out += kMetricNames[index % shape.metrics];
  out += R"(","Hostname":"gpu-node-)";
  out += std::to_string(node);
  out += R"(","UUID":"GPU-)";
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "%08zx-5d2c-4b1e-9f3a-%012zx", gpu * 2654435761u % 0xffffffffu,
                gpu);
  out += uuid;
  out += R"(","container":"main","device":"nvidia)";
  out += std::to_string(gpu % 8);
  out += R"(","gpu":")";
  out += std::to_string(gpu % 8);
  out += R"(","instance":"10.)";
  out += std::to_string(node / 65536 % 256) + "." + std::to_string(node / 256 % 256) + "." +
         std::to_string(node % 256);
  out += R"(:9400","job":"dcgm-exporter","modelName":"NVIDIA A100-SXM4-80GB","namespace":")";
  if (gpu < shape.pods) {
    out += R"(bench","pod":"bench-pod-)";
  } else {
    out += "ns-" + std::to_string(gpu % 200) + R"(","pod":"gpu-job-)";
  }
  out += std::to_string(gpu);
  out += R"(","service":"dcgm-exporter"})";
}

}  // namespace bench
