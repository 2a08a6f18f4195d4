#include "prometheus/series_stream_parser.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "prometheus/series_scanner.h"

namespace metrics_adapter::prometheus {
namespace {

constexpr std::size_t kScanChunkBytes = std::size_t{64} * 1024;

}  // namespace

SeriesAnswer parseSeriesStream(std::istream& in, const SeriesVisitor& visitor,
                               const std::function<void()>& on_token) {
  using Traits = std::istream::traits_type;
  SeriesScanner scanner(visitor, on_token);
  std::streambuf* const source = in.rdbuf();
  if (source != nullptr) {
    std::string chunk(kScanChunkBytes, '\0');
    // Takes what the source holds, and waits for more only when it holds nothing: each network
    // chunk is scanned as soon as it arrives.
    while (true) {
      std::streamsize available = source->in_avail();
      if (available <= 0) {
        if (Traits::eq_int_type(source->sgetc(), Traits::eof())) break;
        available = std::max<std::streamsize>(source->in_avail(), 1);
      }
      const std::streamsize count = source->sgetn(
          chunk.data(), std::min(available, static_cast<std::streamsize>(chunk.size())));
      if (count <= 0) break;
      scanner.feed(std::string_view(chunk.data(), static_cast<std::size_t>(count)));
    }
  }
  return scanner.finish();
}

}  // namespace metrics_adapter::prometheus
