#pragma once

#include <cstddef>
#include <span>
#include <string>

// How often a series really has a new value, read from its history on the rule's step grid: a
// 5-minute scrape read at a 1-minute step repeats each sample over 5 steps; a 30-minute one shows
// it for Prometheus' 5-minute lookback and then has 25 empty steps.
namespace metrics_adapter::forecast {

struct Sampling {
  std::size_t spacing_steps = 1;  // median grid steps between one sample and the next
  double coverage = 0;            // share of the steps from the first value on that have one
  std::size_t samples = 0;        // samples seen: a value after a gap or unlike the one before
};

// Deterministic, linear in the history's length.
Sampling analyseSampling(std::span<const float> history);

// "sampled every 5 steps (5m)", for explain and the backtest.
std::string samplingText(const Sampling& sampling, long long step_seconds);

}  // namespace metrics_adapter::forecast
