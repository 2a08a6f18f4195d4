#pragma once

#include <string>

namespace metrics_adapter::kube {

// A Kubernetes API server URL split into what every call reuses.
struct ServerUrl {
  std::string scheme;       // "https" or "http"
  std::string host;         // IPv6 literals keep their brackets
  std::string port;         // explicit, or the scheme's default
  std::string origin;       // scheme://host[:port] as written, what the HTTP client connects to
  std::string path_prefix;  // without a trailing '/', "" for none (API servers behind a proxy)
};

// Throws std::invalid_argument for anything but an absolute http(s) URL with a host, and for
// user info, a query or a fragment (none of which the API server would see).
ServerUrl parseServerUrl(const std::string& url);

}  // namespace metrics_adapter::kube
