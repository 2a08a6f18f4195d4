#pragma once

#include <string>

namespace metrics_adapter::net {

// A URL split into its parts by the rules of the client that sends our requests (so what is
// accepted here is what it can reach): scheme and host lowercased, port 0 when none is given.
struct UrlParts {
  std::string scheme;
  std::string user_info;
  std::string host;  // an IPv6 literal keeps its brackets
  int port = 0;
  std::string path;
  std::string query;
  std::string fragment;
};

// Throws std::invalid_argument when `url` is not a URL.
UrlParts splitUrl(const std::string& url);

}  // namespace metrics_adapter::net
