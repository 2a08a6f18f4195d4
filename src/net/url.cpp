#include "metrics_adapter/net/url.h"

#include <stdexcept>

#include "net/cpprest.h"

namespace metrics_adapter::net {

UrlParts splitUrl(const std::string& url) {
  web::uri parsed;
  try {
    parsed = web::uri(url);
  } catch (const std::exception& e) {
    throw std::invalid_argument(e.what());
  }
  return {.scheme = parsed.scheme(),
          .user_info = parsed.user_info(),
          .host = parsed.host(),
          .port = parsed.port(),
          .path = parsed.path(),
          .query = parsed.query(),
          .fragment = parsed.fragment()};
}

}  // namespace metrics_adapter::net
