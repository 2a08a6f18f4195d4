#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace metrics_adapter::config {

// Why `pattern` is not a valid RE2 (Go syntax) regex, or nullopt. On success `*groups` (when
// given) receives the number of capturing groups.
std::optional<std::string> regexProblem(const std::string& pattern, int* groups = nullptr);

// Why `text` is not a Prometheus duration ("1h30m", "5m", "0"; units y w d h m s ms, integers,
// largest unit first, at most ~292 years), or nullopt.
std::optional<std::string> durationProblem(std::string_view text);

// The length of a Prometheus duration; nullopt (and the reason in `*problem`) when durationProblem
// would name one.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text,
                                                       std::string* problem = nullptr);

}  // namespace metrics_adapter::config
