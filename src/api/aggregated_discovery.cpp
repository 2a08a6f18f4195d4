#include "metrics_adapter/api/aggregated_discovery.h"

#include <charconv>
#include <string>
#include <unordered_map>
#include <utility>

#include "metrics_adapter/server/status.h"

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

void appendVerbs(std::string& out, const std::vector<std::string_view>& verbs) {
  out += R"("verbs":[)";
  for (std::size_t i = 0; i < verbs.size(); ++i) {
    if (i > 0) out += ',';
    server::appendJsonQuoted(out, verbs[i]);
  }
  out += ']';
}

void appendResponseKind(std::string& out, std::string_view kind) {
  // Our resources name no group or version of their kind (as upstream's lists): empty strings.
  out += R"("responseKind":{"group":"","version":"","kind":)";
  server::appendJsonQuoted(out, kind);
  out += '}';
}

const char* scopeOf(bool namespaced) { return namespaced ? "Namespaced" : "Cluster"; }

// A top-level resource and the subresources attached to it.
struct Converted {
  std::string_view name;
  const ApiResource* self = nullptr;  // null for a parent made for its subresources
  bool namespaced = true;
  std::vector<std::pair<std::string_view, const ApiResource*>> subresources;
};

std::vector<Converted> convert(const std::vector<ApiResource>& resources) {
  std::vector<Converted> converted;
  std::unordered_map<std::string_view, std::size_t> parents;
  for (const auto& resource : resources) {
    if (resource.name.find('/') != std::string::npos) continue;
    converted.push_back({resource.name, &resource, resource.namespaced, {}});
    parents.emplace(resource.name, converted.size() - 1);
  }
  for (const auto& resource : resources) {
    const std::string_view name = resource.name;
    const std::size_t slash = name.find('/');
    if (slash == std::string_view::npos) continue;
    const std::string_view parent = name.substr(0, slash);
    auto it = parents.find(parent);
    if (it == parents.end()) {
      converted.push_back({parent, nullptr, resource.namespaced, {}});
      it = parents.emplace(parent, converted.size() - 1).first;
    }
    Converted& entry = converted[it->second];
    if (entry.namespaced != resource.namespaced) continue;
    entry.subresources.emplace_back(name.substr(slash + 1), &resource);
  }
  return converted;
}

void appendResource(std::string& out, const Converted& resource) {
  out += R"({"resource":)";
  server::appendJsonQuoted(out, resource.name);
  out += ',';
  appendResponseKind(out, resource.self ? resource.self->kind : std::string_view());
  out += R"(,"scope":")";
  out += scopeOf(resource.namespaced);
  out += R"(","singularResource":"",)";
  appendVerbs(out, resource.self ? resource.self->verbs : std::vector<std::string_view>{});
  if (!resource.subresources.empty()) {
    out += R"(,"subresources":[)";
    for (std::size_t i = 0; i < resource.subresources.size(); ++i) {
      if (i > 0) out += ',';
      const auto& [subresource, entry] = resource.subresources[i];
      out += R"({"subresource":)";
      server::appendJsonQuoted(out, subresource);
      out += ',';
      appendResponseKind(out, entry->kind);
      out += ',';
      appendVerbs(out, entry->verbs);
      out += '}';
    }
    out += ']';
  }
  out += '}';
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

std::string renderAggregatedDiscovery(const std::vector<ApiGroupResources>& groups,
                                      DiscoveryFormat format) {
  std::string out = R"({"kind":"APIGroupDiscoveryList","apiVersion":)";
  out += format == DiscoveryFormat::kAggregatedV2Beta1 ? R"("apidiscovery.k8s.io/v2beta1")"
                                                       : R"("apidiscovery.k8s.io/v2")";
  out += R"(,"metadata":{},"items":[)";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const ApiGroupResources& group = groups[g];
    if (g > 0) out += ',';
    out += R"({"metadata":{"name":)";
    server::appendJsonQuoted(out, group.group);
    out += R"(,"creationTimestamp":null},"versions":[)";
    // Every version of a group serves the same resources: converted once, written for each.
    std::string resources;
    for (const Converted& resource : convert(group.resources)) {
      if (!resources.empty()) resources += ',';
      appendResource(resources, resource);
    }
    for (std::size_t v = 0; v < group.versions.size(); ++v) {
      if (v > 0) out += ',';
      out += R"({"version":)";
      server::appendJsonQuoted(out, group.versions[v]);
      // omitempty upstream: a version with nothing discovered yet has no "resources".
      if (!resources.empty()) {
        out += R"(,"resources":[)";
        out += resources;
        out += ']';
      }
      out += R"(,"freshness":"Current"})";
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace metrics_adapter::api
