#include "metrics_adapter/net/http_client.h"

#include <pplx/threadpool.h>

#include <cstddef>
#include <mutex>
#include <stdexcept>

#include "metrics_adapter/text/ascii.h"
#include "net/http_client_native.h"
#include "net/tls_client_context.h"

namespace metrics_adapter::net {
namespace {

// cpprestsdk's shared thread pool runs the socket reads and writes of every outbound exchange
// and the short continuations between them; callers read bodies on their own threads, so the
// pool never blocks. Its default on Linux is 40 threads, and every hop from one continuation to
// the next (several per network chunk) wakes an idle one: in a 1M-series relist (5,000 chunks of
// 64 KiB) the kernel switching threads was a third of the adapter's CPU. CPU per relist with
// 40 threads 0.67 s, 4: 0.55 to 0.68, 2: 0.49, 1: 0.43. Two, not one, so a slow step of one
// exchange (a TLS handshake) does not hold up every other.
constexpr std::size_t kClientThreads = 2;

void sizeClientThreadsOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      crossplat::threadpool::initialize_with_threads(kClientThreads);
    } catch (const std::exception&) {
      // Already started by an earlier cpprestsdk use (a test's own client): it keeps its size.
    }
  });
}

web::http::client::http_client_config configFor(const HttpClientSettings& settings) {
  web::http::client::http_client_config config;
  config.set_timeout(settings.timeout);
  config.set_max_redirects(0);
  config.set_validate_certificates(settings.verify_server);
  config.set_ssl_context_callback([tls = settings.tls](boost::asio::ssl::context& context) {
    configureTlsContext(context, tls);
  });
  return config;
}

}  // namespace

bool HttpRequest::hasHeader(std::string_view name) const {
  for (const auto& header : headers) {
    if (text::equalsIgnoringAsciiCase(header.first, name)) return true;
  }
  return false;
}

HttpClient::HttpClient(const HttpClientSettings& settings) {
  sizeClientThreadsOnce();
  try {
    native_ = std::make_unique<Native>(web::uri(settings.origin), configFor(settings));
  } catch (const std::exception& e) {
    throw std::invalid_argument("\"" + settings.origin + "\": " + e.what());
  }
}

HttpClient::~HttpClient() = default;

std::unique_ptr<HttpClient> makeHttpClient(const HttpClientSettings& settings) {
  return std::make_unique<HttpClient>(settings);
}

bool isValidRequestTarget(const std::string& target) {
  try {
    web::uri parsed(target);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace metrics_adapter::net
