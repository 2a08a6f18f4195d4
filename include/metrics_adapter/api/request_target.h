#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::api {

// A request target split the way Go's net/url sees it (api.md §2.4).
struct RequestTarget {
  std::string path;                   // percent-decoded
  std::vector<std::string> segments;  // path split on '/', empty segments dropped
  std::map<std::string, std::string, std::less<>> query;  // form-decoded, first value wins
  bool has(std::string_view key) const { return query.find(key) != query.end(); }
  std::string get(std::string_view key) const;
};

// Splits and decodes a raw request target. Throws ApiError 400 on malformed escapes.
RequestTarget parseRequestTarget(std::string_view target);

}  // namespace metrics_adapter::api
