#include "metrics_adapter/server/request_info.h"

#include <optional>

#include "metrics_adapter/server/percent_decode.h"
#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::server {
namespace {

// The path's segments. The path is decoded as a whole first, as Go's URL.Path is, so an encoded
// '/' would split a segment: refused instead, like empty and dot segments, because a name never
// holds them and they make the segments differ from what a client meant.
// The strings of `parts` are taken from `spare`, where the segments of the target parsed before
// are put first: a path like the one before allocates nothing, whichever paths came between.
void splitPath(std::string_view raw_path, const std::string& path, std::vector<std::string>& parts,
               std::vector<std::string>& spare) {
  // One allocation for the segments of any API path (at most 8: /apis/g/v/namespaces/n/r/o/m),
  // not one per doubling.
  constexpr std::size_t kApiPathSegments = 8;
  spare.reserve(kApiPathSegments);
  parts.reserve(kApiPathSegments);
  while (!parts.empty()) {  // the first segment ends up last, where the next parse takes first
    spare.push_back(std::move(parts.back()));
    parts.pop_back();
  }
  if (path.empty() || path.front() != '/') {
    throw InvalidRequestTarget("invalid request path: not an absolute path");
  }
  for (std::size_t at = raw_path.find('%'); at != std::string_view::npos;
       at = raw_path.find('%', at + 1)) {
    if (text::equalsIgnoringAsciiCase(raw_path.substr(at, 3), "%2F")) {
      throw InvalidRequestTarget("invalid request path: encoded '/' in a segment");
    }
  }
  std::string_view rest = std::string_view(path).substr(1);
  // "/apis/" is "/apis"; "//" keeps its empty segment (found by fuzz_request_target).
  if (rest.size() > 1 && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty()) return;  // "/"
  while (true) {             // an empty segment, last ones included ("a//"), is refused
    const auto slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    if (part.empty()) throw InvalidRequestTarget("invalid request path: empty segment");
    if (part == "." || part == "..") {
      throw InvalidRequestTarget("invalid request path: '.' or '..' segment");
    }
    if (spare.empty()) {
      parts.emplace_back(part);
    } else {
      parts.push_back(std::move(spare.back()));
      spare.pop_back();
      parts.back().assign(part);
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
}

// Go's url.ParseQuery, keeping the first value of each name. A pair with ';' is skipped (Go
// refuses those since 1.17); a malformed escape refuses the target, as the query selects
// what is served.
void parseQuery(std::string_view raw_query,
                std::map<std::string, std::string, std::less<>>& query) {
  while (!raw_query.empty()) {
    const auto amp = raw_query.find('&');
    const std::string_view pair = raw_query.substr(0, amp);
    raw_query = amp == std::string_view::npos ? std::string_view() : raw_query.substr(amp + 1);
    if (pair.empty() || pair.find(';') != std::string_view::npos) continue;
    const auto equals = pair.find('=');
    auto name = percentDecode(pair.substr(0, equals), true);
    auto value = percentDecode(
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1), true);
    if (!name || !value) throw InvalidRequestTarget("invalid URL escape in query string");
    query.emplace(std::move(*name), std::move(*value));  // first value wins
  }
}

// Upstream decodes ListOptions.Watch with Convert_Slice_string_To_bool: absent, "0" and any
// case of "false" are false; anything else, even an empty value, is true.
bool watchRequested(const RequestInfo& info) {
  const auto it = info.query.find("watch");
  return it != info.query.end() && it->second != "0" &&
         !text::equalsIgnoringAsciiCase(it->second, "false");
}

// The verb upstream derives from the HTTP method (compared case-sensitively, as Go does).
std::string resourceVerb(std::string_view method) {
  if (method == "GET" || method == "HEAD") return "get";
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "";
}

// RequestInfoFactory.NewRequestInfo for the prefixes "api" (groupless) and "apis". Leaves `info`
// a non-resource request when the path is one, or one upstream rejects as malformed (a special
// verb without anything after it), which is then also authorized as a path.
void resolveResource(std::string_view method, RequestInfo& info) {
  const auto& parts = info.parts;
  if (parts.size() < 3 || (parts[0] != "apis" && parts[0] != "api")) return;
  RequestInfo resource;
  std::size_t next = 1;
  if (parts[0] == "apis") {
    if (parts.size() - next < 3) return;
    resource.api_group = parts[next++];
  }
  resource.api_version = parts[next++];
  if (parts[next] == "watch" || parts[next] == "proxy") {
    if (parts.size() - next < 2) return;
    resource.verb = parts[next++];
  } else {
    resource.verb = resourceVerb(method);
  }
  if (parts[next] == "namespaces" && parts.size() - next > 1) {
    resource.namespace_name = parts[next + 1];
    const bool namespace_subresource =
        parts.size() - next > 2 && (parts[next + 2] == "status" || parts[next + 2] == "finalize");
    if (parts.size() - next > 2 && !namespace_subresource) next += 2;
  }
  resource.resource_parts.assign(parts.begin() + static_cast<std::ptrdiff_t>(next), parts.end());
  const auto& rest = resource.resource_parts;
  resource.resource = rest[0];
  if (rest.size() >= 2) resource.name = rest[1];
  if (rest.size() >= 3 && resource.verb != "proxy") resource.subresource = rest[2];

  info.resource_request = true;
  info.verb = std::move(resource.verb);
  if (resource.name.empty() && info.verb == "get") {
    info.verb = watchRequested(info) ? "watch" : "list";
  }
  if (resource.name.empty() && info.verb == "delete") info.verb = "deletecollection";
  info.api_group = std::move(resource.api_group);
  info.api_version = std::move(resource.api_version);
  info.namespace_name = std::move(resource.namespace_name);
  info.resource = std::move(resource.resource);
  info.name = std::move(resource.name);
  info.subresource = std::move(resource.subresource);
  info.resource_parts = std::move(resource.resource_parts);
}

}  // namespace

std::string RequestInfo::get(std::string_view key) const {
  const auto it = query.find(key);
  return it == query.end() ? std::string() : it->second;
}

RequestInfo parseRequestInfo(std::string_view method, std::string_view target) {
  RequestInfo info;
  parseRequestInfo(method, target, info);
  return info;
}

void parseRequestInfo(std::string_view method, std::string_view target, RequestInfo& info) {
  const auto question = target.find('?');
  const std::string_view raw_path = target.substr(0, question);
  if (!percentDecodeInto(raw_path, false, info.path)) {
    throw InvalidRequestTarget("invalid URL escape in path");
  }
  splitPath(raw_path, info.path, info.parts, info.spare_parts);
  info.query.clear();
  if (question != std::string_view::npos) parseQuery(target.substr(question + 1), info.query);
  info.resource_request = false;
  info.verb = text::lowerAscii(method);
  info.api_group.clear();
  info.api_version.clear();
  info.namespace_name.clear();
  info.resource.clear();
  info.name.clear();
  info.subresource.clear();
  info.resource_parts.clear();
  resolveResource(method, info);
}

}  // namespace metrics_adapter::server
