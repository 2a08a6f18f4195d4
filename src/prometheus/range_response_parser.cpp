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

// Which container the decoder is inside.
enum class RangeScope {
  kTop,       // the answer object
  kData,      // "data"
  kResult,    // "data"."result" when it is a list: one object per series
  kSeries,    // one series
  kMetric,    // a series' "metric": its labels
  kValues,    // a series' "values": its points
  kPoint,     // one [<time>, "<value>"] of "values"
  kWarnings,  // "warnings"
  kSkipped,   // anything else: only checked for JSON syntax and depth
};

// The member the next value belongs to, in a container whose members matter.
enum class RangeMember {
  kOther,
  kStatus,
  kErrorType,
  kError,
  kWarnings,
  kData,
  kResultType,
  kResult,
  kMetric,
  kValues,
  kHistograms,
};

// nlohmann SAX events to a RangeResult, without building a document (a range answer may hold
// millions of points). The checks and their order are those of parseQueryResponse: JSON syntax
// and depth first, then "status" (an error answer wins over a malformed "data"), then "data".
// Members may come in any order, so "result" is read as a matrix whatever "resultType" says and
// "resultType" is checked at the end. A repeated member replaces the earlier one.
// NOLINTBEGIN(readability-identifier-naming): nlohmann's SAX interface names these.
class RangeAnswerDecoder {
 public:
  using number_integer_t = nlohmann::json::number_integer_t;
  using number_unsigned_t = nlohmann::json::number_unsigned_t;
  using number_float_t = nlohmann::json::number_float_t;
  using string_t = nlohmann::json::string_t;
  using binary_t = nlohmann::json::binary_t;

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
      case RangeScope::kTop:
        member_ = name == "status"      ? RangeMember::kStatus
                  : name == "errorType" ? RangeMember::kErrorType
                  : name == "error"     ? RangeMember::kError
                  : name == "warnings"  ? RangeMember::kWarnings
                  : name == "data"      ? RangeMember::kData
                                        : RangeMember::kOther;
        break;
      case RangeScope::kData:
        member_ = name == "resultType" ? RangeMember::kResultType
                  : name == "result"   ? RangeMember::kResult
                                       : RangeMember::kOther;
        break;
      case RangeScope::kSeries:
        member_ = name == "metric"       ? RangeMember::kMetric
                  : name == "values"     ? RangeMember::kValues
                  : name == "histograms" ? RangeMember::kHistograms
                                         : RangeMember::kOther;
        break;
      case RangeScope::kMetric:
        label_name_ = name;
        break;
      default:
        member_ = RangeMember::kOther;
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception& e) {
    fatal_ = std::string("cannot decode Prometheus answer: ") + e.what();
    return false;
  }

  // The answer, once the parser has returned; throws PrometheusError when it is not one.
  RangeResult finish() {
    if (fatal_) throw PrometheusError(PrometheusError::Kind::kBadResponse, 0, *fatal_);
    if (!top_is_object_) unexpected("not a JSON object");
    if (!status_) unexpected("no status");
    if (*status_ == "error") {
      nlohmann::json error_document = nlohmann::json::object();
      if (error_type_) error_document["errorType"] = *error_type_;
      if (error_) error_document["error"] = *error_;
      throw PrometheusError(PrometheusError::Kind::kApiError, 0, apiErrorText(error_document));
    }
    if (*status_ != "success") unexpected("status \"" + sanitizeLine(*status_, 64) + "\"");
    if (!data_is_object_) unexpected("no data object");
    if (!result_type_) unexpected("no resultType");
    if (!has_result_) unexpected("no result");
    if (*result_type_ != "matrix") {
      unexpected("resultType \"" + sanitizeLine(*result_type_, 64) +
                 R"(" where a range query answers "matrix")");
    }

    RangeResult out;
    out.warnings = std::move(warnings_);
    if (result_token_ == JsonToken::kNull) return out;
    if (result_token_ != JsonToken::kArray) unexpected("matrix result is not a list");
    if (matrix_error_) throw badResponse(*matrix_error_);
    out.series = std::move(series_);
    out.bad_samples = bad_samples_;
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
    const RangeScope closed = scopes_.back();
    scopes_.pop_back();
    if (closed == RangeScope::kPoint) finishPoint();
    if (closed == RangeScope::kSeries) finishSeries();
    return true;
  }

  // Takes in the next value of the current container; the scope to enter when it is one.
  RangeScope take(JsonToken token) {
    if (scopes_.empty()) {
      top_is_object_ = token == JsonToken::kObject;
      return top_is_object_ ? RangeScope::kTop : RangeScope::kSkipped;
    }
    switch (scopes_.back()) {
      case RangeScope::kTop:
        return takeTopMember(token);
      case RangeScope::kData:
        return takeDataMember(token);
      case RangeScope::kResult:
        if (token == JsonToken::kObject) {
          startSeries();
          return RangeScope::kSeries;
        }
        noteMatrixError(unexpectedAnswerText("matrix element is not an object"));
        return RangeScope::kSkipped;
      case RangeScope::kSeries:
        return takeSeriesMember(token);
      case RangeScope::kMetric:
        if (token == JsonToken::kString) {
          series_entry_.labels.insert_or_assign(series_entry_.labels.end(), label_name_, *text_);
        } else if (!metric_error_) {
          metric_error_ = unexpectedAnswerText("label \"" + sanitizeLine(label_name_, 64) +
                                               "\" is not a string");
        }
        return RangeScope::kSkipped;
      case RangeScope::kValues:
        point_.reset(token == JsonToken::kArray);
        if (token == JsonToken::kArray) return RangeScope::kPoint;
        finishPoint();  // not a pair: finishPoint reports it
        return RangeScope::kSkipped;
      case RangeScope::kPoint:
        point_.add(token, number_, text_);
        return RangeScope::kSkipped;
      case RangeScope::kWarnings:
        if (token == JsonToken::kString) warnings_.push_back(*text_);
        return RangeScope::kSkipped;
      case RangeScope::kSkipped:
        return RangeScope::kSkipped;
    }
    return RangeScope::kSkipped;
  }

  std::optional<std::string> textOf(JsonToken token) const {
    if (token == JsonToken::kString) return *text_;
    return std::nullopt;
  }

  RangeScope takeTopMember(JsonToken token) {
    switch (member_) {
      case RangeMember::kStatus:
        status_ = textOf(token);
        break;
      case RangeMember::kErrorType:
        error_type_ = textOf(token);
        break;
      case RangeMember::kError:
        error_ = textOf(token);
        break;
      case RangeMember::kWarnings:
        warnings_.clear();
        if (token == JsonToken::kArray) return RangeScope::kWarnings;
        break;
      case RangeMember::kData:
        data_is_object_ = token == JsonToken::kObject;
        result_type_.reset();
        has_result_ = false;
        if (data_is_object_) return RangeScope::kData;
        break;
      default:
        break;
    }
    return RangeScope::kSkipped;
  }

  RangeScope takeDataMember(JsonToken token) {
    if (member_ == RangeMember::kResultType) {
      result_type_ = textOf(token);
    } else if (member_ == RangeMember::kResult) {
      has_result_ = true;
      result_token_ = token;
      series_.clear();
      bad_samples_ = 0;
      matrix_error_.reset();
      if (token == JsonToken::kArray) return RangeScope::kResult;
    }
    return RangeScope::kSkipped;
  }

  RangeScope takeSeriesMember(JsonToken token) {
    switch (member_) {
      case RangeMember::kMetric:
        series_entry_.labels.clear();
        metric_error_.reset();
        if (token == JsonToken::kObject) return RangeScope::kMetric;
        if (token != JsonToken::kNull) {
          metric_error_ = unexpectedAnswerText("series labels are not an object");
        }
        break;
      case RangeMember::kValues:
        has_values_ = true;
        series_entry_.times.clear();
        series_entry_.values.clear();
        series_bad_samples_ = 0;
        if (token == JsonToken::kArray) return RangeScope::kValues;
        noteMatrixError(unexpectedAnswerText("series values are not a list"));
        break;
      case RangeMember::kHistograms:
        has_histograms_ = true;
        break;
      default:
        break;
    }
    return RangeScope::kSkipped;
  }

  void startSeries() {
    series_entry_ = RangeSeries{};
    metric_error_.reset();
    has_values_ = false;
    has_histograms_ = false;
    series_bad_samples_ = 0;
  }

  void finishPoint() {
    if (matrix_error_) return;  // the answer fails anyway: keep no more points
    double time = 0;
    double value = 0;
    if (auto error = point_.read(time, value)) return noteMatrixError(*error);
    if (!point_.servableTime()) {
      ++series_bad_samples_;
      return;
    }
    series_entry_.times.push_back(time);
    series_entry_.values.push_back(value);
  }

  void finishSeries() {
    if (!has_values_) {
      // A series of native-histogram points only has "histograms": it has no float points to
      // offer, so it is left out rather than failing the whole answer.
      if (!has_histograms_) noteMatrixError(unexpectedAnswerText("matrix series has no values"));
      return;
    }
    if (metric_error_) return noteMatrixError(*metric_error_);
    if (matrix_error_) return;
    bad_samples_ += series_bad_samples_;
    series_.push_back(std::move(series_entry_));
  }

  // The first bad series or point is the one reported.
  void noteMatrixError(std::string message) {
    if (!matrix_error_) matrix_error_ = std::move(message);
    series_.clear();
    series_entry_ = RangeSeries{};
  }

  std::vector<RangeScope> scopes_;
  RangeMember member_ = RangeMember::kOther;
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

  std::vector<RangeSeries> series_;
  std::size_t bad_samples_ = 0;  // points of series_ left out for their time
  std::optional<std::string> matrix_error_;

  RangeSeries series_entry_;  // the series being read
  std::string label_name_;
  std::optional<std::string> metric_error_;
  bool has_values_ = false;
  bool has_histograms_ = false;
  std::size_t series_bad_samples_ = 0;
  SamplePair point_;
};
// NOLINTEND(readability-identifier-naming)

}  // namespace

RangeResult parseRangeResponse(std::string_view body) {
  RangeAnswerDecoder decoder;
  nlohmann::json::sax_parse(body.begin(), body.end(), &decoder);
  return decoder.finish();
}

}  // namespace metrics_adapter::prometheus
