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

// The result of an instant query: vector elements {"metric": {...}, "value": [<time>, "<v>"]},
// or a scalar's single pair. Members may come in any order, so the result list is read both as
// vector elements and as a scalar's pair, and "resultType" picks one at the end.
class QueryAnswerDecoder : public AnswerDecoder<QueryAnswerDecoder> {
  friend class AnswerDecoder<QueryAnswerDecoder>;

  static constexpr ResultShape kShape{
      .value_member = "value",
      .histogram_member = "histogram",
      .item_not_object = "vector element is not an object",
      .labels_not_object = "sample labels are not an object",
      .no_value = "vector element has no value",
  };

  std::map<std::string, std::string>& labels() { return sample_.labels; }
  SamplePair& pair() { return value_pair_; }

  void startResult(JsonToken token) {
    samples_.clear();
    bad_samples_ = 0;
    scalar_pair_.reset(token == JsonToken::kArray);
  }

  // A scalar's result is one pair: the list's values are its time and value.
  void onResultEntry(JsonToken token) { scalar_pair_.add(token, number(), text()); }

  void startItem() { sample_ = Sample{}; }

  AnswerScope takeValue(JsonToken token) {
    value_pair_.reset(token == JsonToken::kArray);
    return token == JsonToken::kArray ? AnswerScope::kPair : AnswerScope::kSkipped;
  }

  void finishItem() {
    if (auto error = value_pair_.read(sample_.timestamp, sample_.value)) {
      return noteResultError(*error);
    }
    if (!value_pair_.servableTime()) {
      ++bad_samples_;
      return;
    }
    if (!resultError()) samples_.push_back(std::move(sample_));
  }

  QueryResult makeResult(AnswerEnvelope& envelope) {
    QueryResult out;
    out.warnings = std::move(envelope.warnings);
    const std::string& type = *envelope.result_type;
    if (type == "vector") {
      out.type = QueryResult::Type::kVector;
      if (envelope.result != JsonToken::kNull) {
        if (envelope.result != JsonToken::kArray)
          throwUnexpectedAnswer("vector result is not a list");
        if (resultError()) throw badAnswer(*resultError());
        out.samples = std::move(samples_);
        out.bad_samples = bad_samples_;
      }
    } else if (type == "scalar") {
      out.type = QueryResult::Type::kScalar;
      Sample sample;
      if (auto error = scalar_pair_.read(sample.timestamp, sample.value)) throw badAnswer(*error);
      if (scalar_pair_.servableTime()) {
        out.samples.push_back(std::move(sample));
      } else {
        ++out.bad_samples;
      }
    } else if (type == "matrix") {
      out.type = QueryResult::Type::kMatrix;
    } else if (type == "string") {
      out.type = QueryResult::Type::kString;
    } else {
      throwUnexpectedAnswer("resultType \"" + sanitizeLine(type, 64) + "\"");
    }
    return out;
  }

  std::vector<Sample> samples_;
  std::size_t bad_samples_ = 0;  // elements left out for their time
  SamplePair scalar_pair_;

  Sample sample_;  // the element being read
  SamplePair value_pair_;
};

}  // namespace

QueryResult parseQueryResponse(std::string_view body) { return QueryAnswerDecoder::decode(body); }

}  // namespace metrics_adapter::prometheus
