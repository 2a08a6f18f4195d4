#include "config/value_checks.h"

#include <re2/re2.h>

#include <cstdint>
#include <limits>
#include <utility>

#include "metrics_adapter/config/config.h"

namespace metrics_adapter::config {

std::optional<std::string> regexProblem(const std::string& pattern, int* groups) {
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 regex(pattern, options);
  if (!regex.ok()) return "invalid regex \"" + pattern + "\": " + regex.error();
  if (groups != nullptr) *groups = regex.NumberOfCapturingGroups();
  return std::nullopt;
}

std::optional<std::string> durationProblem(std::string_view text) {
  std::string problem;
  if (parseDuration(text, &problem)) return std::nullopt;
  return problem;
}

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text,
                                                       std::string* problem) {
  auto refuse = [&](std::string why) -> std::optional<std::chrono::milliseconds> {
    if (problem != nullptr) *problem = std::move(why);
    return std::nullopt;
  };
  if (text.empty()) return refuse("empty duration string");
  if (text == "0") return std::chrono::milliseconds(0);
  static const RE2 kDuration(
      "(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?");
  re2::StringPiece parts[7];
  if (!RE2::FullMatch(text, kDuration, nullptr, &parts[0], nullptr, &parts[1], nullptr, &parts[2],
                      nullptr, &parts[3], nullptr, &parts[4], nullptr, &parts[5], nullptr,
                      &parts[6])) {
    return refuse("not a valid duration string: \"" + std::string(text) + "\"");
  }
  // Milliseconds per unit, y w d h m s ms; the total must fit Go's time.Duration (int64 ns).
  constexpr std::int64_t kUnitMillis[7] = {365LL * 24 * 3600 * 1000,
                                           7LL * 24 * 3600 * 1000,
                                           24LL * 3600 * 1000,
                                           3600LL * 1000,
                                           60LL * 1000,
                                           1000,
                                           1};
  constexpr std::int64_t kMaxMillis = std::numeric_limits<std::int64_t>::max() / 1'000'000;
  std::int64_t total = 0;
  for (int i = 0; i < 7; ++i) {
    if (parts[i].empty()) continue;
    std::int64_t count = 0;
    for (char digit : parts[i]) {
      if (count > kMaxMillis) break;
      count = count * 10 + (digit - '0');
    }
    if (count > kMaxMillis / kUnitMillis[i] || total > kMaxMillis - count * kUnitMillis[i]) {
      return refuse("duration out of range: \"" + std::string(text) + "\"");
    }
    total += count * kUnitMillis[i];
  }
  return std::chrono::milliseconds(total);
}

std::optional<std::chrono::milliseconds> prometheusDuration(std::string_view text) {
  return parseDuration(text);
}

}  // namespace metrics_adapter::config
