#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_client.h"
#include "prometheus/response_parsing.h"
#include "prometheus/sample_pair.h"

namespace metrics_adapter::prometheus {
namespace {

using Json = nlohmann::json;

// Which container the decoder is inside.
enum class Scope {
  kTop,       // the answer object
  kData,      // "data"
  kResult,    // "data"."result" when it is a list: vector elements, or a scalar's pair
  kElement,   // one vector element
  kMetric,    // an element's "metric": its labels
  kPair,      // an element's "value"
  kWarnings,  // "warnings"
  kSkipped,   // anything else: only checked for JSON syntax and depth
};

// The member the next value belongs to, in a container whose members matter.
enum class Member {
  kOther,
  kStatus,
  kErrorType,
  kError,
  kWarnings,
  kData,
  kResultType,
  kResult,
  kMetric,
  kValue,
  kHistogram,
};

// nlohmann SAX events to a QueryResult, without building a document. The checks and their
// order are those of reading a whole document: a JSON syntax error or too deep a nesting is
// reported first, then "status" (an error answer wins over a malformed "data"), then "data".
// Members may come in any order, so the result list is read both as vector elements and as a
// scalar's pair, and "resultType" picks one at the end. A repeated member replaces the earlier
// one, as it would in a document.
// NOLINTBEGIN(readability-identifier-naming): nlohmann's SAX interface names these.
class QueryAnswerDecoder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

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
      case Scope::kTop:
        member_ = name == "status"      ? Member::kStatus
                  : name == "errorType" ? Member::kErrorType
                  : name == "error"     ? Member::kError
                  : name == "warnings"  ? Member::kWarnings
                  : name == "data"      ? Member::kData
                                        : Member::kOther;
        break;
      case Scope::kData:
        member_ = name == "resultType" ? Member::kResultType
                  : name == "result"   ? Member::kResult
                                       : Member::kOther;
        break;
      case Scope::kElement:
        member_ = name == "metric"      ? Member::kMetric
                  : name == "value"     ? Member::kValue
                  : name == "histogram" ? Member::kHistogram
                                        : Member::kOther;
        break;
      case Scope::kMetric:
        label_name_ = name;
        break;
      default:
        member_ = Member::kOther;
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const Json::exception& e) {
    fatal_ = std::string("cannot decode Prometheus answer: ") + e.what();
    return false;
  }

  // The answer, once the parser has returned; throws PrometheusError when it is not one.
  QueryResult finish() {
    if (fatal_) throw PrometheusError(PrometheusError::Kind::kBadResponse, 0, *fatal_);
    if (!top_is_object_) unexpected("not a JSON object");
    if (!status_) unexpected("no status");
    if (*status_ == "error") {
      Json error_document = Json::object();
      if (error_type_) error_document["errorType"] = *error_type_;
      if (error_) error_document["error"] = *error_;
      throw PrometheusError(PrometheusError::Kind::kApiError, 0, apiErrorText(error_document));
    }
    if (*status_ != "success") unexpected("status \"" + sanitizeLine(*status_, 64) + "\"");
    if (!data_is_object_) unexpected("no data object");
    if (!result_type_) unexpected("no resultType");
    if (!has_result_) unexpected("no result");

    QueryResult out;
    out.warnings = std::move(warnings_);
    if (*result_type_ == "vector") {
      out.type = QueryResult::Type::kVector;
      if (result_token_ != JsonToken::kNull) {
        if (result_token_ != JsonToken::kArray) unexpected("vector result is not a list");
        if (vector_error_) throw badResponse(*vector_error_);
        out.samples = std::move(samples_);
        out.bad_samples = bad_samples_;
      }
    } else if (*result_type_ == "scalar") {
      out.type = QueryResult::Type::kScalar;
      Sample sample;
      if (auto error = scalar_pair_.read(sample.timestamp, sample.value)) throw badResponse(*error);
      if (scalar_pair_.servableTime()) {
        out.samples.push_back(std::move(sample));
      } else {
        ++out.bad_samples;
      }
    } else if (*result_type_ == "matrix") {
      out.type = QueryResult::Type::kMatrix;
    } else if (*result_type_ == "string") {
      out.type = QueryResult::Type::kString;
    } else {
      unexpected("resultType \"" + sanitizeLine(*result_type_, 64) + "\"");
    }
    return out;
  }

 private:
  static PrometheusError badResponse(const std::string& message) {
    return PrometheusError(PrometheusError::Kind::kBadResponse, 0, message);
  }

  [[noreturn]] static void unexpected(const std::string& why) {
    throw badResponse(unexpectedAnswerText(why));
  }

  // JSON nested deeper than any Prometheus answer stops the parser, so that a hostile answer
  // costs neither stack nor memory.
  bool withinDepth() {
    if (scopes_.size() <= kMaxJsonDepth) return true;
    fatal_ = "cannot decode Prometheus answer: JSON nested deeper than " +
             std::to_string(kMaxJsonDepth) + " levels";
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
    const Scope closed = scopes_.back();
    scopes_.pop_back();
    if (closed == Scope::kElement) finishElement();
    return true;
  }

  // Takes in the next value of the current container; the scope to enter when it is one.
  Scope take(JsonToken token) {
    if (scopes_.empty()) {
      top_is_object_ = token == JsonToken::kObject;
      return top_is_object_ ? Scope::kTop : Scope::kSkipped;
    }
    switch (scopes_.back()) {
      case Scope::kTop:
        return takeTopMember(token);
      case Scope::kData:
        return takeDataMember(token);
      case Scope::kResult:
        scalar_pair_.add(token, number_, text_);
        if (token == JsonToken::kObject) {
          startElement();
          return Scope::kElement;
        }
        noteVectorError(unexpectedAnswerText("vector element is not an object"));
        return Scope::kSkipped;
      case Scope::kElement:
        return takeElementMember(token);
      case Scope::kMetric:
        if (token == JsonToken::kString) {
          sample_.labels.insert_or_assign(sample_.labels.end(), label_name_, *text_);
        } else if (!metric_error_) {
          metric_error_ = unexpectedAnswerText("label \"" + sanitizeLine(label_name_, 64) +
                                               "\" is not a string");
        }
        return Scope::kSkipped;
      case Scope::kPair:
        value_pair_.add(token, number_, text_);
        return Scope::kSkipped;
      case Scope::kWarnings:
        if (token == JsonToken::kString) warnings_.push_back(*text_);
        return Scope::kSkipped;
      case Scope::kSkipped:
        return Scope::kSkipped;
    }
    return Scope::kSkipped;
  }

  std::optional<std::string> textOf(JsonToken token) const {
    if (token == JsonToken::kString) return *text_;
    return std::nullopt;
  }

  Scope takeTopMember(JsonToken token) {
    switch (member_) {
      case Member::kStatus:
        status_ = textOf(token);
        break;
      case Member::kErrorType:
        error_type_ = textOf(token);
        break;
      case Member::kError:
        error_ = textOf(token);
        break;
      case Member::kWarnings:
        warnings_.clear();
        if (token == JsonToken::kArray) return Scope::kWarnings;
        break;
      case Member::kData:
        data_is_object_ = token == JsonToken::kObject;
        result_type_.reset();
        has_result_ = false;
        if (data_is_object_) return Scope::kData;
        break;
      default:
        break;
    }
    return Scope::kSkipped;
  }

  Scope takeDataMember(JsonToken token) {
    if (member_ == Member::kResultType) {
      result_type_ = textOf(token);
    } else if (member_ == Member::kResult) {
      has_result_ = true;
      result_token_ = token;
      samples_.clear();
      bad_samples_ = 0;
      vector_error_.reset();
      scalar_pair_.reset(token == JsonToken::kArray);
      if (token == JsonToken::kArray) return Scope::kResult;
    }
    return Scope::kSkipped;
  }

  Scope takeElementMember(JsonToken token) {
    switch (member_) {
      case Member::kMetric:
        sample_.labels.clear();
        metric_error_.reset();
        if (token == JsonToken::kObject) return Scope::kMetric;
        if (token != JsonToken::kNull)
          metric_error_ = unexpectedAnswerText("sample labels are not an object");
        break;
      case Member::kValue:
        has_value_ = true;
        value_pair_.reset(token == JsonToken::kArray);
        if (token == JsonToken::kArray) return Scope::kPair;
        break;
      case Member::kHistogram:
        has_histogram_ = true;
        break;
      default:
        break;
    }
    return Scope::kSkipped;
  }

  void startElement() {
    sample_ = Sample{};
    metric_error_.reset();
    has_value_ = false;
    has_histogram_ = false;
  }

  void finishElement() {
    if (!has_value_) {
      // Native-histogram samples carry "histogram" instead of "value"; they have no single
      // number to offer, so they are left out rather than failing the whole answer.
      if (!has_histogram_) noteVectorError(unexpectedAnswerText("vector element has no value"));
      return;
    }
    if (metric_error_) return noteVectorError(*metric_error_);
    if (auto error = value_pair_.read(sample_.timestamp, sample_.value))
      return noteVectorError(*error);
    if (!value_pair_.servableTime()) {
      ++bad_samples_;
      return;
    }
    if (!vector_error_) samples_.push_back(std::move(sample_));
  }

  // The first bad element is the one reported.
  void noteVectorError(std::string message) {
    if (!vector_error_) vector_error_ = std::move(message);
  }

  std::vector<Scope> scopes_;
  Member member_ = Member::kOther;
  const std::string* text_ = nullptr;  // the current string value, during string()
  double number_ = 0;                  // the current number value, during number_*()
  std::optional<std::string> fatal_;

  bool top_is_object_ = false;
  std::optional<std::string> status_;
  std::optional<std::string> error_type_;
  std::optional<std::string> error_;
  std::vector<std::string> warnings_;
  bool data_is_object_ = false;
  std::optional<std::string> result_type_;
  bool has_result_ = false;
  JsonToken result_token_ = JsonToken::kNull;

  std::vector<Sample> samples_;
  std::size_t bad_samples_ = 0;  // elements left out for their time
  std::optional<std::string> vector_error_;
  SamplePair scalar_pair_;

  Sample sample_;
  std::string label_name_;
  std::optional<std::string> metric_error_;
  SamplePair value_pair_;
  bool has_value_ = false;
  bool has_histogram_ = false;
};
// NOLINTEND(readability-identifier-naming)

}  // namespace

QueryResult parseQueryResponse(std::string_view body) {
  QueryAnswerDecoder decoder;
  Json::sax_parse(body.begin(), body.end(), &decoder);
  return decoder.finish();
}

}  // namespace metrics_adapter::prometheus
