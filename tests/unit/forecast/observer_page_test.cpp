#include "metrics_adapter/forecast/observer_page.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::forecast {
namespace {

using std::chrono::sys_days;

// 2024-03-05 00:00:00 UTC.
std::chrono::system_clock::time_point observerTestStart() {
  return sys_days{std::chrono::year{2024} / std::chrono::March / 5};
}

ObservedSeries observerTestSeries(const std::vector<double>& actual,
                                  const std::vector<double>& forecast) {
  ObservedSeries series;
  series.labels = {{"namespace", "shop"}, {"pod", "web-1"}};
  series.why = "daily rhythm found in 7.0 days of history";
  for (std::size_t i = 0; i < actual.size(); ++i) {
    BacktestPoint point;
    point.index = i;
    point.actual = actual[i];
    point.forecast = forecast[i];
    point.actual_max = actual[i];
    series.replay.points.push_back(point);
  }
  series.replay.mape = 0.083;
  series.replay.under_forecast_ratio = 0.12;
  return series;
}

ObserverPageData observerTestPage(std::vector<ObservedSeries> series) {
  ObserverPageData data;
  data.rule = "http_requests_forecast";
  data.first_time = observerTestStart();
  data.step = std::chrono::seconds{60};
  data.horizon = std::chrono::seconds{600};
  data.series = std::move(series);
  return data;
}

// Well-formedness as far as a page of this shape needs it: every '<' opens a tag or a comment,
// every attribute value is double-quoted, and every element is closed in order (void elements
// and "/>" excepted). Returns the first problem, or "" when there is none.
std::string observerTestMarkupProblem(std::string_view html) {
  constexpr std::string_view kDoctype = "<!DOCTYPE html>";
  if (html.substr(0, kDoctype.size()) != kDoctype) return "no doctype";
  std::vector<std::string> open;
  std::size_t i = kDoctype.size();
  while ((i = html.find('<', i)) != std::string_view::npos) {
    const std::size_t end = html.find('>', i);
    if (end == std::string_view::npos) return "unterminated tag at " + std::to_string(i);
    std::string_view tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    // Text between tags: no raw '>' either (everything escaped).
    const std::size_t next = html.find('<', i);
    const std::string_view text =
        html.substr(i, next == std::string_view::npos ? html.size() - i : next - i);
    if (text.find('>') != std::string_view::npos)
      return "raw '>' in text after <" + std::string(tag) + ">";
    // Inside <style> the CSS is not markup; it holds no '<'.
    const bool closing = !tag.empty() && tag[0] == '/';
    if (closing) tag.remove_prefix(1);
    const bool self_closing = !tag.empty() && tag.back() == '/';
    if (self_closing) tag.remove_suffix(1);
    const std::size_t name_end = tag.find_first_of(" \n");
    const std::string name(tag.substr(0, name_end));
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0;
        })) {
      return "bad tag name <" + std::string(tag) + ">";
    }
    if (name_end != std::string_view::npos) {
      std::string_view attributes = tag.substr(name_end);
      for (std::size_t eq = attributes.find('='); eq != std::string_view::npos;
           eq = attributes.find('=', eq + 1)) {
        if (eq + 1 >= attributes.size() || attributes[eq + 1] != '"') {
          return "unquoted attribute in <" + std::string(tag) + ">";
        }
        const std::size_t close = attributes.find('"', eq + 2);
        if (close == std::string_view::npos) return "unterminated attribute";
        const std::string_view value = attributes.substr(eq + 2, close - eq - 2);
        if (value.find('<') != std::string_view::npos) return "raw '<' in an attribute";
        eq = close;
      }
    }
    if (closing) {
      if (open.empty() || open.back() != name) return "unbalanced </" + name + ">";
      open.pop_back();
    } else if (!self_closing && name != "meta") {
      open.push_back(name);
    }
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

std::size_t observerTestCount(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t i = text.find(needle); i != std::string_view::npos;
       i = text.find(needle, i + needle.size())) {
    ++count;
  }
  return count;
}

// The value of `attribute` in the first tag that contains `anchor` (an attribute="value" pair).
std::string observerTestAttribute(std::string_view html, std::string_view anchor,
                                  std::string_view attribute) {
  const std::size_t at = html.find(anchor);
  if (at == std::string_view::npos) return "<no " + std::string(anchor) + ">";
  const std::size_t tag_start = html.rfind('<', at);
  const std::size_t tag_end = html.find('>', at);
  const std::string_view tag = html.substr(tag_start, tag_end - tag_start);
  const std::string key = " " + std::string(attribute) + "=\"";
  const std::size_t value_at = tag.find(key);
  if (value_at == std::string_view::npos) return "<no " + std::string(attribute) + ">";
  const std::size_t value_start = value_at + key.size();
  return std::string(tag.substr(value_start, tag.find('"', value_start) - value_start));
}

// Writes the page to $OBSERVER_PAGE_DIR/<name>.html when that variable is set, to look at it.
void observerTestMaybeWrite(const std::string& name, const std::string& html) {
  const char* dir = std::getenv("OBSERVER_PAGE_DIR");
  if (dir == nullptr) return;
  std::ofstream(std::string(dir) + "/" + name + ".html", std::ios::binary) << html;
}

// A day-shaped demand: low at night, a peak in the afternoon, with a deterministic wobble.
double observerTestDemand(std::size_t minute) {
  const double day_fraction = static_cast<double>(minute % 1440) / 1440.0;
  const double wave = 0.5 - 0.5 * std::cos(2 * 3.14159265358979 * day_fraction);
  const double wobble = static_cast<double>((minute * 7919) % 53) - 26;
  return 200 + 1800 * wave * wave + wobble;
}

TEST(ObserverPageTest, WellFormedWithHeaderChartsAndTable) {
  std::vector<double> actual;
  std::vector<double> forecast;
  for (std::size_t i = 0; i < std::size_t{3} * 1440; ++i) {
    actual.push_back(observerTestDemand(i));
    forecast.push_back(observerTestDemand(i + 10) * 1.1);
  }
  ObserverPageData data = observerTestPage({observerTestSeries(actual, forecast)});
  data.target = 250;
  const std::string html = renderObserverPage(data);
  observerTestMaybeWrite("three_days", html);

  EXPECT_EQ(observerTestMarkupProblem(html), "");
  EXPECT_NE(html.find("<title>Forecast observer: http_requests_forecast</title>"),
            std::string::npos);
  EXPECT_NE(html.find("step <b>1m</b>"), std::string::npos);
  EXPECT_NE(html.find("horizon <b>10m</b>"), std::string::npos);
  EXPECT_NE(html.find("Demand: actual vs forecast"), std::string::npos);
  EXPECT_NE(html.find("Replicas: reactive vs forecast"), std::string::npos);
  EXPECT_EQ(observerTestCount(html, "<svg"), 2U);
  EXPECT_NE(html.find("{namespace=&quot;shop&quot;, pod=&quot;web-1&quot;}"), std::string::npos);
  EXPECT_NE(html.find("<td>8.3 %</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>12.0 %</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>daily rhythm found in 7.0 days of history</td>"), std::string::npos);
  EXPECT_NE(html.find(std::to_string(actual.size()) + " points"), std::string::npos);
  // Nothing fetched, nothing run.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // Three days, ticks every 12h: each day's date appears once, under its midnight tick.
  for (const char* day : {">Mar 5<", ">Mar 6<", ">Mar 7<"}) {
    EXPECT_NE(html.find(day), std::string::npos) << day;
  }
  EXPECT_EQ(renderObserverPage(data), html);  // deterministic
}

TEST(ObserverPageTest, EscapesRuleLabelsAndWhy) {
  ObservedSeries series = observerTestSeries({1, 2, 3}, {2, 3, 4});
  series.labels = {{"pod", "<script>alert('x')</script>"}, {"q", "a\"b&c>d"}, {"bad", "\xFF"}};
  series.why = "x < y & \"z\"";
  ObserverPageData data = observerTestPage({series});
  data.rule = "a<b>&'c'";
  const std::string html = renderObserverPage(data);
  observerTestMaybeWrite("escaping", html);

  EXPECT_EQ(observerTestMarkupProblem(html), "");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("a<b>"), std::string::npos);
  EXPECT_NE(html.find("Forecast observer: a&lt;b&gt;&amp;&#39;c&#39;</h1>"), std::string::npos);
  EXPECT_NE(html.find("pod=&quot;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;"),
            std::string::npos);
  // PromQL notation escapes the quote with a backslash, then HTML escapes both.
  EXPECT_NE(html.find("q=&quot;a\\&quot;b&amp;c&gt;d&quot;"), std::string::npos);
  EXPECT_NE(html.find("bad=&quot;\xEF\xBF\xBD&quot;"), std::string::npos);
  EXPECT_EQ(html.find('\xFF'), std::string::npos);
  EXPECT_NE(html.find("<td>x &lt; y &amp; &quot;z&quot;</td>"), std::string::npos);
}

TEST(ObserverPageTest, ReplicasComeFromPointsAndTarget) {
  const double target = 40;
  std::vector<double> actual;
  std::vector<double> forecast;
  for (std::size_t i = 0; i < 300; ++i) {
    actual.push_back(observerTestDemand(i * 5) / 7);
    forecast.push_back(observerTestDemand(i * 5 + 20) / 6);
  }
  double peak_reactive = 0;
  double peak_forecast = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    peak_reactive = std::max(peak_reactive, std::ceil(actual[i] / target));
    peak_forecast = std::max(peak_forecast, std::ceil(forecast[i] / target));
  }
  ASSERT_NE(peak_reactive, peak_forecast);  // the test tells the two apart
  ObserverPageData data = observerTestPage({observerTestSeries(actual, forecast)});
  data.target = target;
  const std::string html = renderObserverPage(data);

  const auto number = [](double value) { return std::to_string(static_cast<long long>(value)); };
  EXPECT_EQ(observerTestAttribute(html, "data-series=\"reactive\"", "data-max"),
            number(peak_reactive));
  EXPECT_EQ(observerTestAttribute(html, "data-chart=\"replicas\"", "data-chart"), "replicas");
  EXPECT_NE(html.find("<span data-peak-replicas=\"reactive\">" + number(peak_reactive) + "<"),
            std::string::npos);
  EXPECT_NE(html.find("<span data-peak-replicas=\"forecast\">" + number(peak_forecast) + "<"),
            std::string::npos);
  EXPECT_NE(html.find("ceil(actual / 40)"), std::string::npos);
  // Every point is drawn when the series is short.
  EXPECT_EQ(observerTestAttribute(html, "data-series=\"reactive\"", "data-points"),
            std::to_string(actual.size()));
}

// Scale to zero: the page says when the forecast, and the demand, would have moved a Deployment
// with minReplicas: 0 off 0 replicas (here 06:00 and 06:09 of the replayed day).
TEST(ObserverPageTest, SaysWhenTheDeploymentWouldHaveLeftZero) {
  std::vector<double> actual(24 * 60, 0);
  std::vector<double> forecast(24 * 60, 0);
  for (std::size_t minute = 360; minute < 1200; ++minute) forecast[minute] = 30;
  for (std::size_t minute = 369; minute < 1190; ++minute) actual[minute] = 30;
  ObserverPageData data = observerTestPage({observerTestSeries(actual, forecast)});
  data.target = 20;
  const std::string html = renderObserverPage(data);
  EXPECT_NE(html.find("<th scope=\"row\">Leaves 0 replicas</th><td>2024-03-05 06:00 UTC by the "
                      "forecast, 06:09 by the demand (9 min earlier)</td>"),
            std::string::npos);
  // A forecast that never serves 0 replicas (1 at night) never leaves 0: no such row.
  for (double& value : forecast) value += 1;
  data.series = {observerTestSeries(actual, forecast)};
  EXPECT_EQ(renderObserverPage(data).find("Leaves 0 replicas"), std::string::npos);
}

TEST(ObserverPageTest, TargetNotPositiveOrFiniteIsNotGiven) {
  for (const double target : {0.0, -5.0, std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity()}) {
    ObserverPageData data = observerTestPage({observerTestSeries({1, 2, 3}, {2, 3, 4})});
    data.target = target;
    const std::string html = renderObserverPage(data);
    EXPECT_EQ(html.find("data-chart=\"replicas\""), std::string::npos) << target;
    EXPECT_EQ(html.find("Peak replicas"), std::string::npos) << target;
    EXPECT_NE(html.find("data-chart=\"demand\""), std::string::npos) << target;
    EXPECT_EQ(observerTestMarkupProblem(html), "") << target;
  }
  const std::string without =
      renderObserverPage(observerTestPage({observerTestSeries({1, 2, 3}, {2, 3, 4})}));
  EXPECT_EQ(without.find("data-chart=\"replicas\""), std::string::npos);
}

TEST(ObserverPageTest, NoSeries) {
  const std::string html = renderObserverPage(observerTestPage({}));
  EXPECT_EQ(observerTestMarkupProblem(html), "");
  EXPECT_NE(html.find("No series"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
}

TEST(ObserverPageTest, SeriesWithoutPoints) {
  ObservedSeries series;
  series.labels = {{"pod", "idle"}};
  ObserverPageData data = observerTestPage({series});
  data.target = 10;
  const std::string html = renderObserverPage(data);
  EXPECT_EQ(observerTestMarkupProblem(html), "");
  EXPECT_NE(html.find("No replayed points"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("pod=&quot;idle&quot;"), std::string::npos);
}

TEST(ObserverPageTest, AllNaNPointsDrawNothing) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ObservedSeries series = observerTestSeries({nan, nan, nan}, {nan, nan, nan});
  series.replay.mape = nan;
  ObserverPageData data = observerTestPage({series});
  data.target = 10;
  const std::string html = renderObserverPage(data);
  EXPECT_EQ(observerTestMarkupProblem(html), "");
  EXPECT_NE(html.find("nothing to draw"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<td>n/a</td>"), std::string::npos);
}

TEST(ObserverPageTest, NaNPointsLeaveGapsAndNoNumbersFromThem) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  ObserverPageData data =
      observerTestPage({observerTestSeries({1, 2, nan, 4, 5}, {2, inf, 3, nan, 6})});
  data.target = 2;
  const std::string html = renderObserverPage(data);
  observerTestMaybeWrite("gaps", html);
  EXPECT_EQ(observerTestMarkupProblem(html), "");
  EXPECT_EQ(observerTestAttribute(html, "data-series=\"actual\"", "data-points"), "4");
  EXPECT_EQ(observerTestAttribute(html, "data-series=\"forecast\"", "data-points"), "3");
  EXPECT_EQ(observerTestAttribute(html, "data-series=\"actual\"", "data-max"), "5");
  // The gap starts a new subpath: two "M" in the actual line.
  const std::string path = observerTestAttribute(html, "data-series=\"actual\"", "d");
  EXPECT_EQ(observerTestCount(path, "M"), 2U) << path;
  EXPECT_EQ(html.find("nan"), std::string::npos);
  EXPECT_EQ(html.find("inf\""), std::string::npos);
}

TEST(ObserverPageTest, FlatAndSinglePointSeriesScaleWithoutDividingByZero) {
  for (const std::vector<double>& values :
       {std::vector<double>(50, 7.0), std::vector<double>(50, 0.0), std::vector<double>{3.0}}) {
    ObserverPageData data = observerTestPage({observerTestSeries(values, values)});
    data.target = 5;
    const std::string html = renderObserverPage(data);
    EXPECT_EQ(observerTestMarkupProblem(html), "");
    EXPECT_EQ(observerTestCount(html, "<svg"), 2U);
    EXPECT_EQ(html.find("nan"), std::string::npos) << values.size();
    EXPECT_EQ(html.find("NaN"), std::string::npos) << values.size();
    EXPECT_EQ(html.find("inf"), std::string::npos) << values.size();
    EXPECT_EQ(observerTestAttribute(html, "data-series=\"actual\"", "data-max"),
              values[0] == 0   ? "0"
              : values[0] == 7 ? "7"
                               : "3");
  }
}

TEST(ObserverPageTest, DownsamplingSevenDaysKeepsThePeakAndStaysSmall) {
  constexpr std::size_t kSteps = std::size_t{7} * 1440;
  constexpr std::size_t kPeakAt = 5003;  // not a bucket boundary for any small bucket width
  std::vector<double> actual;
  std::vector<double> forecast;
  for (std::size_t i = 0; i < kSteps; ++i) {
    actual.push_back(observerTestDemand(i));
    forecast.push_back(observerTestDemand(i + 10) * 1.05);
  }
  const double peak = 2.5 * *std::max_element(actual.begin(), actual.end());
  actual[kPeakAt] = peak;
  ObserverPageData data = observerTestPage({observerTestSeries(actual, forecast)});
  data.target = 100;
  const std::string html = renderObserverPage(data);
  observerTestMaybeWrite("seven_days", html);

  EXPECT_EQ(observerTestMarkupProblem(html), "");
  const int drawn = std::stoi(observerTestAttribute(html, "data-series=\"actual\"", "data-points"));
  EXPECT_LE(drawn, 1500);
  EXPECT_GE(drawn, 1000);
  EXPECT_EQ(std::stod(observerTestAttribute(html, "data-series=\"actual\"", "data-max")), peak);
  EXPECT_EQ(observerTestAttribute(html, "data-series=\"reactive\"", "data-max"),
            std::to_string(static_cast<long long>(std::ceil(peak / 100))));
  EXPECT_NE(html.find("each point is the maximum of its bucket"), std::string::npos);
  // One 7-day series at a 1-minute step, both charts.
  EXPECT_LT(html.size(), 160U * 1024) << html.size();
  for (const char* day : {">Mar 5<", ">Mar 8<", ">Mar 11<"}) {
    EXPECT_NE(html.find(day), std::string::npos) << day;
  }
}

TEST(ObserverPageTest, TimeTicksInUtcHoursForAShortReplay) {
  std::vector<double> values(180, 10.0);  // 3 hours from 00:00 UTC
  const std::string html =
      renderObserverPage(observerTestPage({observerTestSeries(values, values)}));
  for (const char* tick : {">00:00<", ">01:00<", ">02:00<"}) {
    EXPECT_NE(html.find(tick), std::string::npos) << tick;
  }
  EXPECT_NE(html.find(">Mar 5</tspan>"), std::string::npos);
}

TEST(ObserverPageTest, TimeTicksNoFinerThanAStep) {
  const std::string html =
      renderObserverPage(observerTestPage({observerTestSeries({1, 2, 3}, {2, 3, 4})}));
  for (const char* tick : {">00:00<", ">00:01<", ">00:02<"}) {
    EXPECT_NE(html.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(html.find(":15<"), std::string::npos);
  EXPECT_EQ(html.find(":30<"), std::string::npos);
}

TEST(ObserverPageTest, LeadTimeAndGeneratedAtWhenGiven) {
  ObservedSeries series = observerTestSeries({1, 2, 3}, {2, 3, 4});
  ObserverPageData data = observerTestPage({series});
  EXPECT_EQ(renderObserverPage(data).find("Median lead time"), std::string::npos);
  series.replay.lead_time_seconds = 210;
  series.replay.lead_times_seconds = {150, 210, 300};
  data = observerTestPage({series});
  data.generated_at = observerTestStart() + std::chrono::hours{30} + std::chrono::minutes{7};
  const std::string html = renderObserverPage(data);
  EXPECT_NE(html.find("<td>3.5 min (3 crossings)</td>"), std::string::npos);
  EXPECT_NE(html.find("generated 2024-03-06 06:07 UTC"), std::string::npos);
}

}  // namespace
}  // namespace metrics_adapter::forecast
