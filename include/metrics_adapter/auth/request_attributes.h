#pragma once

#include <string>
#include <string_view>

namespace metrics_adapter::auth {

// The authorization attributes of a request, computed the way the Kubernetes apiserver's
// RequestInfo does (api.md §3.1): resource requests under /apis/<group>/<version>/... with verb
// get/list, namespace, resource, name and subresource; everything else is a non-resource
// request with the lower-case method as verb and the path.
struct RequestAttributes {
  bool resource_request = false;
  std::string verb;
  std::string path;  // the decoded path (non-resource requests)
  std::string api_group;
  std::string api_version;
  std::string namespace_name;
  std::string resource;
  std::string subresource;
  std::string name;

  bool operator==(const RequestAttributes&) const = default;
};

// `target` is the raw request target ("/apis/...?labelSelector=..."); percent-decoding as in
// api.md §2.4. Malformed escapes yield a non-resource request for the raw path.
RequestAttributes requestAttributes(std::string_view method, std::string_view target);

}  // namespace metrics_adapter::auth
