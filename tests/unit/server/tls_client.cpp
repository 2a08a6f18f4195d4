#include <array>
#include <functional>

#include "test_support.h"

namespace metrics_adapter::server::testing {

TlsClient::TlsClient(const ClientConfig& config) : context_(net::ssl::context::tls_client) {
  SSL_CTX* handle = context_.native_handle();
  if (config.allow_legacy_protocols) {
    SSL_CTX_set_security_level(handle, 0);
    SSL_CTX_set_cipher_list(handle, "DEFAULT:@SECLEVEL=0");
  }
  if (!config.cipher_list.empty()) SSL_CTX_set_cipher_list(handle, config.cipher_list.c_str());
  if (config.min_version != 0) SSL_CTX_set_min_proto_version(handle, config.min_version);
  if (config.max_version != 0) SSL_CTX_set_max_proto_version(handle, config.max_version);
  if (!config.alpn.empty()) {
    std::string wire;
    for (const std::string& protocol : config.alpn) {
      wire += static_cast<char>(protocol.size());
      wire += protocol;
    }
    SSL_CTX_set_alpn_protos(handle, reinterpret_cast<const unsigned char*>(wire.data()),
                            static_cast<unsigned>(wire.size()));
  }
  if (config.client_certificate != nullptr) {
    SSL_CTX_use_certificate(handle, config.client_certificate->chain.front().get());
    SSL_CTX_use_PrivateKey(handle, config.client_certificate->key.get());
  }
  if (!config.trusted_certificate_file.empty()) {
    context_.load_verify_file(config.trusted_certificate_file);
    context_.set_verify_mode(net::ssl::verify_peer);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_CTX_get0_param(handle), config.expected_ip.c_str());
  } else {
    context_.set_verify_mode(net::ssl::verify_none);
  }
  stream_ = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(io_context_, context_);
  if (!config.server_name.empty()) {
    SSL_set_tlsext_host_name(stream_->native_handle(), config.server_name.c_str());
  }
}

beast::error_code TlsClient::connect(std::uint16_t port) {
  beast::error_code result;
  tcp().expires_after(kTimeout);
  tcp().async_connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                      [&](const beast::error_code& ec) { result = ec; });
  run();
  if (result) return result;
  return handshake();
}

beast::error_code TlsClient::handshake() {
  beast::error_code result;
  tcp().expires_after(kTimeout);
  stream_->async_handshake(net::ssl::stream_base::client,
                           [&](const beast::error_code& ec) { result = ec; });
  run();
  return result;
}

beast::error_code TlsClient::writeRaw(std::string_view bytes) {
  beast::error_code result;
  tcp().expires_after(kTimeout);
  net::async_write(*stream_, net::buffer(bytes.data(), bytes.size()),
                   [&](const beast::error_code& ec, std::size_t) { result = ec; });
  run();
  return result;
}

beast::error_code TlsClient::send(Request request) {
  request.version(11);
  if (request.find(http::field::host) == request.end()) request.set(http::field::host, "localhost");
  request.prepare_payload();
  beast::error_code result;
  tcp().expires_after(kTimeout);
  http::async_write(*stream_, request,
                    [&](const beast::error_code& ec, std::size_t) { result = ec; });
  run();
  return result;
}

std::pair<beast::error_code, Response> TlsClient::read(bool head_request) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(16 << 20);
  parser.skip(head_request);
  beast::error_code result;
  tcp().expires_after(kTimeout);
  http::async_read(*stream_, buffer_, parser,
                   [&](const beast::error_code& ec, std::size_t) { result = ec; });
  run();
  return {result, result ? Response{} : parser.release()};
}

Response TlsClient::roundTrip(Request request) {
  const bool head = request.method() == http::verb::head;
  if (const beast::error_code ec = send(std::move(request))) {
    throw std::runtime_error("send: " + ec.message());
  }
  auto [ec, response] = read(head);
  if (ec) throw std::runtime_error("read: " + ec.message());
  return std::move(response);
}

Response TlsClient::get(std::string target) {
  return roundTrip(Request(http::verb::get, target, 11));
}

beast::error_code TlsClient::waitForClose() {
  beast::error_code result;
  tcp().expires_after(kTimeout);
  std::array<char, 4096> scratch{};
  std::function<void(const beast::error_code&, std::size_t)> on_read;
  on_read = [&](const beast::error_code& ec, std::size_t) {
    if (ec) {
      result = ec;
      return;
    }
    stream_->async_read_some(net::buffer(scratch), on_read);
  };
  stream_->async_read_some(net::buffer(scratch), on_read);
  run();
  return result;
}

std::string TlsClient::alpnSelected() {
  const unsigned char* data = nullptr;
  unsigned length = 0;
  SSL_get0_alpn_selected(stream_->native_handle(), &data, &length);
  return data == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(data), length);
}

std::string TlsClient::peerSerial() {
  X509* certificate = SSL_get0_peer_certificate(stream_->native_handle());
  return certificate == nullptr ? std::string() : serialHex(certificate);
}

std::string TlsClient::cipher() { return SSL_get_cipher_name(stream_->native_handle()); }

void TlsClient::run() {
  io_context_.restart();
  io_context_.run();
}

}  // namespace metrics_adapter::server::testing
