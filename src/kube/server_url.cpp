#include "kube/server_url.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "metrics_adapter/net/url.h"

namespace metrics_adapter::kube {
namespace {

// A DNS name or IPv4 address, or an IPv6 literal in brackets. splitUrl takes "h:port" with a
// non-numeric port for a host, so this is where such URLs are caught.
bool isValidHost(const std::string& host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') return true;
  return !host.empty() && std::all_of(host.begin(), host.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_';
  });
}

[[noreturn]] void reject(const std::string& url, const std::string& why) {
  throw std::invalid_argument("server \"" + url + "\": " + why);
}

}  // namespace

ServerUrl parseServerUrl(const std::string& url) {
  if (url.empty()) throw std::invalid_argument("server is not set");
  net::UrlParts parsed;
  try {
    parsed = net::splitUrl(url);
  } catch (const std::invalid_argument&) {
    reject(url, "not a valid URL");
  }
  // splitUrl lowercases the scheme and host.
  ServerUrl server;
  server.scheme = parsed.scheme;
  if (server.scheme != "https" && server.scheme != "http") {
    reject(url, "the scheme must be https or http");
  }
  if (parsed.host.empty()) reject(url, "no host");
  if (!isValidHost(parsed.host)) reject(url, "invalid host or port");
  if (!parsed.user_info.empty()) reject(url, "credentials in the URL are not supported");
  if (!parsed.query.empty() || !parsed.fragment.empty()) {
    reject(url, "a query or fragment is not supported");
  }
  if (parsed.port < 0 || parsed.port > 65535) reject(url, "port out of range");
  server.host = parsed.host;
  server.origin = server.scheme + "://" + server.host;
  if (parsed.port != 0) {
    server.port = std::to_string(parsed.port);
    server.origin += ":" + server.port;
  } else {
    server.port = server.scheme == "https" ? "443" : "80";
  }
  server.path_prefix = parsed.path;
  while (!server.path_prefix.empty() && server.path_prefix.back() == '/') {
    server.path_prefix.pop_back();
  }
  return server;
}

}  // namespace metrics_adapter::kube
