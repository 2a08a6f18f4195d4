#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::server {

// What a request asks for, parsed once from its method and raw target. Authorization, routing,
// the access log and the self-metrics all read this one value, so what is authorized is what
// is served. The attributes are computed the way the Kubernetes apiserver's RequestInfo does
// (docs/api-contract.md, "Request attributes"): resource requests under /apis/<group>/<version>/
// (or /api/<version>/) with verb get/list/watch, namespace, resource, name and subresource;
// everything else is a non-resource request whose verb is the lower-case method.
struct RequestInfo {
  std::string path;                // percent-decoded
  std::vector<std::string> parts;  // `path` split on '/', without the leading and trailing '/'
  std::map<std::string, std::string, std::less<>> query;  // form-decoded, first value wins

  bool resource_request = false;
  std::string verb;
  std::string api_group;  // "" for /api (the core group)
  std::string api_version;
  std::string namespace_name;
  std::string resource;
  std::string name;
  std::string subresource;
  // Upstream's RequestInfo.Parts: what follows the version and any namespaces/<ns> prefix
  // (resource, name, subresource, ...). Routes read how many there are.
  std::vector<std::string> resource_parts;

  // Not a part of the request: strings of segments parsed before, kept so that parsing into
  // this RequestInfo again reuses them (parseRequestInfo(method, target, info)).
  std::vector<std::string> spare_parts;

  bool has(std::string_view key) const { return query.find(key) != query.end(); }
  std::string get(std::string_view key) const;  // "" when absent
};

// A target no route could serve unambiguously: a malformed %-escape, an empty path segment
// ("a//b"), a "." or ".." segment, an encoded '/' in the path, or a target that is not an
// absolute path. Answered 400 BadRequest with what() as the message.
class InvalidRequestTarget : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses `target` ("/apis/...?labelSelector=...") as Go's net/url and the Kubernetes request-info
// parser read it: the path percent-decoded and split on '/', one trailing '/' allowed; query
// pairs split on '&', names and values form-decoded ('+' is a space), pairs holding ';' skipped
// (as Go does), the first value of a repeated name kept. Throws InvalidRequestTarget.
RequestInfo parseRequestInfo(std::string_view method, std::string_view target);
// The same into `info`, replacing all it held. Its strings and lists keep their capacity, so a
// thread that parses into one RequestInfo again and again allocates nothing for a target like
// the one before (the discovery documents; docs/performance.md, round 4). After a throw, `info`
// holds a part of the target and must not be read.
void parseRequestInfo(std::string_view method, std::string_view target, RequestInfo& info);

}  // namespace metrics_adapter::server
