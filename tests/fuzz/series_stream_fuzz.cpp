// /api/v1/series answers, parsed as a stream during every relist. Each input is parsed twice: in
// one piece, and in pieces of 1 to 16 bytes (the size taken from the input's first byte), as a
// network answer arrives; both must give the same outcome.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "prometheus/series_stream_parser.h"

namespace {

namespace prometheus = metrics_adapter::prometheus;
using metrics_adapter::fuzz::check;

// Serves `text` at most `piece` bytes at a time.
class PieceBuf : public std::streambuf {
 public:
  PieceBuf(std::string text, std::size_t piece) : text_(std::move(text)), piece_(piece) {}

 protected:
  int_type underflow() override {
    if (next_ >= text_.size()) return traits_type::eof();
    const std::size_t size = std::min(piece_, text_.size() - next_);
    char* begin = text_.data() + next_;
    setg(begin, begin, begin + size);
    next_ += size;
    return traits_type::to_int_type(*begin);
  }

 private:
  std::string text_;
  std::size_t piece_;
  std::size_t next_ = 0;
};

struct Outcome {
  std::size_t visits = 0;
  std::optional<prometheus::PrometheusError::Kind> error;
};

Outcome parse(std::istream& in) {
  Outcome outcome;
  std::size_t tokens = 0;
  try {
    const auto answer = prometheus::parseSeriesStream(
        in,
        [&outcome](std::string_view metric_name, const std::vector<std::string_view>& labels) {
          ++outcome.visits;
          for (const auto label : labels) {
            check(label != "__name__", "label names exclude __name__", metric_name);
          }
        },
        [&tokens] { ++tokens; });
    check(answer.series == outcome.visits, "the answer counts every visited series");
    check(tokens > 0, "a parsed answer has tokens");
  } catch (const prometheus::PrometheusError& error) {
    check(error.kind() == prometheus::PrometheusError::Kind::kApiError ||
              error.kind() == prometheus::PrometheusError::Kind::kBadResponse,
          "a bad answer is an API error or a bad response", error.what());
    outcome.error = error.kind();
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream whole(text);
  const Outcome in_one_piece = parse(whole);

  const std::size_t piece = size == 0 ? 1 : 1 + data[0] % 16;
  PieceBuf pieces_buf(text, piece);
  std::istream pieces(&pieces_buf);
  const Outcome in_pieces = parse(pieces);
  check(in_pieces.error == in_one_piece.error, "the outcome does not depend on the chunking");
  // A failed parse may have visited series before the failure, at the same point either way.
  check(in_pieces.visits == in_one_piece.visits, "the same series whatever the chunking");
  return 0;
}
