#include "metrics_adapter/forecast/sampling.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "forecast/robust_stats.h"

namespace metrics_adapter::forecast {
namespace {

// The grid index of each sample's first step: the first value, a value after an empty step, or
// a different value. A gauge that repeats itself exactly looks coarser than it is, which only
// errs towards caution.
std::vector<std::size_t> sampleStarts(std::span<const float> history) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const float value = history[i];
    if (!std::isfinite(value)) continue;
    if (starts.empty() || !std::isfinite(history[i - 1]) || history[i - 1] != value) {
      starts.push_back(i);
    }
  }
  return starts;
}

}  // namespace

Sampling analyseSampling(std::span<const float> history) {
  Sampling sampling;
  const std::vector<std::size_t> starts = sampleStarts(history);
  if (starts.empty()) return sampling;
  const auto finite = static_cast<std::size_t>(
      std::count_if(history.begin(), history.end(), [](float v) { return std::isfinite(v); }));
  const std::size_t first = starts.front();
  sampling.samples = starts.size();
  sampling.coverage = static_cast<double>(finite) / static_cast<double>(history.size() - first);
  if (starts.size() > 1) {
    std::vector<double> gaps;
    gaps.reserve(starts.size() - 1);
    for (std::size_t k = 1; k < starts.size(); ++k) {
      gaps.push_back(static_cast<double>(starts[k] - starts[k - 1]));
    }
    sampling.spacing_steps = static_cast<std::size_t>(std::llround(stats::medianInPlace(gaps)));
  } else {
    sampling.spacing_steps = history.size() - first;  // one value, never changed
  }
  return sampling;
}

std::string durationText(long long seconds) {
  return seconds != 0 && seconds % 3600 == 0 ? fmt::format("{}h", seconds / 3600)
         : seconds % 60 == 0                 ? fmt::format("{}m", seconds / 60)
                                             : fmt::format("{}s", seconds);
}

std::string samplingText(const Sampling& sampling, long long step_seconds) {
  return fmt::format("a new value every {} step{} ({}), {:.0f} % of steps with a value",
                     sampling.spacing_steps, sampling.spacing_steps == 1 ? "" : "s",
                     durationText(static_cast<long long>(sampling.spacing_steps) * step_seconds),
                     sampling.coverage * 100);
}

NativeSamples nativeSamples(std::span<const float> history, std::size_t spacing_steps) {
  NativeSamples native;
  std::vector<std::size_t> starts = sampleStarts(history);
  // A sample the history's first step shows began before it, at a time not known: its slot
  // cannot be told (on a grid that holds each value it would land in the next sample's).
  if (starts.size() > 1 && starts.front() == 0) starts.erase(starts.begin());
  if (starts.empty()) return native;
  const std::size_t spacing = std::max<std::size_t>(1, spacing_steps);
  // The slot in force at the history's end: a sample not seen at its time (on a grid that holds
  // each value, a repeat looks so) is taken for a repeat, and the schedule goes on.
  const std::size_t age = history.size() - 1 - starts.back();
  const std::size_t last = starts.back() + age / spacing * spacing;
  // Slots counted back from the last one.
  const auto slots_before = [&](std::size_t start) {
    return static_cast<std::size_t>(
        std::llround(static_cast<double>(last - start) / static_cast<double>(spacing)));
  };
  const std::size_t slots = slots_before(starts.front()) + 1;
  native.values.assign(slots, std::numeric_limits<float>::quiet_NaN());
  for (const std::size_t start : starts) {  // ascending: of two in one slot, the later stays
    native.values[slots - 1 - slots_before(start)] = history[start];
  }
  // A slot without a sample of its own (a value that repeated, a missed scrape) holds the sample
  // in force at its time.
  for (std::size_t k = 1; k < slots; ++k) {
    if (std::isnan(native.values[k])) native.values[k] = native.values[k - 1];
  }
  native.latest_age_steps = age % spacing;
  return native;
}

}  // namespace metrics_adapter::forecast
