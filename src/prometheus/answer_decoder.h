#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"
#include "prometheus/answer_envelope.h"
#include "prometheus/response_parsing.h"
#include "prometheus/sample_pair.h"

namespace metrics_adapter::prometheus {

// Which container an answer decoder is inside. The containers under "data"."result" are named
// after Prometheus's data model, so that one list serves vector, scalar and matrix answers.
enum class AnswerScope : std::uint8_t {
  kTop,       // the answer object
  kData,      // "data"
  kWarnings,  // "warnings"
  kResult,    // "data"."result" when it is a list
  kItem,      // an object of that list: a vector's sample or a matrix's series
  kLabels,    // an item's "metric"
  kPoints,    // a list of pairs in an item: a matrix series' "values"
  kPair,      // [<time>, "<value>"]: a sample's "value", one of a series' "values"
  kSkipped,   // anything else: only checked for JSON syntax and depth
};

// The member the next value belongs to, in a container whose members matter.
enum class AnswerMember : std::uint8_t {
  kOther,
  kStatus,
  kErrorType,
  kError,
  kWarnings,
  kData,
  kResultType,
  kResult,
  kMetric,
  kValue,      // ResultShape::value_member
  kHistogram,  // ResultShape::histogram_member
};

// The names and messages that differ between the items of a vector and those of a matrix.
struct ResultShape {
  std::string_view value_member;      // the item's float point(s)
  std::string_view histogram_member;  // the item's native-histogram point(s)
  const char* item_not_object;        // the reasons of kBadResponse
  const char* labels_not_object;
  const char* no_value;
};

// nlohmann SAX events of a /api/v1/query or /api/v1/query_range answer to a result, without
// building a document (a range answer may hold millions of points). It reads the envelope,
// "data"."result"'s items and their "metric" labels; `Decoder` (CRTP) reads what its items hold
// and builds the result. The checks and their order are those of reading a whole document: a
// JSON syntax error or too deep a nesting is reported first, then the envelope, then the result.
//
// `Decoder` provides, to this class only:
//   static constexpr ResultShape kShape;
//   std::map<std::string, std::string>& labels();  // the current item's
//   SamplePair& pair();                             // the pair being read (kPair)
//   void startResult(JsonToken);    // "data"."result" begins, again when repeated
//   void startItem();               // an item begins
//   AnswerScope takeValue(JsonToken);  // the item's value_member; where to go inside it
//   void finishItem();              // an item ends that has a value and well-formed labels
//   auto makeResult(AnswerEnvelope&);  // the result of a checked envelope
// and may provide onResultEntry (every value of the result list), takePoint (every value of
// kPoints), onPairEnd (after a pair closes) and dropResult (after noteResultError, to free what
// the failed answer kept); the defaults here ignore them.
// NOLINTBEGIN(readability-identifier-naming): nlohmann's SAX interface names these.
template <class Decoder>
class AnswerDecoder {
 public:
  using number_integer_t = nlohmann::json::number_integer_t;
  using number_unsigned_t = nlohmann::json::number_unsigned_t;
  using number_float_t = nlohmann::json::number_float_t;
  using string_t = nlohmann::json::string_t;
  using binary_t = nlohmann::json::binary_t;

  // Decodes `body`; throws PrometheusError when it is not an answer of Decoder's kind.
  static auto decode(std::string_view body) {
    Decoder decoder;
    nlohmann::json::sax_parse(body.begin(), body.end(), &decoder);
    return decoder.finish();
  }

  bool null() { return value(JsonToken::kNull); }
  bool boolean(bool) { return value(JsonToken::kOther); }
  bool number_integer(number_integer_t number) { return numberValue(static_cast<double>(number)); }
  bool number_unsigned(number_unsigned_t number) {
    return numberValue(static_cast<double>(number));
  }
  bool number_float(number_float_t number, const string_t&) { return numberValue(number); }
  bool string(string_t& text) {
    text_ = &text;
    const bool ok = value(JsonToken::kString);
    text_ = nullptr;
    return ok;
  }
  bool binary(binary_t&) { return value(JsonToken::kOther); }

  bool start_object(std::size_t) { return open(JsonToken::kObject); }
  bool start_array(std::size_t) { return open(JsonToken::kArray); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& name) {
    if (!withinDepth()) return false;
    switch (scopes_.back()) {
      case AnswerScope::kTop:
        member_ = name == "status"      ? AnswerMember::kStatus
                  : name == "errorType" ? AnswerMember::kErrorType
                  : name == "error"     ? AnswerMember::kError
                  : name == "warnings"  ? AnswerMember::kWarnings
                  : name == "data"      ? AnswerMember::kData
                                        : AnswerMember::kOther;
        break;
      case AnswerScope::kData:
        member_ = name == "resultType" ? AnswerMember::kResultType
                  : name == "result"   ? AnswerMember::kResult
                                       : AnswerMember::kOther;
        break;
      case AnswerScope::kItem:
        member_ = name == "metric"                           ? AnswerMember::kMetric
                  : name == Decoder::kShape.value_member     ? AnswerMember::kValue
                  : name == Decoder::kShape.histogram_member ? AnswerMember::kHistogram
                                                             : AnswerMember::kOther;
        break;
      case AnswerScope::kLabels:
        label_name_ = name;
        break;
      default:
        member_ = AnswerMember::kOther;
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception& e) {
    fatal_ = std::string("cannot decode Prometheus answer: ") + e.what();
    return false;
  }

 protected:
  // The first bad item or pair of the result is the one reported.
  void noteResultError(std::string message) {
    if (!result_error_) result_error_ = std::move(message);
    decoder().dropResult();
  }
  const std::optional<std::string>& resultError() const { return result_error_; }

  // The current value when it is a number, a string (nullptr otherwise), for SamplePair::add.
  double number() const { return number_; }
  const std::string* text() const { return text_; }

  // Defaults of the optional hooks.
  void onResultEntry(JsonToken) {}
  AnswerScope takePoint(JsonToken) { return AnswerScope::kSkipped; }
  void onPairEnd() {}
  void dropResult() {}

 private:
  Decoder& decoder() { return static_cast<Decoder&>(*this); }

  // The answer, once the parser has returned; throws PrometheusError when it is not one.
  auto finish() {
    if (fatal_) throw badAnswer(*fatal_);
    envelope_.check();
    return decoder().makeResult(envelope_);
  }

  // JSON nested deeper than any Prometheus answer stops the parser, so that a hostile answer
  // costs neither stack nor memory.
  bool withinDepth() {
    if (scopes_.size() <= kMaxJsonDepth) return true;
    fatal_ = tooDeepAnswerText();
    return false;
  }

  bool numberValue(double number) {
    number_ = number;
    return value(JsonToken::kNumber);
  }

  bool value(JsonToken token) {
    if (!withinDepth()) return false;
    take(token);
    return true;
  }

  bool open(JsonToken token) {
    if (!withinDepth()) return false;
    scopes_.push_back(take(token));
    return true;
  }

  bool close() {
    const AnswerScope closed = scopes_.back();
    scopes_.pop_back();
    if (closed == AnswerScope::kPair) decoder().onPairEnd();
    if (closed == AnswerScope::kItem) finishItem();
    return true;
  }

  // Takes in the next value of the current container; the scope to enter when it is one.
  AnswerScope take(JsonToken token) {
    if (scopes_.empty()) {
      envelope_.top_is_object = token == JsonToken::kObject;
      return envelope_.top_is_object ? AnswerScope::kTop : AnswerScope::kSkipped;
    }
    switch (scopes_.back()) {
      case AnswerScope::kTop:
        return takeTopMember(token);
      case AnswerScope::kData:
        return takeDataMember(token);
      case AnswerScope::kWarnings:
        if (token == JsonToken::kString) envelope_.warnings.push_back(*text_);
        return AnswerScope::kSkipped;
      case AnswerScope::kResult:
        decoder().onResultEntry(token);
        if (token == JsonToken::kObject) {
          startItem();
          return AnswerScope::kItem;
        }
        noteResultError(unexpectedAnswerText(Decoder::kShape.item_not_object));
        return AnswerScope::kSkipped;
      case AnswerScope::kItem:
        return takeItemMember(token);
      case AnswerScope::kLabels:
        takeLabel(token);
        return AnswerScope::kSkipped;
      case AnswerScope::kPoints:
        return decoder().takePoint(token);
      case AnswerScope::kPair:
        decoder().pair().add(token, number_, text_);
        return AnswerScope::kSkipped;
      case AnswerScope::kSkipped:
        return AnswerScope::kSkipped;
    }
    return AnswerScope::kSkipped;
  }

  std::optional<std::string> textOf(JsonToken token) const {
    if (token == JsonToken::kString) return *text_;
    return std::nullopt;
  }

  AnswerScope takeTopMember(JsonToken token) {
    switch (member_) {
      case AnswerMember::kStatus:
        envelope_.status = textOf(token);
        break;
      case AnswerMember::kErrorType:
        envelope_.error_type = textOf(token);
        break;
      case AnswerMember::kError:
        envelope_.error = textOf(token);
        break;
      case AnswerMember::kWarnings:
        envelope_.warnings.clear();
        if (token == JsonToken::kArray) return AnswerScope::kWarnings;
        break;
      case AnswerMember::kData:
        envelope_.data_is_object = token == JsonToken::kObject;
        envelope_.result_type.reset();
        envelope_.has_result = false;
        if (envelope_.data_is_object) return AnswerScope::kData;
        break;
      default:
        break;
    }
    return AnswerScope::kSkipped;
  }

  AnswerScope takeDataMember(JsonToken token) {
    if (member_ == AnswerMember::kResultType) {
      envelope_.result_type = textOf(token);
    } else if (member_ == AnswerMember::kResult) {
      envelope_.has_result = true;
      envelope_.result = token;
      result_error_.reset();
      decoder().startResult(token);
      if (token == JsonToken::kArray) return AnswerScope::kResult;
    }
    return AnswerScope::kSkipped;
  }

  AnswerScope takeItemMember(JsonToken token) {
    switch (member_) {
      case AnswerMember::kMetric:
        decoder().labels().clear();
        labels_error_.reset();
        if (token == JsonToken::kObject) return AnswerScope::kLabels;
        if (token != JsonToken::kNull) {
          labels_error_ = unexpectedAnswerText(Decoder::kShape.labels_not_object);
        }
        break;
      case AnswerMember::kValue:
        has_value_ = true;
        return decoder().takeValue(token);
      case AnswerMember::kHistogram:
        has_histogram_ = true;
        break;
      default:
        break;
    }
    return AnswerScope::kSkipped;
  }

  void takeLabel(JsonToken token) {
    auto& labels = decoder().labels();
    if (token == JsonToken::kString) {
      labels.insert_or_assign(labels.end(), label_name_, *text_);
    } else if (!labels_error_) {
      labels_error_ =
          unexpectedAnswerText("label \"" + sanitizeLine(label_name_, 64) + "\" is not a string");
    }
  }

  void startItem() {
    labels_error_.reset();
    has_value_ = false;
    has_histogram_ = false;
    decoder().startItem();
  }

  void finishItem() {
    if (!has_value_) {
      // An item of native-histogram points only has the histogram member: it has no float
      // points to offer, so it is left out rather than failing the whole answer.
      if (!has_histogram_) noteResultError(unexpectedAnswerText(Decoder::kShape.no_value));
      return;
    }
    if (labels_error_) return noteResultError(*labels_error_);
    decoder().finishItem();
  }

  std::vector<AnswerScope> scopes_;
  AnswerMember member_ = AnswerMember::kOther;
  const std::string* text_ = nullptr;  // the current string value, during string()
  double number_ = 0;                  // the current number value, during number_*()
  std::optional<std::string> fatal_;
  AnswerEnvelope envelope_;
  std::optional<std::string> result_error_;

  std::string label_name_;
  std::optional<std::string> labels_error_;
  bool has_value_ = false;
  bool has_histogram_ = false;
};
// NOLINTEND(readability-identifier-naming)

}  // namespace metrics_adapter::prometheus
