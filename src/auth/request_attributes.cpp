#include "metrics_adapter/auth/request_attributes.h"

#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/net/percent_decode.h"

namespace metrics_adapter::auth {
namespace {

std::string lowerAscii(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

bool equalsIgnoringAsciiCase(std::string_view a, std::string_view b) {
  return lowerAscii(a) == lowerAscii(b);
}

// Go's splitPath in requestinfo.go: leading and trailing '/' trimmed, then split on every '/'
// (inner empty segments are kept, as strings.Split does).
std::vector<std::string> splitPath(std::string_view path) {
  const auto first = path.find_first_not_of('/');
  if (first == std::string_view::npos) return {};
  const auto last = path.find_last_not_of('/');
  path = path.substr(first, last - first + 1);
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto slash = path.find('/', start);
    parts.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

// The first value of `key` in a raw query string, as Go's url.ParseQuery reads it: pairs split
// on '&', a pair with ';' or a malformed escape skipped, '+' is a space, no '=' means "".
std::optional<std::string> firstQueryValue(std::string_view query, std::string_view key) {
  std::size_t start = 0;
  while (start <= query.size()) {
    auto end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(start, end - start);
    start = end + 1;
    if (pair.empty() || pair.find(';') != std::string_view::npos) continue;
    const auto equals = pair.find('=');
    const auto name = net::percentDecode(pair.substr(0, equals), true);
    if (!name || *name != key) continue;
    auto value = net::percentDecode(
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1), true);
    if (value) return value;
  }
  return std::nullopt;
}

// Upstream decodes ListOptions.Watch with Convert_Slice_string_To_bool: absent, "0" and any
// case of "false" are false; anything else, even an empty value, is true.
bool watchRequested(std::string_view query) {
  const auto value = firstQueryValue(query, "watch");
  return value && *value != "0" && !equalsIgnoringAsciiCase(*value, "false");
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

// RequestInfoFactory.NewRequestInfo for the prefixes "api" (groupless) and "apis". nullopt
// when the path is a non-resource request, or one upstream rejects as malformed
// (a special verb without anything after it), which is then also authorized as a path.
std::optional<RequestAttributes> resourceAttributes(std::string_view method,
                                                    const std::vector<std::string>& parts,
                                                    std::string_view query) {
  if (parts.size() < 3 || (parts[0] != "apis" && parts[0] != "api")) return std::nullopt;
  RequestAttributes attributes;
  std::size_t next = 1;
  if (parts[0] == "apis") {
    if (parts.size() - next < 3) return std::nullopt;
    attributes.api_group = parts[next++];
  }
  attributes.resource_request = true;
  attributes.api_version = parts[next++];

  if (parts[next] == "watch" || parts[next] == "proxy") {
    if (parts.size() - next < 2) return std::nullopt;
    attributes.verb = parts[next++];
  } else {
    attributes.verb = resourceVerb(method);
  }

  if (parts[next] == "namespaces" && parts.size() - next > 1) {
    attributes.namespace_name = parts[next + 1];
    const bool namespace_subresource =
        parts.size() - next > 2 && (parts[next + 2] == "status" || parts[next + 2] == "finalize");
    if (parts.size() - next > 2 && !namespace_subresource) next += 2;
  }

  const std::size_t remaining = parts.size() - next;
  attributes.resource = parts[next];
  if (remaining >= 2) attributes.name = parts[next + 1];
  if (remaining >= 3 && attributes.verb != "proxy") attributes.subresource = parts[next + 2];

  if (attributes.name.empty() && attributes.verb == "get") {
    attributes.verb = watchRequested(query) ? "watch" : "list";
  }
  if (attributes.name.empty() && attributes.verb == "delete") attributes.verb = "deletecollection";
  return attributes;
}

}  // namespace

RequestAttributes requestAttributes(std::string_view method, std::string_view target) {
  const auto question = target.find('?');
  const std::string_view raw_path = target.substr(0, question);
  const std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);

  RequestAttributes attributes;
  attributes.verb = lowerAscii(method);
  const auto path = net::percentDecode(raw_path, false);
  if (!path) {
    attributes.path = std::string(raw_path);
    return attributes;
  }
  attributes.path = *path;
  if (auto resource = resourceAttributes(method, splitPath(*path), query)) {
    resource->path = *path;
    return *resource;
  }
  return attributes;
}

}  // namespace metrics_adapter::auth
