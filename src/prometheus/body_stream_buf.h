#pragma once

#include <cstddef>
#include <exception>
#include <streambuf>
#include <vector>

#include "metrics_adapter/net/http_call.h"

namespace metrics_adapter::prometheus {

// A std::streambuf over a call's body, so a std::istream-based parser can consume the answer as
// it arrives; holds one chunk at a time. Errors cannot travel through the parser, so they end the
// input early and are kept for error().
class BodyStreamBuf final : public std::streambuf {
 public:
  // Input stops with an error once more than `max_bytes_per_token` bytes pass without a
  // tokenDone(): a single endless string cannot grow the parser's buffer without bound.
  BodyStreamBuf(net::HttpCall& call, std::size_t max_bytes_per_token);

  // The parser finished a token.
  void tokenDone() { bytes_since_token_ = 0; }

  // Why the input ended early (timeout, broken answer, oversized token); null when it did not.
  std::exception_ptr error() const { return error_; }

 protected:
  int_type underflow() override;

 private:
  net::HttpCall& call_;
  std::vector<char> buffer_;
  std::size_t max_bytes_per_token_;
  std::size_t bytes_since_token_ = 0;
  std::exception_ptr error_;
};

}  // namespace metrics_adapter::prometheus
