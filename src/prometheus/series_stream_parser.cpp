#include "prometheus/series_stream_parser.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "prometheus/response_parsing.h"

namespace metrics_adapter::prometheus {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxLabelsPerSeries = 10000;
// A series answer nests three levels, but unknown members are skipped whatever their depth;
// this only bounds the stacks of scopes (here and in the JSON parser) to a few MiB.
constexpr std::size_t kMaxDepth = std::size_t{1} << 20;
constexpr std::size_t kMaxWarningsKept = 20;
constexpr std::size_t kMaxKeptTextBytes = 4096;

// Which container the parser is inside.
enum class Scope {
  kTop,       // the answer object
  kData,      // the "data" list
  kSeries,    // one series object in "data"
  kWarnings,  // the "warnings" list
  kSkipped,   // anything else: ignored whole
};

class SeriesSaxHandler final : public nlohmann::json_sax<Json> {
 public:
  SeriesSaxHandler(const SeriesVisitor& visitor, const std::function<void()>& on_token)
      : visitor_(visitor), on_token_(on_token) {}

  bool null() override { return scalar(nullptr, /*is_null=*/true); }
  bool boolean(bool) override { return scalar(nullptr, false); }
  bool number_integer(number_integer_t) override { return scalar(nullptr, false); }
  bool number_unsigned(number_unsigned_t) override { return scalar(nullptr, false); }
  bool number_float(number_float_t, const string_t&) override { return scalar(nullptr, false); }
  bool string(string_t& value) override { return scalar(&value, false); }
  bool binary(binary_t&) override { return scalar(nullptr, false); }

  bool start_object(std::size_t) override { return open(/*is_object=*/true); }
  bool start_array(std::size_t) override { return open(/*is_object=*/false); }

  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& name) override {
    tick();
    if (scopes_.back() == Scope::kTop) {
      top_key_ = std::move(name);
    } else if (scopes_.back() == Scope::kSeries) {
      label_key_ = std::move(name);
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return fail(std::string("cannot decode Prometheus series answer: ") + e.what());
  }

  // Checks the answer as a whole once parsing succeeded.
  SeriesAnswer finish() {
    if (!status_) {
      fail("unexpected Prometheus series answer: no status");
      throwIfFailed();  // fail() only records; *status_ below needs a status
    }
    if (*status_ == "error") {
      Json error_document = Json::object();
      if (error_type_) error_document["errorType"] = *error_type_;
      if (error_) error_document["error"] = *error_;
      throw PrometheusError(PrometheusError::Kind::kApiError, 0, apiErrorText(error_document));
    }
    if (*status_ != "success") {
      fail("unexpected Prometheus series answer: status \"" + sanitizeLine(*status_, 64) + "\"");
    }
    throwIfFailed();
    return std::move(answer_);
  }

  void throwIfFailed() const {
    if (error_message_) {
      throw PrometheusError(PrometheusError::Kind::kBadResponse, 0, *error_message_);
    }
  }

 private:
  bool fail(std::string message) {
    if (!error_message_) error_message_ = std::move(message);
    return false;
  }

  void tick() {
    if (on_token_) on_token_();
  }

  bool open(bool is_object) {
    tick();
    if (scopes_.size() >= kMaxDepth) {
      return fail("cannot decode Prometheus series answer: JSON nested deeper than " +
                  std::to_string(kMaxDepth) + " levels");
    }
    if (scopes_.empty()) {
      if (!is_object) return fail("unexpected Prometheus series answer: not a JSON object");
      scopes_.push_back(Scope::kTop);
      return true;
    }
    switch (scopes_.back()) {
      case Scope::kTop:
        if (top_key_ == "data") {
          if (is_object) return fail("unexpected Prometheus series answer: data is not a list");
          scopes_.push_back(Scope::kData);
        } else if (top_key_ == "warnings" && !is_object) {
          scopes_.push_back(Scope::kWarnings);
        } else {
          scopes_.push_back(Scope::kSkipped);
        }
        return true;
      case Scope::kData:
        if (!is_object)
          return fail("unexpected Prometheus series answer: a series is not an object");
        scopes_.push_back(Scope::kSeries);
        metric_name_.clear();
        label_names_.clear();
        return true;
      case Scope::kSeries:
        return fail("unexpected Prometheus series answer: a label value is not a string");
      case Scope::kWarnings:
      case Scope::kSkipped:
        scopes_.push_back(Scope::kSkipped);
        return true;
    }
    return true;
  }

  bool close() {
    tick();
    const Scope closed = scopes_.back();
    scopes_.pop_back();
    if (closed == Scope::kSeries) {
      label_views_.assign(label_names_.begin(), label_names_.end());
      visitor_(metric_name_, label_views_);
      ++answer_.series;
    }
    return true;
  }

  bool scalar(string_t* text, bool is_null) {
    tick();
    if (scopes_.empty()) return fail("unexpected Prometheus series answer: not a JSON object");
    switch (scopes_.back()) {
      case Scope::kTop:
        if (top_key_ == "data") {
          // data: null is what Prometheus sends when nothing matched.
          return is_null ? true : fail("unexpected Prometheus series answer: data is not a list");
        }
        if (text == nullptr) return true;
        if (top_key_ == "status") status_ = sanitizeLine(*text, kMaxKeptTextBytes);
        if (top_key_ == "errorType") error_type_ = text->substr(0, kMaxKeptTextBytes);
        if (top_key_ == "error") error_ = text->substr(0, kMaxKeptTextBytes);
        return true;
      case Scope::kData:
        return fail("unexpected Prometheus series answer: a series is not an object");
      case Scope::kSeries:
        if (text == nullptr) {
          return fail("unexpected Prometheus series answer: a label value is not a string");
        }
        if (label_key_ == "__name__") {
          metric_name_ = std::move(*text);
        } else {
          if (label_names_.size() >= kMaxLabelsPerSeries) {
            return fail("unexpected Prometheus series answer: a series has more than " +
                        std::to_string(kMaxLabelsPerSeries) + " labels");
          }
          label_names_.push_back(std::move(label_key_));
        }
        return true;
      case Scope::kWarnings:
        if (text != nullptr && answer_.warnings.size() < kMaxWarningsKept) {
          answer_.warnings.push_back(sanitizeLine(*text, kMaxKeptTextBytes));
        }
        return true;
      case Scope::kSkipped:
        return true;
    }
    return true;
  }

  const SeriesVisitor& visitor_;
  const std::function<void()>& on_token_;
  std::vector<Scope> scopes_;
  std::string top_key_;
  std::string label_key_;
  std::string metric_name_;
  std::vector<std::string> label_names_;  // reused from series to series
  std::vector<std::string_view> label_views_;
  std::optional<std::string> status_;
  std::optional<std::string> error_type_;
  std::optional<std::string> error_;
  std::optional<std::string> error_message_;
  SeriesAnswer answer_;
};

}  // namespace

SeriesAnswer parseSeriesStream(std::istream& in, const SeriesVisitor& visitor,
                               const std::function<void()>& on_token) {
  SeriesSaxHandler handler(visitor, on_token);
  const bool complete = Json::sax_parse(in, &handler, Json::input_format_t::json, true);
  handler.throwIfFailed();
  if (!complete) {
    throw PrometheusError(PrometheusError::Kind::kBadResponse, 0,
                          "cannot decode Prometheus series answer");
  }
  return handler.finish();
}

}  // namespace metrics_adapter::prometheus
