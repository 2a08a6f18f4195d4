#pragma once

#include "metrics_adapter/net/http_client.h"
#include "net/cpprest.h"

namespace metrics_adapter::net {

// What an HttpClient holds: private to the net module, whose HttpCall alone uses it.
struct HttpClient::Native {
  Native(const web::uri& origin, const web::http::client::http_client_config& config)
      : client(origin, config) {}

  web::http::client::http_client client;
};

}  // namespace metrics_adapter::net
