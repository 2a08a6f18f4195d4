#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "prometheus/response_parsing.h"

namespace metrics_adapter::prometheus {

// What a JSON value is, as far as the shape of a query answer cares (the SAX decoders of
// /api/v1/query and /api/v1/query_range answers).
enum class JsonToken { kNull, kNumber, kString, kOther, kObject, kArray };

// The message of a kBadResponse for an answer of the wrong shape.
inline std::string unexpectedAnswerText(const std::string& why) {
  return "unexpected Prometheus answer: " + why;
}

// [<unix seconds>, "<value>"], the shape of vector, scalar and matrix points, read one JSON value
// at a time.
class SamplePair {
 public:
  void reset(bool is_array) {
    shape_ok_ = is_array;
    count_ = 0;
    text_.clear();
  }

  // `text` is the value when `token` is a string, `number` when it is a number.
  void add(JsonToken token, double number, const std::string* text) {
    if (count_ == 0) {
      shape_ok_ = shape_ok_ && token == JsonToken::kNumber;
      time_ = number;
    } else if (count_ == 1) {
      shape_ok_ = shape_ok_ && token == JsonToken::kString;
      if (text != nullptr) text_ = *text;
    } else {
      shape_ok_ = false;
    }
    ++count_;
  }

  // Sets `time` and `value` (parseSampleValue: "NaN" and "±Inf" included); the reason when the
  // pair is not a sample, leaving both alone.
  std::optional<std::string> read(double& time, double& value) const {
    if (!shape_ok_ || count_ != 2) {
      return unexpectedAnswerText("a sample is not [<time>, \"<value>\"]");
    }
    const auto parsed = parseSampleValue(text_);
    if (!parsed) {
      return unexpectedAnswerText("sample value \"" + sanitizeLine(text_, 64) +
                                  "\" is not a number");
    }
    time = time_;
    value = *parsed;
    return std::nullopt;
  }

  // Whether the pair's time can be served (see isServableSampleTime); a pair that read() took
  // but whose time is not is a bad sample, left out.
  bool servableTime() const { return isServableSampleTime(time_); }

 private:
  bool shape_ok_ = false;
  std::size_t count_ = 0;
  double time_ = 0;
  std::string text_;
};

}  // namespace metrics_adapter::prometheus
