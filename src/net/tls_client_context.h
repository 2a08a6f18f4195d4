#pragma once

#include <boost/asio/ssl/context.hpp>

#include "metrics_adapter/net/tls_client.h"

namespace metrics_adapter::net {

// Prepares a client context: TLS 1.2 or later, the trust of `settings`, and the client
// certificate and key when set. Throws boost::system::system_error or std::invalid_argument.
// Private to net: the HTTP client calls it for every new connection (http_client.cpp).
void configureTlsContext(boost::asio::ssl::context& context, const TlsClientSettings& settings);

}  // namespace metrics_adapter::net
