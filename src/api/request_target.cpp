#include "metrics_adapter/api/request_target.h"

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/net/percent_decode.h"

namespace metrics_adapter::api {
std::string RequestTarget::get(std::string_view key) const {
  auto it = query.find(key);
  return it == query.end() ? std::string() : it->second;
}

RequestTarget parseRequestTarget(std::string_view target) {
  RequestTarget result;
  std::string_view raw_path = target;
  std::string_view raw_query;
  if (auto question = target.find('?'); question != std::string_view::npos) {
    raw_path = target.substr(0, question);
    raw_query = target.substr(question + 1);
  }
  auto path = net::percentDecode(raw_path, false);
  if (!path) throw ApiError::badRequest("invalid URL escape in path");
  result.path = std::move(*path);

  std::size_t begin = 0;
  while (begin <= result.path.size()) {
    std::size_t end = result.path.find('/', begin);
    if (end == std::string::npos) end = result.path.size();
    if (end > begin) result.segments.push_back(result.path.substr(begin, end - begin));
    begin = end + 1;
  }

  while (!raw_query.empty()) {
    std::size_t amp = raw_query.find('&');
    std::string_view pair = raw_query.substr(0, amp);
    raw_query = amp == std::string_view::npos ? std::string_view() : raw_query.substr(amp + 1);
    if (pair.empty()) continue;
    std::size_t eq = pair.find('=');
    auto key = net::percentDecode(pair.substr(0, eq), true);
    auto value = net::percentDecode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
    if (!key || !value) throw ApiError::badRequest("invalid URL escape in query string");
    result.query.emplace(std::move(*key), std::move(*value));  // first value wins
  }
  return result;
}

}  // namespace metrics_adapter::api
