#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"
#include "prometheus/series_stream_parser.h"

namespace metrics_adapter::prometheus {

// A push parser made for the one shape of a /api/v1/series answer: an object whose "data" is a
// list of flat objects of strings. It validates the whole input as JSON (RFC 8259, UTF-8) but
// decodes only what it keeps: top-level members it reads, metric names and label names; label
// values are checked and skipped. Input may arrive in chunks split anywhere, even inside an
// escape; the only memory that grows with the input is the text of the token being decoded and
// the nesting stack (bounded to 2^20 levels).
class SeriesScanner {
 public:
  // `visitor` is called for each series as soon as its object is complete; `on_token` after
  // every JSON token (keys, scalars, brackets). Both must outlive the scanner.
  SeriesScanner(const SeriesVisitor& visitor, const std::function<void()>& on_token);

  // Consumes the next bytes of the answer. Throws PrometheusError(kBadResponse) at the first
  // byte that makes the input something other than a series answer; exceptions thrown by the
  // visitor propagate unchanged. The scanner is unusable after a throw.
  void feed(std::string_view chunk);

  // The input ended. Throws PrometheusError: kBadResponse when it was incomplete or not a
  // successful series answer, kApiError for {"status":"error"}.
  SeriesAnswer finish();

 private:
  enum class Expect : std::uint8_t {
    kValue,         // after ':' or ',' in a list, and before the top-level value
    kValueOrClose,  // after '['
    kKeyOrClose,    // after '{'
    kKey,           // after ',' in an object
    kColon,         // after a key
    kCommaOrClose,  // after a value inside a container
    kEnd,           // after the top-level value: only whitespace may follow
  };
  enum class Lexeme : std::uint8_t { kNone, kString, kNumber, kLiteral };
  // What a string being read is, which decides where its text goes once it ends.
  enum class StringRole : std::uint8_t {
    kTopKey,
    kLabelKey,
    kSkippedKey,
    kTopValue,
    kMetricName,
    kLabelValue,
    kWarning,
    kSkippedValue,
  };

  const char* structural(const char* p);
  bool expectsLabelKey() const;
  const char* scanLabels(const char* p, const char* end);
  const char* scanString(const char* p, const char* end);
  const char* stringSlowByte(const char* p);
  void escapeByte(const char* p);
  void utf8Lead(const char* p);
  const char* scanNumber(const char* p, const char* end);
  const char* scanLiteral(const char* p, const char* end);

  void beginString(const char* p);
  void endString();
  void openContainer(bool is_object);
  void closeContainer();
  void endScalar(bool is_null);
  void valueDone();
  void appendCodePoint(std::uint32_t code_point);

  void tick() {
    if (has_token_hook_) on_token_();
  }
  [[noreturn]] void syntaxError(const char* p, std::string_view what) const;
  [[noreturn]] static void failTooManyLabels();
  [[noreturn]] static void fail(const std::string& message);

  const SeriesVisitor& visitor_;
  const std::function<void()>& on_token_;
  const bool has_token_hook_;

  // Where the current chunk starts, and how many bytes came before it: error offsets.
  const char* chunk_start_ = nullptr;
  std::size_t consumed_ = 0;

  Expect expect_ = Expect::kValue;
  Lexeme lexeme_ = Lexeme::kNone;
  std::vector<std::uint8_t> frames_;  // role | kObjectBit, innermost last

  // The string being read.
  StringRole string_role_ = StringRole::kSkippedValue;
  std::string* sink_ = nullptr;  // where decoded text goes; null when it is only checked
  std::uint8_t escape_ = 0;      // escape state; 0 outside escapes
  std::uint8_t hex_digits_ = 0;
  std::uint32_t code_unit_ = 0;
  std::uint32_t high_surrogate_ = 0;
  std::uint8_t utf8_needed_ = 0;  // continuation bytes still due
  std::uint8_t utf8_low_ = 0x80;
  std::uint8_t utf8_high_ = 0xBF;

  std::uint8_t number_state_ = 0;
  std::string_view literal_;
  std::size_t literal_matched_ = 0;

  // The answer so far.
  std::string top_key_;
  std::string top_text_;  // a top-level string value or a warning being read
  std::string metric_name_;
  std::string label_text_;     // this series' label names, back to back
  std::size_t key_start_ = 0;  // where the current label key starts in label_text_
  std::vector<std::pair<std::size_t, std::size_t>> label_spans_;
  std::vector<std::string_view> label_views_;
  std::optional<std::string> status_;
  std::optional<std::string> error_type_;
  std::optional<std::string> error_;
  SeriesAnswer answer_;
};

}  // namespace metrics_adapter::prometheus
