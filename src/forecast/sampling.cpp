#include "metrics_adapter/forecast/sampling.h"

#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <vector>

#include "forecast/robust_stats.h"

namespace metrics_adapter::forecast {

Sampling analyseSampling(std::span<const float> history) {
  Sampling sampling;
  std::vector<double> gaps;
  std::size_t finite = 0;
  std::size_t first = history.size();
  std::size_t previous_start = 0;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const float value = history[i];
    if (!std::isfinite(value)) continue;
    ++finite;
    if (first == history.size()) first = i;
    // A new sample: the first value, a value after an empty step, or a different value. A gauge
    // that repeats itself exactly looks coarser than it is, which only errs towards caution.
    const bool starts = i == first || !std::isfinite(history[i - 1]) || history[i - 1] != value;
    if (!starts) continue;
    if (sampling.samples > 0) gaps.push_back(static_cast<double>(i - previous_start));
    previous_start = i;
    ++sampling.samples;
  }
  if (finite == 0) return sampling;
  sampling.coverage = static_cast<double>(finite) / static_cast<double>(history.size() - first);
  if (!gaps.empty()) {
    sampling.spacing_steps = static_cast<std::size_t>(std::llround(stats::medianInPlace(gaps)));
  } else {
    sampling.spacing_steps = history.size() - first;  // one value, never changed
  }
  return sampling;
}

std::string samplingText(const Sampling& sampling, long long step_seconds) {
  const long long seconds = static_cast<long long>(sampling.spacing_steps) * step_seconds;
  const std::string every = seconds % 3600 == 0 ? fmt::format("{}h", seconds / 3600)
                            : seconds % 60 == 0 ? fmt::format("{}m", seconds / 60)
                                                : fmt::format("{}s", seconds);
  return fmt::format("a new value every {} step{} ({}), {:.0f} % of steps with a value",
                     sampling.spacing_steps, sampling.spacing_steps == 1 ? "" : "s", every,
                     sampling.coverage * 100);
}

}  // namespace metrics_adapter::forecast
