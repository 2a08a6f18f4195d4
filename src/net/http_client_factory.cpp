#include "metrics_adapter/net/http_client_factory.h"

#include <stdexcept>

namespace metrics_adapter::net {

std::unique_ptr<web::http::client::http_client> makeHttpClient(const HttpClientSettings& settings) {
  web::http::client::http_client_config config;
  config.set_timeout(settings.timeout);
  config.set_max_redirects(0);
  config.set_validate_certificates(settings.verify_server);
  config.set_ssl_context_callback([tls = settings.tls](boost::asio::ssl::context& context) {
    configureTlsContext(context, tls);
  });
  try {
    return std::make_unique<web::http::client::http_client>(web::uri(settings.origin), config);
  } catch (const std::exception& e) {
    throw std::invalid_argument("\"" + settings.origin + "\": " + e.what());
  }
}

}  // namespace metrics_adapter::net
