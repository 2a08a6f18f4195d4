#include "metrics_adapter/api/aggregated_discovery.h"

#include <charconv>
#include <map>
#include <string>
#include <utility>

namespace metrics_adapter::api {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// One range of an Accept header, as views into it: only what negotiation reads.
struct MediaRange {
  std::string_view type;     // "application/json", "*/*", ...
  std::string_view group;    // g=
  std::string_view version;  // v=
  std::string_view kind;     // as=
  double q = 1.0;
};

MediaRange parseRange(std::string_view clause) {
  MediaRange range;
  std::size_t semicolon = clause.find(';');
  range.type = trim(clause.substr(0, semicolon));
  while (semicolon != std::string_view::npos) {
    const std::size_t next = clause.find(';', semicolon + 1);
    const std::string_view parameter = clause.substr(semicolon + 1, next - semicolon - 1);
    semicolon = next;
    const std::size_t equals = parameter.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view key = trim(parameter.substr(0, equals));
    std::string_view value = trim(parameter.substr(equals + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (key == "q") {
      double q = 1.0;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), q);
      range.q = error == std::errc() ? q : 0.0;
    } else if (key == "g") {
      range.group = value;
    } else if (key == "v") {
      range.version = value;
    } else if (key == "as") {
      range.kind = value;
    }
  }
  return range;
}

bool isJson(std::string_view type) {
  return type == "application/json" || type == "application/*" || type == "*/*";
}

std::optional<DiscoveryFormat> formatOf(const MediaRange& range) {
  if (!isJson(range.type) || range.q <= 0) return std::nullopt;
  if (range.group.empty() && range.version.empty() && range.kind.empty()) {
    return DiscoveryFormat::kLegacy;
  }
  if (range.group != "apidiscovery.k8s.io" || range.kind != "APIGroupDiscoveryList") {
    return std::nullopt;
  }
  if (range.version == "v2") return DiscoveryFormat::kAggregatedV2;
  if (range.version == "v2beta1") return DiscoveryFormat::kAggregatedV2Beta1;
  return std::nullopt;
}

// An APIResource of a legacy list as the aggregated document writes its kind.
Json responseKind(const Json& resource) {
  return {{"group", resource.value("group", "")},
          {"version", resource.value("version", "")},
          {"kind", resource.value("kind", "")}};
}

const char* scopeOf(const Json& resource) {
  return resource.value("namespaced", false) ? "Namespaced" : "Cluster";
}

Json convertResources(const Json& resources) {
  Json converted = Json::array();
  std::map<std::string, std::size_t, std::less<>> parents;
  for (const auto& resource : resources) {
    const std::string name = resource.value("name", "");
    if (name.find('/') != std::string::npos) continue;
    converted.push_back({{"resource", name},
                         {"responseKind", responseKind(resource)},
                         {"scope", scopeOf(resource)},
                         {"singularResource", resource.value("singularName", "")},
                         {"verbs", resource.value("verbs", Json::array())}});
    parents[name] = converted.size() - 1;
  }
  for (const auto& resource : resources) {
    const std::string name = resource.value("name", "");
    const std::size_t slash = name.find('/');
    if (slash == std::string::npos) continue;
    const std::string parent = name.substr(0, slash);
    auto it = parents.find(parent);
    if (it == parents.end()) {
      converted.push_back({{"resource", parent},
                           {"responseKind", {{"group", ""}, {"version", ""}, {"kind", ""}}},
                           {"scope", scopeOf(resource)},
                           {"singularResource", ""},
                           {"verbs", Json::array()}});
      it = parents.emplace(parent, converted.size() - 1).first;
    }
    Json& entry = converted[it->second];
    if (entry["scope"] != scopeOf(resource)) continue;
    entry["subresources"].push_back({{"subresource", name.substr(slash + 1)},
                                     {"responseKind", responseKind(resource)},
                                     {"verbs", resource.value("verbs", Json::array())}});
  }
  return converted;
}

}  // namespace

std::optional<DiscoveryFormat> negotiateDiscovery(std::string_view accept) {
  if (trim(accept).empty()) return DiscoveryFormat::kLegacy;
  // The servable range of the highest q, the first written among equals: what sorting the
  // ranges by q (stably) and taking the first servable one gives, without allocating (kubectl
  // asks for /apis on every command; it is answered on the I/O thread).
  std::optional<DiscoveryFormat> best;
  double best_q = 0;
  std::size_t begin = 0;
  while (begin <= accept.size()) {
    std::size_t end = accept.find(',', begin);
    if (end == std::string_view::npos) end = accept.size();
    const std::string_view clause = trim(accept.substr(begin, end - begin));
    begin = end + 1;
    if (clause.empty()) continue;
    const MediaRange range = parseRange(clause);
    if (range.q <= best_q) continue;
    if (auto format = formatOf(range)) {
      best = format;
      best_q = range.q;
    }
  }
  return best;
}

std::string_view aggregatedContentType(DiscoveryFormat format) {
  return format == DiscoveryFormat::kAggregatedV2Beta1
             ? "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
             : "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
}

Json aggregatedDiscovery(const Json& legacy, DiscoveryFormat format) {
  Json items = Json::array();
  for (const auto& group : legacy) {
    Json versions = Json::array();
    for (const auto& list : group.at("versions")) {
      const std::string group_version = list.value("groupVersion", "");
      Json version = {{"version", group_version.substr(group_version.find('/') + 1)}};
      Json resources = convertResources(list.at("resources"));
      // omitempty upstream: a version with nothing discovered yet has no "resources".
      if (!resources.empty()) version["resources"] = std::move(resources);
      version["freshness"] = "Current";
      versions.push_back(std::move(version));
    }
    items.push_back({{"metadata", {{"name", group.at("name")}, {"creationTimestamp", nullptr}}},
                     {"versions", std::move(versions)}});
  }
  return {
      {"kind", "APIGroupDiscoveryList"},
      {"apiVersion", format == DiscoveryFormat::kAggregatedV2Beta1 ? "apidiscovery.k8s.io/v2beta1"
                                                                   : "apidiscovery.k8s.io/v2"},
      {"metadata", Json::object()},
      {"items", std::move(items)}};
}

}  // namespace metrics_adapter::api
