#include "prometheus/body_stream_buf.h"

#include <string>

#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::prometheus {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{64} * 1024;

}  // namespace

BodyStreamBuf::BodyStreamBuf(net::HttpCall& call, std::size_t max_bytes_per_token)
    : call_(call), buffer_(kBufferBytes), max_bytes_per_token_(max_bytes_per_token) {}

BodyStreamBuf::int_type BodyStreamBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (error_ != nullptr) return traits_type::eof();
  if (bytes_since_token_ > max_bytes_per_token_) {
    error_ = std::make_exception_ptr(
        PrometheusError(PrometheusError::Kind::kBadResponse, call_.status(),
                        "unexpected Prometheus answer: a single JSON token is longer than " +
                            std::to_string(max_bytes_per_token_) + " bytes"));
    return traits_type::eof();
  }
  std::size_t count = 0;
  try {
    count = call_.read(buffer_.data(), buffer_.size());
  } catch (...) {
    error_ = std::current_exception();
    return traits_type::eof();
  }
  if (count == 0) return traits_type::eof();
  bytes_since_token_ += count;
  setg(buffer_.data(), buffer_.data(), buffer_.data() + count);
  return traits_type::to_int_type(*gptr());
}

}  // namespace metrics_adapter::prometheus
