#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::resource {

// Usage in metrics-server's units: CPU in nanocores (promql::formatNanoQuantity writes it),
// memory in bytes (promql::formatByteQuantity).
struct ContainerUsage {
  std::string name;
  std::int64_t cpu_nanocores = 0;
  std::int64_t memory_bytes = 0;

  bool operator==(const ContainerUsage&) const = default;
};

struct PodUsage {
  std::string namespace_name;
  std::string name;
  double timestamp = 0;  // seconds since the epoch: the earliest sample time of the pod
  std::vector<ContainerUsage> containers;  // sorted by name
};

struct NodeUsage {
  std::string name;
  double timestamp = 0;  // seconds since the epoch: the earlier of the CPU and memory samples
  std::int64_t cpu_nanocores = 0;
  std::int64_t memory_bytes = 0;
};

// An object asked for but left out of the answer, and why.
struct Omission {
  enum class Reason {
    kNoData,    // its CPU or memory query returned no sample for it
    kBadValue,  // a sample it would use is NaN, infinite, negative or beyond int64
  };
  std::string namespace_name;  // "" for nodes
  std::string name;
  Reason reason = Reason::kNoData;
  std::string detail;  // for the log: `memory of container "app" is NaN`, `no CPU samples`
};

struct DecodedPods {
  std::vector<PodUsage> pods;  // sorted by name
  std::vector<Omission> omitted;
};

struct DecodedNodes {
  std::vector<NodeUsage> nodes;  // sorted by name
  std::vector<Omission> omitted;
};

// Cores -> nanocores, truncated toward zero as metrics-server's uint64 conversion does;
// nullopt for NaN, ±Inf, negative values and more than int64 nanocores.
std::optional<std::int64_t> cpuNanocores(double cores);

// Bytes truncated toward zero; nullopt for NaN, ±Inf, negative values and 2^63 or more (which
// also covers DCGM's int64 "blank" sentinels).
std::optional<std::int64_t> memoryBytes(double bytes);

// The usage of `pod_names` in `namespace_name` from the answers to that namespace's CPU and
// memory container queries. Samples are attributed by the rule's pod label and split by its
// containerLabel (a sample without one is the container ""); samples of pods not asked for are
// ignored. As prometheus-adapter: a pod is omitted when either query returned nothing for it;
// a container with only one of the two gets 0 for the other; for duplicate samples of the same
// container the last wins; the timestamp is the earliest of all the pod's samples. Unlike it
// (docs/migrating-from-prometheus-adapter.md): a NaN, infinite, negative or too large value is
// never served as 0; it makes the pod omitted with Reason::kBadValue. Pure; thread-safe.
DecodedPods decodePodUsage(const discovery::CompiledResourceRules& rules,
                           std::string_view namespace_name,
                           const std::vector<std::string>& pod_names,
                           const prometheus::QueryResult& cpu,
                           const prometheus::QueryResult& memory);

// The usage of `node_names` from the answers to the CPU and memory node queries, attributed by
// the rule's node label. As prometheus-adapter: the first sample of a node wins, a node is
// omitted when either value is missing, the timestamp is the earlier of the two samples'.
// A bad value (as for pods) omits the node with Reason::kBadValue. Pure; thread-safe.
DecodedNodes decodeNodeUsage(const discovery::CompiledResourceRules& rules,
                             const std::vector<std::string>& node_names,
                             const prometheus::QueryResult& cpu,
                             const prometheus::QueryResult& memory);

}  // namespace metrics_adapter::resource
