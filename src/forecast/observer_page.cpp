#include "metrics_adapter/forecast/observer_page.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "forecast/observer_page_template.h"
#include "forecast/page_template.h"
#include "metrics_adapter/forecast/wake_ups.h"
#include "metrics_adapter/text/utf8.h"

namespace metrics_adapter::forecast {
namespace {

// At most this many points per drawn line: a 7-day replay at a 1-minute step (10080 points) is
// drawn as 1500 buckets of 7 steps each, each bucket's maximum, so a one-step peak stays visible.
constexpr std::size_t kObserverMaxDrawnPoints = 1500;

// Values beyond this magnitude (1e308, DCGM sentinels near 9.2e18 are fine) are drawn at it, so
// that axis arithmetic (hi - lo) never overflows to infinity.
constexpr double kObserverMaxDrawnMagnitude = 1e300;

constexpr std::string_view kObserverActualColour = "#1f6fd1";
constexpr std::string_view kObserverForecastColour = "#1e9e4a";

constexpr std::array<std::string_view, 12> kObserverMonthNames = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Geometry of one chart, in SVG user units.
struct ObserverChartFrame {
  double width = 960;
  double height = 300;
  double left = 64;
  double right = 32;
  double top = 36;
  double bottom = 46;

  double plotWidth() const { return width - left - right; }
  double plotHeight() const { return height - top - bottom; }
};

// HTML text and attribute escaping (attributes are always double-quoted). Bytes that are not
// well-formed UTF-8 and control characters other than tab and newline become U+FFFD, so a label
// value from Prometheus cannot break the page's encoding.
void appendObserverEscaped(std::string& out, std::string_view text) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = text::utf8SequenceLength(text, i);
    if (length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (length > 1) {
      const std::string_view sequence = text.substr(i, length);
      // C1 controls (U+0080..U+009F) are encoded as C2 80..C2 9F.
      if (sequence[0] == '\xC2' && static_cast<unsigned char>(sequence[1]) < 0xA0) {
        out += kReplacement;
      } else {
        out += sequence;
      }
      i += length;
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == '\x7F') {
          out += kReplacement;
        } else {
          out += c;
        }
    }
  }
}

std::string observerEscaped(std::string_view text) {
  std::string out;
  appendObserverEscaped(out, text);
  return out;
}

using ObserverAttributes = std::initializer_list<std::pair<std::string_view, std::string_view>>;

void appendObserverAttributes(std::string& out, std::string_view name,
                              ObserverAttributes attributes) {
  out += '<';
  out += name;
  for (const auto& [key, value] : attributes) {
    out += ' ';
    out += key;
    out += "=\"";
    appendObserverEscaped(out, value);
    out += '"';
  }
}

// <name key="value" ...>, every value escaped: the one way this page writes a start tag.
void appendObserverOpen(std::string& out, std::string_view name, ObserverAttributes attributes) {
  appendObserverAttributes(out, name, attributes);
  out += '>';
}

// <name key="value" .../> (SVG elements without content), then a newline.
void appendObserverEmpty(std::string& out, std::string_view name, ObserverAttributes attributes) {
  appendObserverAttributes(out, name, attributes);
  out += "/>\n";
}

// Shortest text that reads back as `value` (for data attributes tests and tools can read).
std::string observerExactNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return {buffer.data(), result.ptr};
}

// `value` with `decimals` digits after the point; locale-independent.
std::string observerFixed(double value, int decimals) {
  if (!std::isfinite(value)) return observerExactNumber(value);
  std::array<char, 400> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::fixed, decimals);
  if (result.ec != std::errc{}) return observerExactNumber(value);
  std::string text(buffer.data(), result.ptr);
  if (text == "-0" || text == "-0.0") text.erase(0, 1);
  return text;
}

// Compact: three significant digits with k, M, G, T, P, E suffixes (1250 -> "1.25k").
std::string observerCompact(double value) {
  if (!std::isfinite(value)) return observerExactNumber(value);
  if (value == 0) return "0";
  constexpr std::array<std::string_view, 7> kSuffixes = {"", "k", "M", "G", "T", "P", "E"};
  double scaled = value;
  std::size_t suffix = 0;
  while (std::fabs(scaled) >= 999.5 && suffix + 1 < kSuffixes.size()) {
    scaled /= 1000;
    ++suffix;
  }
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), scaled,
                                    std::chars_format::general, 3);
  std::string text(buffer.data(), result.ptr);
  text += kSuffixes[suffix];
  return text;
}

// "90s", "10m", "1h30m", "7d".
std::string observerDuration(std::chrono::seconds duration) {
  std::int64_t left = duration.count();
  if (left == 0) return "0s";
  std::string out;
  if (left < 0) {
    out += '-';
    left = -left;
  }
  constexpr std::array<std::pair<std::int64_t, char>, 4> kUnits = {
      {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}}};
  for (const auto& [unit_seconds, unit] : kUnits) {
    if (left >= unit_seconds) {
      out += std::to_string(left / unit_seconds);
      out += unit;
      left %= unit_seconds;
    }
  }
  return out;
}

std::string observerTwoDigits(unsigned value) {
  std::string text = std::to_string(value);
  if (text.size() < 2) text.insert(0, "0");
  return text;
}

// Seconds since the epoch, in a range every calendar conversion handles.
bool observerTimeInRange(double epoch_seconds) {
  return std::isfinite(epoch_seconds) && std::fabs(epoch_seconds) < 1e11;
}

struct ObserverCalendar {
  std::chrono::year_month_day date;
  std::int64_t second_of_day = 0;
};

ObserverCalendar observerCalendar(double epoch_seconds) {
  const std::chrono::sys_seconds time{
      std::chrono::seconds{static_cast<std::int64_t>(std::floor(epoch_seconds))}};
  const auto day = std::chrono::floor<std::chrono::days>(time);
  return {std::chrono::year_month_day{day}, (time - day).count()};
}

// "Mar 5".
std::string observerShortDate(const std::chrono::year_month_day& date) {
  const unsigned month = static_cast<unsigned>(date.month());
  std::string text(kObserverMonthNames[(month + 11) % 12]);
  text += ' ';
  text += std::to_string(static_cast<unsigned>(date.day()));
  return text;
}

// "2024-03-05 14:00 UTC" style, without the zone.
std::string observerDateTime(double epoch_seconds) {
  if (!observerTimeInRange(epoch_seconds)) return "?";
  const ObserverCalendar calendar = observerCalendar(epoch_seconds);
  std::string text = std::to_string(static_cast<int>(calendar.date.year()));
  text += '-';
  text += observerTwoDigits(static_cast<unsigned>(calendar.date.month()));
  text += '-';
  text += observerTwoDigits(static_cast<unsigned>(calendar.date.day()));
  text += ' ';
  text += observerTwoDigits(static_cast<unsigned>(calendar.second_of_day / 3600));
  text += ':';
  text += observerTwoDigits(static_cast<unsigned>(calendar.second_of_day / 60 % 60));
  return text;
}

double observerEpochSeconds(std::chrono::system_clock::time_point time) {
  return std::chrono::duration<double>(time.time_since_epoch()).count();
}

// Everything a chart needs to place a replayed step index on the time axis.
struct ObserverTimeAxis {
  double first_index = 0;     // left edge, as a step index
  double last_index = 1;      // right edge; > first_index
  double origin_seconds = 0;  // epoch seconds of index 0
  double step_seconds = 60;

  double secondsAt(double index) const { return origin_seconds + index * step_seconds; }
};

// One drawn point: the largest finite value among the steps [first, last] of a bucket.
struct ObserverBucket {
  double first = 0;
  double last = 0;
  double peak_index = 0;
  double peak = 0;
};

// A line as drawn: one entry per bucket, nullopt where the bucket has no finite value (a gap).
struct ObserverLine {
  std::vector<std::optional<ObserverBucket>> buckets;
  std::size_t drawn = 0;
  std::optional<double> maximum;
  std::optional<double> minimum;
};

template <typename ValueOf>
ObserverLine observerDownsample(const std::vector<BacktestPoint>& points, std::size_t first,
                                std::size_t last, ValueOf value_of) {
  const std::size_t span = last - first;
  const std::size_t width = span / kObserverMaxDrawnPoints + 1;
  const std::size_t count = span / width + 1;
  ObserverLine line;
  line.buckets.resize(count);
  for (const BacktestPoint& point : points) {
    const double raw = value_of(point);
    if (!std::isfinite(raw)) continue;
    const double value = std::clamp(raw, -kObserverMaxDrawnMagnitude, kObserverMaxDrawnMagnitude);
    const std::size_t slot = (point.index - first) / width;
    std::optional<ObserverBucket>& bucket = line.buckets[slot];
    const auto index = static_cast<double>(point.index);
    // Ties go to the earlier step, whatever the order of `points`.
    if (!bucket || value > bucket->peak || (value == bucket->peak && index < bucket->peak_index)) {
      const std::size_t bucket_first = first + slot * width;
      const std::size_t bucket_last = std::min(last, bucket_first + (width - 1));
      bucket = ObserverBucket{static_cast<double>(bucket_first), static_cast<double>(bucket_last),
                              index, value};
    }
  }
  for (const auto& bucket : line.buckets) {
    if (!bucket) continue;
    ++line.drawn;
    line.maximum = std::max(line.maximum.value_or(bucket->peak), bucket->peak);
    line.minimum = std::min(line.minimum.value_or(bucket->peak), bucket->peak);
  }
  return line;
}

// A "nice" tick spacing (1, 2 or 5 times a power of ten) near `raw`.
double observerNiceStep(double raw) {
  if (!(raw > 0) || !std::isfinite(raw)) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  if (fraction <= 1) return magnitude;
  if (fraction <= 2) return 2 * magnitude;
  if (fraction <= 5) return 5 * magnitude;
  return 10 * magnitude;
}

struct ObserverValueAxis {
  double low = 0;
  double high = 1;
  double tick = 1;
};

// The value axis for lines whose drawn values span [minimum, maximum]: it includes 0 (demand
// and replicas are read against zero), and a flat series still gets a non-empty range.
ObserverValueAxis observerValueAxis(double minimum, double maximum, bool integral) {
  double low = std::min(0.0, minimum);
  double high = std::max(0.0, maximum);
  if (high - low <= 0) high = low + 1;
  double tick = observerNiceStep((high - low) / 5);
  if (integral) tick = std::max(1.0, std::round(tick));
  ObserverValueAxis axis;
  axis.tick = tick;
  axis.low = std::floor(low / tick) * tick;
  axis.high = std::ceil(high / tick) * tick;
  if (axis.high <= axis.low) axis.high = axis.low + tick;
  return axis;
}

// Time tick spacing: the smallest of these, and no finer than a step, that gives at most 8
// ticks.
double observerTimeTick(double span_seconds, double step_seconds) {
  constexpr std::array<double, 20> kCandidates = {
      1,    5,    10,   15,    30,    60,    120,   300,    600,    900,
      1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600};
  for (const double candidate : kCandidates) {
    if (candidate >= step_seconds && span_seconds / candidate <= 8) return candidate;
  }
  return std::max(step_seconds, observerNiceStep(span_seconds / 8 / 86400) * 86400);
}

class ObserverSvg {
 public:
  ObserverSvg(std::string& out, const ObserverChartFrame& frame, const ObserverTimeAxis& time,
              const ObserverValueAxis& value)
      : out_(out), frame_(frame), time_(time), value_(value) {}

  double x(double index) const {
    return frame_.left + (index - time_.first_index) / (time_.last_index - time_.first_index) *
                             frame_.plotWidth();
  }

  double y(double value) const {
    return frame_.top + (value_.high - value) / (value_.high - value_.low) * frame_.plotHeight();
  }

  void open(std::string_view chart, std::string_view label) {
    const std::string view_box =
        "0 0 " + observerFixed(frame_.width, 0) + " " + observerFixed(frame_.height, 0);
    appendObserverOpen(out_, "svg",
                       {{"xmlns", "http://www.w3.org/2000/svg"},
                        {"class", "chart"},
                        {"viewBox", view_box},
                        {"role", "img"},
                        {"aria-label", label},
                        {"data-chart", chart}});
    out_ += '\n';
  }

  void close() { out_ += "</svg>\n"; }

  void valueGrid(std::string_view axis_title) {
    const double count = std::round((value_.high - value_.low) / value_.tick);
    for (int k = 0; k <= static_cast<int>(count) && k <= 20; ++k) {
      const double value = value_.low + k * value_.tick;
      const std::string y_text = observerFixed(y(value), 1);
      appendObserverEmpty(out_, "line",
                          {{"class", "grid"},
                           {"x1", observerFixed(frame_.left, 1)},
                           {"x2", observerFixed(frame_.left + frame_.plotWidth(), 1)},
                           {"y1", y_text},
                           {"y2", y_text}});
      appendObserverOpen(out_, "text",
                         {{"class", "tick"},
                          {"text-anchor", "end"},
                          {"x", observerFixed(frame_.left - 6, 1)},
                          {"y", observerFixed(y(value) + 4, 1)}});
      appendObserverEscaped(out_, observerCompact(value));
      out_ += "</text>\n";
    }
    const std::string transform =
        "translate(14 " + observerFixed(frame_.top + frame_.plotHeight() / 2, 1) + ") rotate(-90)";
    appendObserverOpen(
        out_, "text",
        {{"class", "axis-title"}, {"transform", transform}, {"text-anchor", "middle"}});
    appendObserverEscaped(out_, axis_title);
    out_ += "</text>\n";
  }

  void timeAxis() {
    const double bottom = frame_.top + frame_.plotHeight();
    appendObserverEmpty(out_, "line",
                        {{"class", "axis"},
                         {"x1", observerFixed(frame_.left, 1)},
                         {"x2", observerFixed(frame_.left + frame_.plotWidth(), 1)},
                         {"y1", observerFixed(bottom, 1)},
                         {"y2", observerFixed(bottom, 1)}});
    const double start = time_.secondsAt(time_.first_index);
    const double end = time_.secondsAt(time_.last_index);
    if (observerTimeInRange(start) && observerTimeInRange(end) && end > start) {
      const double tick = observerTimeTick(end - start, time_.step_seconds);
      std::optional<std::chrono::year_month_day> previous_date;
      for (double t = std::ceil(start / tick) * tick; t <= end; t += tick) {
        const double index = (t - time_.origin_seconds) / time_.step_seconds;
        const std::string x_text = observerFixed(x(index), 1);
        const ObserverCalendar calendar = observerCalendar(t);
        appendObserverEmpty(out_, "line",
                            {{"class", "grid"},
                             {"x1", x_text},
                             {"x2", x_text},
                             {"y1", observerFixed(frame_.top, 1)},
                             {"y2", observerFixed(bottom + 4, 1)}});
        appendObserverOpen(out_, "text",
                           {{"class", "tick"},
                            {"text-anchor", "middle"},
                            {"x", x_text},
                            {"y", observerFixed(bottom + 17, 1)}});
        if (tick >= 86400) {
          out_ += observerShortDate(calendar.date);
        } else {
          const auto hours = static_cast<unsigned>(calendar.second_of_day / 3600);
          const auto minutes = static_cast<unsigned>(calendar.second_of_day / 60 % 60);
          out_ += observerTwoDigits(hours);
          out_ += ':';
          out_ += observerTwoDigits(minutes);
          if (tick < 60) {
            out_ += ':';
            out_ += observerTwoDigits(static_cast<unsigned>(calendar.second_of_day % 60));
          }
          if (previous_date != calendar.date) {
            appendObserverOpen(out_, "tspan", {{"class", "date"}, {"x", x_text}, {"dy", "14"}});
            out_ += observerShortDate(calendar.date);
            out_ += "</tspan>";
          }
        }
        previous_date = calendar.date;
        out_ += "</text>\n";
      }
    }
    appendObserverOpen(out_, "text",
                       {{"class", "axis-title"},
                        {"text-anchor", "end"},
                        {"x", observerFixed(frame_.left + frame_.plotWidth(), 1)},
                        {"y", observerFixed(frame_.height - 4, 1)}});
    out_ += "time (UTC)</text>\n";
  }

  // A legend entry in the top margin, entries laid out from the left.
  void legend(int slot, std::string_view colour, std::string_view label) {
    const double x0 = frame_.left + slot * 330.0;
    const double y0 = frame_.top - 16;
    appendObserverEmpty(out_, "line",
                        {{"x1", observerFixed(x0, 1)},
                         {"x2", observerFixed(x0 + 22, 1)},
                         {"y1", observerFixed(y0, 1)},
                         {"y2", observerFixed(y0, 1)},
                         {"stroke", colour},
                         {"stroke-width", "3"}});
    appendObserverOpen(
        out_, "text",
        {{"class", "legend"}, {"x", observerFixed(x0 + 28, 1)}, {"y", observerFixed(y0 + 4, 1)}});
    appendObserverEscaped(out_, label);
    out_ += "</text>\n";
  }

  // `step`: a step line (each bucket held from its first to its last step), else a line through
  // each bucket's peak.
  void line(const ObserverLine& line, std::string_view series, std::string_view colour, bool step) {
    std::string path;
    bool pen_down = false;
    std::size_t subpath_points = 0;
    // A lone point between gaps is a zero-length subpath: "h0" and the round line cap draw it
    // as a dot.
    const auto lift_pen = [&] {
      if (pen_down && subpath_points == 1 && !step) path += "h0";
      pen_down = false;
      subpath_points = 0;
    };
    for (const auto& bucket : line.buckets) {
      if (!bucket) {
        lift_pen();
        continue;
      }
      const std::string y_text = observerFixed(y(bucket->peak), 1);
      if (step) {
        if (pen_down) {
          path += 'V';
        } else {
          path += 'M';
          path += observerFixed(x(bucket->first), 1);
          path += ' ';
        }
        path += y_text;
        path += 'H';
        path += observerFixed(
            x(bucket->last + 1 <= time_.last_index ? bucket->last + 1 : bucket->last), 1);
      } else {
        path += pen_down ? 'L' : 'M';
        path += observerFixed(x(bucket->peak_index), 1);
        path += ' ';
        path += y_text;
      }
      pen_down = true;
      ++subpath_points;
    }
    lift_pen();
    appendObserverEmpty(
        out_, "path",
        {{"class", "line"},
         {"data-series", series},
         {"data-points", std::to_string(line.drawn)},
         {"data-max", line.maximum ? observerExactNumber(*line.maximum) : std::string("none")},
         {"stroke", colour},
         {"d", path}});
  }

 private:
  std::string& out_;
  const ObserverChartFrame& frame_;
  const ObserverTimeAxis& time_;
  const ObserverValueAxis& value_;
};

void appendObserverChart(std::string& out, std::string_view chart, std::string_view title,
                         const ObserverTimeAxis& time, const ObserverLine& actual,
                         const ObserverLine& forecast, bool integral, std::string_view actual_label,
                         std::string_view forecast_label, std::string_view value_title) {
  out += "<h3>";
  appendObserverEscaped(out, title);
  out += "</h3>\n";
  const double minimum = std::min(actual.minimum.value_or(0), forecast.minimum.value_or(0));
  const double maximum = std::max(actual.maximum.value_or(0), forecast.maximum.value_or(0));
  const ObserverValueAxis value = observerValueAxis(minimum, maximum, integral);
  const ObserverChartFrame frame;
  ObserverSvg svg(out, frame, time, value);
  svg.open(chart, title);
  svg.valueGrid(value_title);
  svg.timeAxis();
  // The actual line on top, so that where it is above the forecast (an under-forecast) it shows.
  svg.line(forecast, "forecast", kObserverForecastColour, integral);
  svg.line(actual, chart == "replicas" ? "reactive" : "actual", kObserverActualColour, integral);
  svg.legend(0, kObserverActualColour, actual_label);
  svg.legend(1, kObserverForecastColour, forecast_label);
  svg.close();
}

std::string observerPercent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  return observerFixed(fraction * 100, 1) + " %";
}

void appendObserverRow(std::string& out, std::string_view name, std::string_view value_html) {
  out += R"(<tr><th scope="row">)";
  appendObserverEscaped(out, name);
  out += "</th><td>";
  out += value_html;
  out += "</td></tr>\n";
}

// Scale to zero: when an HPA with minReplicas: 0 on the forecast would have left 0 replicas on
// each replayed night, and when one on the demand would have, e.g. "2026-11-27 05:52 UTC by the
// forecast, 06:01 by the demand (9 min earlier)"; "" when the forecast never served 0 replicas.
std::string wakeUpsText(const std::vector<BacktestPoint>& points, double target, double origin,
                        double step_seconds) {
  std::string text;
  for (const WakeUp& wake_up : wakeUps(points, target)) {
    const double at = origin + static_cast<double>(wake_up.forecast_index) * step_seconds;
    if (!text.empty()) text += "; ";
    text += observerDateTime(at) + " UTC by the forecast, ";
    if (!wake_up.reactive_index) {
      text += "not by the demand that night";
      continue;
    }
    const double demand_at = origin + static_cast<double>(*wake_up.reactive_index) * step_seconds;
    text += observerDateTime(demand_at).substr(11) + " by the demand";
    const double minutes = (demand_at - at) / 60;
    if (minutes > 0) {
      text += " (" + observerFixed(minutes, 0) + " min earlier)";
    } else if (minutes < 0) {
      text += " (" + observerFixed(-minutes, 0) + " min later)";
    } else {
      text += " (at the same step)";
    }
  }
  return text;
}

// Ours beside each simple method on the same replayed steps; the best simple method marked.
void appendObserverBaselines(std::string& out, const ObservedSeries& series) {
  if (series.baselines.empty()) return;
  const BaselineReplay* best = bestBaseline(series);
  const auto lead_text = [](const BacktestResult& replay) {
    return replay.lead_time_seconds ? observerFixed(*replay.lead_time_seconds / 60, 1) + " min"
                                    : std::string("n/a");
  };
  out += R"(<table class="baselines"><tr><th>method (same steps; the simple ones read at each )"
         R"(step with no lag, as a normal rule serves them)</th><th>MAPE</th>)"
         "<th>under-forecast</th><th>median lead</th></tr>\n";
  const auto row = [&](std::string_view key, const std::string& name, const BacktestResult& replay,
                       bool marked) {
    out += R"(<tr data-method=")";
    out += key;
    out += marked ? R"(" class="mark"><td>)" : R"("><td>)";
    appendObserverEscaped(out, name);
    out += "</td><td>";
    appendObserverEscaped(out, observerPercent(replay.mape));
    out += "</td><td>";
    appendObserverEscaped(out, observerPercent(replay.under_forecast_ratio));
    out += "</td><td>";
    appendObserverEscaped(out, lead_text(replay));
    out += "</td></tr>\n";
  };
  row("served", "served (ours)", series.replay, true);
  for (const BaselineReplay& baseline : series.baselines) {
    std::string name(methodTitle(baseline.method));
    if (&baseline == best) name += " (best simple method)";
    row(methodKey(baseline.method), name, baseline.replay, false);
  }
  out += "</table>\n";
}

void appendObserverSeries(std::string& out, const ObserverPageData& data,
                          const ObservedSeries& series, std::optional<double> target) {
  out += R"(<section class="series">)";
  out += "\n<h2>";
  appendObserverEscaped(out, labelSetText(series.labels));
  out += "</h2>\n";
  const auto& points = series.replay.points;
  const double step_seconds =
      std::max<double>(1, static_cast<double>(data.step.count()));  // a bad step still draws
  const double origin = observerEpochSeconds(data.first_time);

  std::size_t first = std::numeric_limits<std::size_t>::max();
  std::size_t last = 0;
  for (const BacktestPoint& point : points) {
    first = std::min(first, point.index);
    last = std::max(last, point.index);
  }

  std::optional<double> peak_reactive;
  std::optional<double> peak_forecast_replicas;
  const auto reactive_of = [&](const BacktestPoint& point) {
    return std::max(0.0, std::ceil(point.actual / *target));
  };
  const auto forecast_replicas_of = [&](const BacktestPoint& point) {
    return std::max(0.0, std::ceil(point.forecast / *target));
  };

  std::optional<ObserverLine> actual;
  std::optional<ObserverLine> forecast;
  std::optional<ObserverLine> reactive;
  std::optional<ObserverLine> forecast_replicas;
  if (!points.empty()) {
    actual = observerDownsample(points, first, last,
                                [](const BacktestPoint& point) { return point.actual; });
    forecast = observerDownsample(points, first, last,
                                  [](const BacktestPoint& point) { return point.forecast; });
    if (target) {
      reactive = observerDownsample(points, first, last, reactive_of);
      forecast_replicas = observerDownsample(points, first, last, forecast_replicas_of);
      peak_reactive = reactive->maximum;
      peak_forecast_replicas = forecast_replicas->maximum;
    }
  }

  out += R"(<table class="figures">)";
  out += '\n';
  if (points.empty()) {
    appendObserverRow(out, "Replayed", "no points");
  } else {
    const double from = origin + static_cast<double>(first) * step_seconds;
    const double to = origin + static_cast<double>(last) * step_seconds;
    appendObserverRow(out, "Replayed",
                      observerEscaped(observerDateTime(from) + " \u2013 " + observerDateTime(to) +
                                      " UTC, " + std::to_string(points.size()) + " points"));
  }
  appendObserverRow(out, "MAPE (vs actual max over the horizon)",
                    observerEscaped(observerPercent(series.replay.mape)));
  appendObserverRow(out, "Under-forecast (forecast below actual max)",
                    observerEscaped(observerPercent(series.replay.under_forecast_ratio)));
  if (series.replay.lead_time_seconds) {
    std::string lead = observerFixed(*series.replay.lead_time_seconds / 60, 1) + " min";
    lead += " (" + std::to_string(series.replay.lead_times_seconds.size()) + " crossings)";
    appendObserverRow(out, "Median lead time", observerEscaped(lead));
  }
  if (target && !points.empty()) {
    const auto text_of = [](std::optional<double> value) {
      return value ? observerExactNumber(*value) : std::string("n/a");
    };
    std::string peaks = R"(reactive <span data-peak-replicas="reactive">)";
    peaks += text_of(peak_reactive);
    peaks += R"(</span>, forecast <span data-peak-replicas="forecast">)";
    peaks += text_of(peak_forecast_replicas);
    peaks += "</span>";
    appendObserverRow(out, "Peak replicas", peaks);
    const std::string wake_ups = wakeUpsText(points, *target, origin, step_seconds);
    if (!wake_ups.empty()) appendObserverRow(out, "Leaves 0 replicas", observerEscaped(wake_ups));
  }
  appendObserverRow(out, "Serves now",
                    "<span data-method=\"" + std::string(methodKey(series.method)) + "\">" +
                        observerEscaped(std::string(methodTitle(series.method))) + "</span>");
  appendObserverRow(out, "Why",
                    series.why.empty() ? std::string("&#8212;") : observerEscaped(series.why));
  if (!series.sampling.empty())
    appendObserverRow(out, "Sampling", observerEscaped(series.sampling));
  if (!series.freshness.empty())
    appendObserverRow(out, "Latest value", observerEscaped(series.freshness));
  if (!series.served_steps.empty()) {
    std::string served;
    for (const auto& [method, steps] : series.served_steps) {
      if (!served.empty()) served += ", ";
      served += std::string(methodTitle(method)) + " " + std::to_string(steps);
    }
    appendObserverRow(out, "Replayed steps served by", observerEscaped(served));
  }
  out += "</table>\n";
  appendObserverBaselines(out, series);

  if (points.empty()) {
    out += R"(<p class="empty">No replayed points for this series: too little history, or )"
           "Prometheus had no values for it.</p>\n</section>\n";
    return;
  }
  if (!actual->maximum && !forecast->maximum) {
    out += R"(<p class="empty">Every replayed value of this series is NaN or infinite: )"
           "nothing to draw.</p>\n</section>\n";
    return;
  }

  ObserverTimeAxis time;
  time.origin_seconds = origin;
  time.step_seconds = step_seconds;
  time.first_index = static_cast<double>(first);
  time.last_index = static_cast<double>(last);
  if (first == last) {
    time.first_index -= 0.5;
    time.last_index += 0.5;
  }
  const std::string horizon = observerDuration(data.horizon);
  appendObserverChart(out, "demand", "Demand: actual vs forecast", time, *actual, *forecast, false,
                      "actual", "forecast (max over the next " + horizon + ")", "value");
  if (target) {
    const std::string target_text = observerCompact(*target);
    appendObserverChart(out, "replicas", "Replicas: reactive vs forecast", time, *reactive,
                        *forecast_replicas, true,
                        "reactive HPA: ceil(actual / " + target_text + ")",
                        "forecast: ceil(forecast / " + target_text + ")", "replicas");
  }
  const std::size_t span = last - first;
  const std::size_t width = span / kObserverMaxDrawnPoints + 1;
  if (width > 1) {
    out += R"(<p class="note">Drawn at )";
    appendObserverEscaped(out, observerDuration(std::chrono::seconds{static_cast<std::int64_t>(
                                   static_cast<double>(width) * step_seconds)}));
    out += " resolution: each point is the maximum of its bucket, so peaks are kept.</p>\n";
  }
  out += "</section>\n";
}

}  // namespace

const BaselineReplay* bestBaseline(const ObservedSeries& series) {
  const BaselineReplay* best = nullptr;
  for (const BaselineReplay& baseline : series.baselines) {
    if (!baseline.replay.points.empty() && (!best || baseline.replay.mape < best->replay.mape)) {
      best = &baseline;
    }
  }
  return best;
}

std::string renderObserverPage(const ObserverPageData& data) {
  const std::optional<double> target =
      data.target && std::isfinite(*data.target) && *data.target > 0 ? data.target : std::nullopt;
  std::string series;
  series.reserve(data.series.size() * 96 * 1024);
  for (const ObservedSeries& one : data.series) appendObserverSeries(series, data, one, target);
  std::string generated;
  if (data.generated_at) {
    generated = observerDateTime(observerEpochSeconds(*data.generated_at));
  }
  const std::map<std::string_view, std::string> values = {
      {"rule", observerEscaped(data.rule)},
      {"step", observerEscaped(observerDuration(data.step))},
      {"horizon", observerEscaped(observerDuration(data.horizon))},
      {"target", target ? observerEscaped(observerCompact(*target)) : ""},
      {"series_count", std::to_string(data.series.size())},
      {"generated", observerEscaped(generated)},
      {"no_series", data.series.empty() ? "yes" : ""},
      {"series", std::move(series)},
  };
  return fillPageTemplate(kObserverPageTemplate, values);
}

std::string labelSetText(const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return "{} (no labels)";
  std::string text = "{";
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) text += ", ";
    first = false;
    text += name;
    text += "=\"";
    for (const char c : value) {
      if (c == '"' || c == '\\') {
        text += '\\';
        text += c;
      } else if (c == '\n') {
        text += "\\n";
      } else {
        text += c;
      }
    }
    text += '"';
  }
  text += '}';
  return text;
}

}  // namespace metrics_adapter::forecast
