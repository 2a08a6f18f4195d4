#pragma once

#include <zlib.h>

#include <string>

namespace metrics_adapter::net::testing {

// `text` compressed by zlib at level 6, as Prometheus's Go server compresses an answer.
// window_bits: 15 + 16 wraps it in gzip's header and trailer; -15 is raw deflate data.
inline std::string deflateText(const std::string& text, int window_bits = 15 + 16) {
  z_stream stream{};
  deflateInit2(&stream, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(out.size() - stream.avail_out);
  deflateEnd(&stream);
  return out;
}

}  // namespace metrics_adapter::net::testing
