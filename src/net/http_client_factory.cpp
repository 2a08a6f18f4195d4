#include "metrics_adapter/net/http_client_factory.h"

#include <pplx/threadpool.h>

#include <cstddef>
#include <mutex>
#include <stdexcept>

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

}  // namespace

std::unique_ptr<web::http::client::http_client> makeHttpClient(const HttpClientSettings& settings) {
  sizeClientThreadsOnce();
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
