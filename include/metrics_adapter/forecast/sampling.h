#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

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

// "90s", "7m", "2h": whole hours or minutes when the duration is one.
std::string durationText(long long seconds);

// A series' own samples, one value each, for a series sampled more coarsely than the horizon.
struct NativeSamples {
  // On a grid of `spacing_steps` whose last slot is the one in force at the history's end: each
  // sample at the slot nearest its first step, so a daily rhythm keeps its place. A slot without
  // a sample of its own holds the one before it: a value that repeated looks so on a grid that
  // holds each value (last_over_time), and a missed scrape is taken for one; the schedule goes on.
  std::vector<float> values;
  std::size_t latest_age_steps = 0;  // grid steps from the last slot's time to the history's end
};

// Deterministic, linear in the history's length; empty values when the history has none.
NativeSamples nativeSamples(std::span<const float> history, std::size_t spacing_steps);

}  // namespace metrics_adapter::forecast
