#include "metrics_adapter/resource/usage.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <variant>

#include "metrics_adapter/promql/quantity.h"

namespace metrics_adapter::resource {
namespace {

// A value as the log shows it: "NaN", "+Inf", "-Inf" or the shortest round-trip decimal.
std::string valueText(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (error != std::errc()) return "?";
  return std::string(buffer, end);
}

std::string labelOf(const prometheus::Sample& sample, const std::string& label) {
  const auto found = sample.labels.find(label);
  return found == sample.labels.end() ? std::string() : found->second;
}

// One resource's value for a container or node: absent, a usable amount, or a bad sample
// (the text of the value, for the log).
struct BadValue {
  std::string text;
};
using Slot = std::variant<std::monostate, std::int64_t, BadValue>;

Slot slotFor(double value, bool is_cpu) {
  const auto amount = is_cpu ? cpuNanocores(value) : memoryBytes(value);
  if (amount) return *amount;
  return BadValue{valueText(value)};
}

const char* resourceName(bool is_cpu) { return is_cpu ? "CPU" : "memory"; }

struct PodSamples {
  bool has_cpu = false;
  bool has_memory = false;
  double earliest = 0;
  std::map<std::string, std::pair<Slot, Slot>> containers;  // name -> (CPU, memory)
};

std::vector<std::string> sortedUnique(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace

std::optional<std::int64_t> cpuNanocores(double cores) {
  if (!(cores >= 0)) return std::nullopt;  // also NaN
  return promql::truncateToInt64(cores * 1e9);
}

std::optional<std::int64_t> memoryBytes(double bytes) {
  if (!(bytes >= 0)) return std::nullopt;
  return promql::truncateToInt64(bytes);
}

DecodedPods decodePodUsage(const discovery::CompiledResourceRules& rules,
                           std::string_view namespace_name,
                           const std::vector<std::string>& pod_names,
                           const prometheus::QueryResult& cpu,
                           const prometheus::QueryResult& memory) {
  std::map<std::string, PodSamples, std::less<>> by_pod;
  for (const std::string& name : sortedUnique(pod_names)) by_pod.emplace(name, PodSamples{});

  const auto collect = [&by_pod](const discovery::CompiledResourceRule& rule,
                                 const prometheus::QueryResult& result, bool is_cpu) {
    for (const prometheus::Sample& sample : result.samples) {
      const auto pod = by_pod.find(labelOf(sample, rule.pod_label));
      if (pod == by_pod.end()) continue;
      PodSamples& samples = pod->second;
      const bool first = !samples.has_cpu && !samples.has_memory;
      if (first || sample.timestamp < samples.earliest) samples.earliest = sample.timestamp;
      (is_cpu ? samples.has_cpu : samples.has_memory) = true;
      auto& slots = samples.containers[labelOf(sample, rule.source.container_label)];
      (is_cpu ? slots.first : slots.second) = slotFor(sample.value, is_cpu);  // last wins
    }
  };
  collect(rules.cpu, cpu, true);
  collect(rules.memory, memory, false);

  DecodedPods decoded;
  for (auto& [name, samples] : by_pod) {
    const auto omit = [&, &name = name](Omission::Reason reason, std::string detail) {
      decoded.omitted.push_back(
          Omission{std::string(namespace_name), name, reason, std::move(detail)});
    };
    if (!samples.has_cpu || !samples.has_memory) {
      omit(Omission::Reason::kNoData,
           std::string("no ") + resourceName(!samples.has_cpu) + " samples");
      continue;
    }
    PodUsage usage{std::string(namespace_name), name, samples.earliest, {}};
    std::string bad;
    for (const auto& [container, slots] : samples.containers) {
      ContainerUsage& out = usage.containers.emplace_back(ContainerUsage{container, 0, 0});
      for (const bool is_cpu : {true, false}) {
        const Slot& slot = is_cpu ? slots.first : slots.second;
        if (const auto* amount = std::get_if<std::int64_t>(&slot)) {
          (is_cpu ? out.cpu_nanocores : out.memory_bytes) = *amount;
        } else if (const auto* value = std::get_if<BadValue>(&slot); value && bad.empty()) {
          bad = std::string(resourceName(is_cpu)) + " of container \"" + container + "\" is " +
                value->text;
        }
      }
    }
    if (!bad.empty()) {
      omit(Omission::Reason::kBadValue, std::move(bad));
      continue;
    }
    decoded.pods.push_back(std::move(usage));
  }
  return decoded;
}

DecodedNodes decodeNodeUsage(const discovery::CompiledResourceRules& rules,
                             const std::vector<std::string>& node_names,
                             const prometheus::QueryResult& cpu,
                             const prometheus::QueryResult& memory) {
  struct NodeSamples {
    Slot cpu, memory;
    double cpu_time = 0, memory_time = 0;
  };
  std::map<std::string, NodeSamples, std::less<>> by_node;
  for (const std::string& name : sortedUnique(node_names)) by_node.emplace(name, NodeSamples{});

  const auto collect = [&by_node](const discovery::CompiledResourceRule& rule,
                                  const prometheus::QueryResult& result, bool is_cpu) {
    for (const prometheus::Sample& sample : result.samples) {
      const auto node = by_node.find(labelOf(sample, rule.node_label));
      if (node == by_node.end()) continue;
      Slot& slot = is_cpu ? node->second.cpu : node->second.memory;
      if (!std::holds_alternative<std::monostate>(slot)) continue;  // the first wins
      slot = slotFor(sample.value, is_cpu);
      (is_cpu ? node->second.cpu_time : node->second.memory_time) = sample.timestamp;
    }
  };
  collect(rules.cpu, cpu, true);
  collect(rules.memory, memory, false);

  DecodedNodes decoded;
  for (const auto& [name, samples] : by_node) {
    NodeUsage usage{name, std::min(samples.cpu_time, samples.memory_time), 0, 0};
    Omission omission{"", name, Omission::Reason::kNoData, ""};
    for (const bool is_cpu : {true, false}) {
      const Slot& slot = is_cpu ? samples.cpu : samples.memory;
      if (const auto* amount = std::get_if<std::int64_t>(&slot)) {
        (is_cpu ? usage.cpu_nanocores : usage.memory_bytes) = *amount;
      } else if (!omission.detail.empty()) {
        continue;  // the first problem is the one reported
      } else if (const auto* value = std::get_if<BadValue>(&slot)) {
        omission.reason = Omission::Reason::kBadValue;
        omission.detail = std::string(resourceName(is_cpu)) + " is " + value->text;
      } else {
        omission.detail = std::string("no ") + resourceName(is_cpu) + " samples";
      }
    }
    if (omission.detail.empty()) {
      decoded.nodes.push_back(std::move(usage));
    } else {
      decoded.omitted.push_back(std::move(omission));
    }
  }
  return decoded;
}

}  // namespace metrics_adapter::resource
