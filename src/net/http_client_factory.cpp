#include "metrics_adapter/net/http_client_factory.h"

#include <cpprest/http_compression.h>
#include <pplx/threadpool.h>

#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "metrics_adapter/net/gzip_decoder.h"

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

namespace compression = web::http::compression;

// cpprestsdk's side of GzipDecoder: the "gzip" content coding, offered in Accept-Encoding and
// used for answers that come with Content-Encoding: gzip, in place of cpprestsdk's own zlib
// decoder (why: gzip_decoder.h).
class GzipDecompressor final : public compression::decompress_provider {
 public:
  const utility::string_t& algorithm() const override { return algorithmName(); }

  size_t decompress(const uint8_t* input, size_t input_size, uint8_t* output, size_t output_size,
                    compression::operation_hint /*hint*/, size_t& input_bytes_processed,
                    bool& done) override {
    const GzipDecoder::Step step = decoder_.decode(input, input_size, output, output_size);
    input_bytes_processed = step.consumed;
    done = step.finished;
    return step.produced;
  }

  pplx::task<compression::operation_result> decompress(const uint8_t* input, size_t input_size,
                                                       uint8_t* output, size_t output_size,
                                                       compression::operation_hint hint) override {
    compression::operation_result result{};
    try {
      result.output_bytes_produced = decompress(input, input_size, output, output_size, hint,
                                                result.input_bytes_processed, result.done);
    } catch (...) {
      return pplx::task_from_exception<compression::operation_result>(std::current_exception());
    }
    return pplx::task_from_result(result);
  }

  void reset() override { decoder_.reset(); }

  static const utility::string_t& algorithmName() {
    static const utility::string_t kName = compression::builtin::algorithm::GZIP;
    return kName;
  }

 private:
  GzipDecoder decoder_;
};

class GzipDecompressorFactory final : public compression::decompress_factory {
 public:
  const utility::string_t& algorithm() const override { return GzipDecompressor::algorithmName(); }
  // Above 1000 cpprestsdk writes the coding without a q-value: "Accept-Encoding: gzip", as Go's
  // client sends. Prometheus before 2.47 (Debian 12 ships 2.42) compresses only for that exact
  // token; "gzip;q=0.500", cpprestsdk's default, got answers uncompressed.
  uint16_t weight() const override { return kNoQualityValue; }
  std::unique_ptr<compression::decompress_provider> make_decompressor() const override {
    return std::make_unique<GzipDecompressor>();
  }

 private:
  static constexpr uint16_t kNoQualityValue = 1001;
};

// Has every request offer gzip, decoded by GzipDecompressor.
void decodeGzipAnswers(web::http::client::http_client& client) {
  const std::vector<std::shared_ptr<compression::decompress_factory>> factories{
      std::make_shared<GzipDecompressorFactory>()};
  client.add_handler([factories](web::http::http_request request,
                                 const std::shared_ptr<web::http::http_pipeline_stage>& next) {
    request.set_decompress_factories(factories);
    return next->propagate(request);
  });
}

}  // namespace

std::unique_ptr<web::http::client::http_client> makeHttpClient(const HttpClientSettings& settings) {
  sizeClientThreadsOnce();
  web::http::client::http_client_config config;
  config.set_timeout(settings.timeout);
  config.set_max_redirects(0);
  config.set_validate_certificates(settings.verify_server);
  config.set_request_compressed_response(settings.compressed_responses);
  config.set_ssl_context_callback([tls = settings.tls](boost::asio::ssl::context& context) {
    configureTlsContext(context, tls);
  });
  std::unique_ptr<web::http::client::http_client> client;
  try {
    client = std::make_unique<web::http::client::http_client>(web::uri(settings.origin), config);
  } catch (const std::exception& e) {
    throw std::invalid_argument("\"" + settings.origin + "\": " + e.what());
  }
  if (settings.compressed_responses) decodeGzipAnswers(*client);
  return client;
}

}  // namespace metrics_adapter::net
