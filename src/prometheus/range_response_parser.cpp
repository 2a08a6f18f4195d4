#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_client.h"
#include "prometheus/answer_decoder.h"
#include "prometheus/sample_pair.h"

namespace metrics_adapter::prometheus {
namespace {

// The result of a range query: matrix series {"metric": {...}, "values": [[<time>, "<v>"], ...]}.
// Members may come in any order, so "result" is read as a matrix whatever "resultType" says and
// "resultType" is checked at the end.
class RangeAnswerDecoder : public AnswerDecoder<RangeAnswerDecoder> {
  friend class AnswerDecoder<RangeAnswerDecoder>;

  static constexpr ResultShape kShape{
      .value_member = "values",
      .histogram_member = "histograms",
      .item_not_object = "matrix element is not an object",
      .labels_not_object = "series labels are not an object",
      .no_value = "matrix series has no values",
  };

  std::map<std::string, std::string>& labels() { return series_entry_.labels; }
  SamplePair& pair() { return point_; }

  void startResult(JsonToken) {
    series_.clear();
    bad_samples_ = 0;
  }

  void startItem() {
    series_entry_ = RangeSeries{};
    series_bad_samples_ = 0;
  }

  AnswerScope takeValue(JsonToken token) {
    series_entry_.times.clear();
    series_entry_.values.clear();
    series_bad_samples_ = 0;
    if (token == JsonToken::kArray) return AnswerScope::kPoints;
    noteResultError(unexpectedAnswerText("series values are not a list"));
    return AnswerScope::kSkipped;
  }

  AnswerScope takePoint(JsonToken token) {
    point_.reset(token == JsonToken::kArray);
    if (token == JsonToken::kArray) return AnswerScope::kPair;
    onPairEnd();  // not a pair: onPairEnd reports it
    return AnswerScope::kSkipped;
  }

  void onPairEnd() {
    if (resultError()) return;  // the answer fails anyway: keep no more points
    double time = 0;
    double value = 0;
    if (auto error = point_.read(time, value)) return noteResultError(*error);
    if (!point_.servableTime()) {
      ++series_bad_samples_;
      return;
    }
    series_entry_.times.push_back(time);
    series_entry_.values.push_back(value);
  }

  void finishItem() {
    if (resultError()) return;
    bad_samples_ += series_bad_samples_;
    series_.push_back(std::move(series_entry_));
  }

  // A failed answer keeps nothing: a range answer may be large.
  void dropResult() {
    series_.clear();
    series_entry_ = RangeSeries{};
  }

  RangeResult makeResult(AnswerEnvelope& envelope) {
    if (*envelope.result_type != "matrix") {
      throwUnexpectedAnswer("resultType \"" + sanitizeLine(*envelope.result_type, 64) +
                            R"(" where a range query answers "matrix")");
    }
    RangeResult out;
    out.warnings = std::move(envelope.warnings);
    if (envelope.result == JsonToken::kNull) return out;
    if (envelope.result != JsonToken::kArray) throwUnexpectedAnswer("matrix result is not a list");
    if (resultError()) throw badAnswer(*resultError());
    out.series = std::move(series_);
    out.bad_samples = bad_samples_;
    return out;
  }

  std::vector<RangeSeries> series_;
  std::size_t bad_samples_ = 0;  // points of series_ left out for their time

  RangeSeries series_entry_;  // the series being read
  std::size_t series_bad_samples_ = 0;
  SamplePair point_;
};

}  // namespace

RangeResult parseRangeResponse(std::string_view body) { return RangeAnswerDecoder::decode(body); }

}  // namespace metrics_adapter::prometheus
