#!/usr/bin/env python3
"""The forecast on real demand: `python3 bench/nab_forecast_bench.py --nab DIR`.

bench/forecast_bench.cpp scores the model on synthetic demand whose generating function we wrote;
this bench scores it on public traces we did not: 15 series of the Numenta Anomaly Benchmark
(github.com/numenta/NAB; --nab is a checkout of it, a work tree or a bare git directory, read at
run time and never copied into this repository): tweet volumes per 5 minutes (realTweets) and
EC2/RDS CPU utilisation and an ELB request count per 5 minutes (realAWSCloudwatch).

Each trace is shifted so its last sample is at the current minute (spacing kept), written as
OpenMetrics `nab_demand{trace="...",sampling="5m"}` (plus a `sampling="30m"` variant that keeps
every 6th sample with --resample 30m, read as it is, where Prometheus's 5-minute lookback leaves
gaps, and with --held also through `last_over_time(...[30m])`, where every step holds the latest
sample), backfilled with promtool into one real Prometheus
(tests/integration/harness.py) and replayed by the real binary: one forecastRule per trace at
the documented defaults (history 7d, step 1m, horizon 10m, quantile 0.5) and
`metrics-adapter forecast backtest --days N --output json`. The same grid is then read from
Prometheus here and four baselines are replayed on the same steps against the same target (the
actual maximum over [t, t + horizon]), each read at t with no lag, as a normal rule's instant
query gives an HPA the latest value (what a user gets instead of ours; the served forecast's
model is made LAG_STEPS before t, its latest value read at t), with the rules of
src/forecast/backtest.cpp and
src/forecast/baselines.cpp: the latest value, seasonal naive 1 day and 7 days, additive
Holt-Winters (daily season, the same parameter grid). Holt-Winters is refitted once per replayed
hour (--hw-refit-minutes) and run forward step by step in between, not refitted at every step as
in C++: one fit takes about 0.2 s in pure Python, 10 minutes per trace at every step.

The backtest ends at the minute it runs, the backfill at the minute it was written: the replayed
window moves by those few minutes from run to run, and the figures by a few tenths of a point.

Prints one line per trace and sampling: MAPE (ours and each baseline), which baseline was best,
the under-forecast ratios and the model's own account of the series (the backtest's `model`;
`method` and `baselines` too when the binary reports them). The table is a report, not a gate:
the exit status is 0 unless a run failed."""

import argparse
import array
import calendar
import concurrent.futures
import json
import math
import os
import statistics
import subprocess
import sys
import time
import urllib.parse

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import harness  # noqa: E402  (Processes, Prometheus, free_port, wait_until, http_get_json)

TRACES = {
    **{"Twitter_volume_" + s: "data/realTweets/Twitter_volume_%s.csv" % s
       for s in ("AMZN", "CRM", "CVS", "FB", "IBM", "KO", "PFE", "UPS")},
    **{"ec2_cpu_utilization_" + s: "data/realAWSCloudwatch/ec2_cpu_utilization_%s.csv" % s
       for s in ("24ae8d", "77c1ca", "ac20cd", "c6585a", "fe7f93")},
    "rds_cpu_utilization_cc0c53": "data/realAWSCloudwatch/rds_cpu_utilization_cc0c53.csv",
    # Requests at a load balancer: demand measured where it arrives (issue 44's example).
    "elb_request_count_8c0756": "data/realAWSCloudwatch/elb_request_count_8c0756.csv",
}
NATIVE_SPACING_S = 300  # every chosen trace is sampled every 5 minutes

# The forecastRule, at the defaults docs/forecasting.md documents; the replay below uses the
# same figures, so they are written into the config rather than left to the binary's defaults.
RULE = "nab_demand_forecast"
STEP_S = 60
HISTORY_S = 7 * 86400
HORIZON_S = 600
QUANTILE = 0.5
DAY_S = 86400
# The serving lag the backtest replays with (servingLagSteps in forecast_service.h): the forecast
# served at t was made from the history up to t - LAG_STEPS (a 15 s read delay plus the default
# 1-minute refresh interval, in whole steps).
READ_DELAY_S, REFRESH_S = 15, 60
LAG_STEPS = -(-(READ_DELAY_S + REFRESH_S) // STEP_S)
# harness.Prometheus keeps Prometheus's default retention, 15 days: blocks older than that
# (counted from the newest sample, now) are deleted, so the backfill must fit in it.
RETENTION_S = 15 * DAY_S
# The backtest reads its history in chunks of a day of steps (fetchReplayHistory); so do we.
CHUNK_POINTS = DAY_S // STEP_S

# baselines.cpp's Holt-Winters parameter grid.
HW_ALPHAS = (0.05, 0.2, 0.5, 0.8)
HW_BETAS = (0.0, 0.01, 0.1)
HW_GAMMAS = (0.05, 0.2, 0.5)
BASELINES = ("last", "snaive1d", "snaive7d", "hw")


def parse_duration(text):
    """Seconds in "30m", "2h", "300s", "1d"."""
    units = {"s": 1, "m": 60, "h": 3600, "d": DAY_S}
    if len(text) < 2 or text[-1] not in units or not text[:-1].isdigit():
        raise argparse.ArgumentTypeError("%r: a whole number and s, m, h or d, e.g. 30m" % text)
    return int(text[:-1]) * units[text[-1]]


def sampling_name(seconds):
    return "%dm" % (seconds // 60) if seconds % 60 == 0 else "%ds" % seconds


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nab", required=True,
                        help="a checkout of github.com/numenta/NAB: work tree or bare git dir")
    parser.add_argument("--adapter", default=os.path.join(REPO, "build", "metrics-adapter"))
    parser.add_argument("--traces", help="comma-separated names (default: all %d)" % len(TRACES))
    parser.add_argument("--resample", type=parse_duration, action="append", default=[],
                        help="also replay a variant keeping every Nth sample so that it is "
                             "sampled this coarsely (e.g. 30m); repeatable")
    parser.add_argument("--resample-traces",
                        help="comma-separated names that get the --resample variants "
                             "(default: every selected trace)")
    parser.add_argument("--held", action="store_true",
                        help="also replay each --resample variant read through last_over_time "
                             "over its spacing (rows \"30m held\"): every step holds the latest "
                             "sample, and the next one falls inside the horizon at some steps")
    parser.add_argument("--days", type=int, default=2, help="days replayed (default 2)")
    parser.add_argument("--threshold-quantile", type=float,
                        help="also score lead times, at this quantile of each trace's replayed "
                             "values (e.g. 0.9) as the threshold")
    parser.add_argument("--hw-refit-minutes", type=int, default=60,
                        help="Holt-Winters parameter refit interval in replayed steps")
    parser.add_argument("--jobs", type=int, default=2, help="traces replayed at once")
    parser.add_argument("--markdown", action="store_true",
                        help="print the table as Markdown (for docs/forecasting.md)")
    parser.add_argument("--json", help="also write every figure to this file")
    args = parser.parse_args()

    args.traces = args.traces.split(",") if args.traces else list(TRACES)
    args.resample_traces = (args.resample_traces.split(",") if args.resample_traces
                            else list(args.traces))
    for name in args.traces + args.resample_traces:
        if name not in TRACES:
            parser.error("unknown trace %r; known: %s" % (name, ", ".join(TRACES)))
    for seconds in args.resample:
        if seconds <= NATIVE_SPACING_S or seconds % NATIVE_SPACING_S:
            parser.error("--resample: a multiple of the traces' 5m spacing, above it")
    if args.days < 1 or args.days > 35:
        parser.error("--days: 1 to 35, as the backtest takes")
    if span_seconds(args.days) > RETENTION_S:
        parser.error("--days %d: history (7d) + days + 1d of margin exceeds the 15-day "
                     "retention of the harness's Prometheus" % args.days)
    if args.threshold_quantile is not None and not 0 < args.threshold_quantile < 1:
        parser.error("--threshold-quantile: between 0 and 1")
    if args.hw_refit_minutes < 1 or args.jobs < 1:
        parser.error("--hw-refit-minutes and --jobs: at least 1")
    return args


def span_seconds(days):
    """How much of each trace is backfilled: what the backtest reads ([end - days - history,
    end]) and a day more, so the grid's first steps have data even if the run starts late."""
    return days * DAY_S + HISTORY_S + DAY_S


class NabSource:
    """Reads NAB's files from a work tree, or from a bare git directory with `git show`, so the
    mirror the data comes from is read in place and nothing is copied."""

    def __init__(self, path):
        self.path = path
        self.work_tree = os.path.isdir(os.path.join(path, "data"))
        if not self.work_tree and not os.path.isfile(os.path.join(path, "HEAD")):
            raise SystemExit("--nab %s: neither a NAB work tree (no data/) nor a git directory"
                             % path)

    def read(self, relative):
        if self.work_tree:
            with open(os.path.join(self.path, relative)) as f:
                return f.read()
        return subprocess.run(["git", "--git-dir=" + self.path, "show", "HEAD:" + relative],
                              check=True, capture_output=True, text=True).stdout


def load_trace(source, name):
    """[(epoch seconds, value)] in file order. NAB's timestamps carry no zone; read as UTC so
    no daylight-saving change bends the spacing."""
    samples = []
    for line in source.read(TRACES[name]).splitlines()[1:]:
        if not line.strip():
            continue
        stamp, value = line.split(",")
        samples.append((calendar.timegm(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")),
                        float(value)))
    return samples


def variants(samples, resample_factors):
    """{sampling seconds: samples} for the native spacing and each coarser one. A coarse variant
    keeps every factor-th sample counted from the last one, so all variants end together."""
    result = {NATIVE_SPACING_S: samples}
    for factor in resample_factors:
        result[NATIVE_SPACING_S * factor] = samples[::-1][::factor][::-1]
    return result


def write_backfill(path, series, last_at, span_s):
    """OpenMetrics for promtool: each series shifted so its last sample is at `last_at`, only
    the last `span_s` of it. Returns {(trace, sampling): samples written}."""
    written = {}
    with open(path, "w") as f:
        f.write("# TYPE nab_demand gauge\n")
        for (trace, sampling), samples in series.items():
            shift = last_at - samples[-1][0]
            kept = [(t + shift, v) for t, v in samples if t + shift > last_at - span_s]
            labels = 'sampling="%s",trace="%s"' % (sampling_name(sampling), trace)
            for t, v in kept:
                f.write("nab_demand{%s} %r %d\n" % (labels, v, t))
            written[(trace, sampling)] = len(kept)
        f.write("# EOF\n")
    return written


def series_query(trace, sampling, held=False):
    """The rule's query; `held`: through last_over_time over the spacing, so that a coarse
    variant has a value at every step (the latest sample) instead of the lookback's gaps."""
    query = 'nab_demand{trace="%s",sampling="%s"}' % (trace, sampling_name(sampling))
    return "last_over_time(%s[%s])" % (query, sampling_name(sampling)) if held else query


def row_name(sampling, held):
    return sampling_name(sampling) + (" held" if held else "")


def wait_for_backfill(prometheus, written, last_at, span_s):
    """Until Prometheus answers for every sample written: Prometheus is ready before every
    backfilled block is loaded and queryable."""
    def complete():
        url = prometheus.url + "/api/v1/query?" + urllib.parse.urlencode({
            "query": "count_over_time(nab_demand[%ds])" % (span_s + 60), "time": last_at})
        counts = {(r["metric"]["trace"], r["metric"]["sampling"]): int(r["value"][1])
                  for r in harness.http_get_json(url, timeout=60)["data"]["result"]}
        return all(counts.get((trace, sampling_name(sampling))) == n
                   for (trace, sampling), n in written.items())
    harness.wait_until(complete, timeout=300, interval=1, what="the backfill to be queryable")


def to_float32(value):
    """The grid holds floats (range_fetch.cpp); round as it does so ties compare the same."""
    return array.array("f", [value])[0] if math.isfinite(value) else value


def fetch_grid(url, query, end, days):
    """The series of `query` on the backtest's grid: end - days - history to end, step 1m, NaN
    where Prometheus has no point (fetchReplayHistory + fetchGridHistory)."""
    start = end - days * DAY_S - HISTORY_S
    length = (end - start) // STEP_S + 1
    values = [math.nan] * length
    for first in range(0, length, CHUNK_POINTS):
        last = min(length, first + CHUNK_POINTS) - 1
        answer = harness.http_get_json(url + "/api/v1/query_range?" + urllib.parse.urlencode({
            "query": query, "start": start + first * STEP_S, "end": start + last * STEP_S,
            "step": STEP_S}), timeout=60)
        result = answer["data"]["result"]
        if len(result) > 1:
            raise RuntimeError("%s: %d series, one expected" % (query, len(result)))
        for t, v in (result[0]["values"] if result else []):
            values[round((t - start) / STEP_S)] = to_float32(float(v))
    return values


def run_backtest(adapter, config, url, days, threshold):
    """The binary's backtest JSON and the binary's mtime. The other engineer may be rebuilding
    the binary: wait while it is missing and retry a failed run a few times."""
    argv = [adapter, "forecast", "backtest", "--config", config, "--prometheus-url", url,
            "--rule", RULE, "--days", str(days), "--output", "json"]
    if threshold is not None:
        argv += ["--threshold", repr(threshold)]
    failure = None
    for _ in range(4):
        harness.wait_until(lambda: os.access(adapter, os.X_OK), timeout=900, interval=2,
                           what=adapter + " to exist")
        try:
            mtime = os.stat(adapter).st_mtime
            done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
            if done.returncode == 0:
                return json.loads(done.stdout), mtime
            failure = "exit %d: %s" % (done.returncode, done.stderr.strip()[-2000:])
        except (OSError, ValueError) as error:  # ETXTBSY while linking, half-written output
            failure = repr(error)
        time.sleep(5)
    raise RuntimeError("forecast backtest failed: " + failure)


def finite(x):
    return x is not None and math.isfinite(x)


def max_finite(values):
    best = math.nan
    for v in values:
        if finite(v) and not v <= best:
            best = v
    return best


class HoltWinters:
    """Additive Holt-Winters as baselines.cpp computes it, fitted on a window and then run
    forward one step at a time with the parameters that fitted best."""

    def __init__(self, window, period):
        """window: the history [begin, t]; at least two periods long."""
        self.period = period
        first = statistics.fmean([x for x in window[:period] if finite(x)] or [math.nan])
        second_values = [x for x in window[period:2 * period] if finite(x)]
        second = statistics.fmean(second_values) if second_values else math.nan
        self.ok = math.isfinite(first)
        if not self.ok:
            return
        start_trend = (second - first) / period if math.isfinite(second) else 0.0
        start_season = [x - first if finite(x) else 0.0 for x in window[:period]]
        # None instead of NaN, so the hot loop tests `is not None` only.
        rest = [x if finite(x) else None for x in window[period:]]
        best = None
        for alpha in HW_ALPHAS:
            for beta in HW_BETAS:
                for gamma in HW_GAMMAS:
                    state = self._run(rest, first, start_trend, list(start_season),
                                      alpha, beta, gamma)
                    if best is None or state[3] < best[3]:  # the first of equals wins, as in C++
                        best = state + (alpha, beta, gamma)
        self.level, self.trend, self.season, _, self.alpha, self.beta, self.gamma = best
        self.index = len(window) - 1  # of the latest value, counted from the window's start

    def _run(self, rest, level, trend, season, alpha, beta, gamma):
        period = self.period
        squared_errors = 0.0
        phase = 0
        for x in rest:
            s = season[phase]
            if x is not None:
                error = x - (level + trend + s)
                squared_errors += error * error
                new_level = alpha * (x - s) + (1 - alpha) * (level + trend)
                trend = beta * (new_level - level) + (1 - beta) * trend
                level = new_level
                season[phase] = gamma * (x - level) + (1 - gamma) * s
            else:
                level = level + trend
            phase += 1
            if phase == period:
                phase = 0
        return level, trend, season, squared_errors

    def advance(self, x):
        """Takes the next step's value (NaN for a gap), as one more turn of the fit's loop."""
        self.index += 1
        phase = self.index % self.period
        s = self.season[phase]
        if finite(x):
            new_level = self.alpha * (x - s) + (1 - self.alpha) * (self.level + self.trend)
            self.trend = self.beta * (new_level - self.level) + (1 - self.beta) * self.trend
            self.level = new_level
            self.season[phase] = self.gamma * (x - self.level) + (1 - self.gamma) * s
        else:
            self.level += self.trend

    def forecast(self, horizon_steps):
        return [self.level + h * self.trend + self.season[(self.index + h) % self.period]
                for h in range(horizon_steps + 1)]


def latest_finite(series, begin, t):
    """The latest value of series[begin..t] that is not a gap (NaN when there is none)."""
    for i in range(t, begin - 1, -1):
        if finite(series[i]):
            return series[i]
    return math.nan


def seasonal_naive(series, begin, t, period, horizon_steps):
    """baselines.cpp's seasonalNaive on series[begin..t]: the value one period before each
    horizon step, the latest value where that is outside the window or a gap."""
    latest = latest_finite(series, begin, t)
    if t + 1 - begin < period:
        return [latest] * (horizon_steps + 1)
    values = []
    for h in range(horizon_steps + 1):
        index = t + h - period
        values.append(series[index] if index >= begin and finite(series[index]) else latest)
    return values


def replay_range(length, days):
    """(first, last) replayed indices, as replay.cpp and backtest.cpp choose them: the last
    `days` of steps that still have a whole horizon after them, none before the lag."""
    horizon_steps = HORIZON_S // STEP_S
    replayable = max(0, length - horizon_steps)
    replay_steps = days * DAY_S // STEP_S
    first = replayable - replay_steps if replayable > replay_steps else 0
    return max(first, LAG_STEPS), replayable - 1


def leads(series, first, points, threshold):
    """Each counted upward crossing's lead in seconds: backtest.cpp's backtestLeads, same rules
    (see BacktestResult in include/metrics_adapter/forecast/backtest.h)."""
    if not points:
        return []
    horizon_steps = HORIZON_S // STEP_S
    last = points[-1][0]
    served = [math.nan] * (last + 1 - first)
    for index, _, forecast, _ in points:
        served[index - first] = forecast

    def above(t):
        return served[t - first] >= threshold

    result = []
    for t, actual, _, _ in points:
        if t == 0 or t == first or not actual >= threshold:
            continue
        since = t - min(t, max(1, horizon_steps))
        if any(series[i] >= threshold for i in range(since, t)) or not series[t - 1] < threshold:
            continue
        if above(t):
            floor = t - 1
            while floor > 0 and not series[floor - 1] >= threshold:
                floor -= 1
            start = t
            while start > max(first, floor) and above(start - 1):
                start -= 1
            lead_steps = t - start
        else:
            later = t + 1
            while later <= last and not above(later):
                later += 1
            lead_steps = -(later - t)
        result.append(lead_steps * STEP_S)
    return result


def score(series, first, points, threshold):
    """MAPE (points whose actual maximum is above 0), under-forecast ratio and median lead of
    [(t, actual, served, actual max)], as backtest.cpp computes them."""
    errors = [abs(served - top) / top for _, _, served, top in points if top > 0]
    figures = {
        "mape": sum(errors) / len(errors) if errors else 0.0,
        "underForecastRatio": (sum(1 for p in points if p[2] < p[3]) / len(points)
                               if points else 0.0),
        "points": len(points),
    }
    if threshold is not None:
        each = leads(series, first, points, threshold)
        figures["leadTimeSeconds"] = statistics.median(each) if each else None
        figures["crossings"] = len(each)
    return figures


def replay_baselines(series, days, threshold, refit_steps):
    """Every baseline replayed on the backtest's steps: {name: score()}."""
    horizon_steps = HORIZON_S // STEP_S
    history_steps = HISTORY_S // STEP_S
    first, last = replay_range(len(series), days)
    points = {name: [] for name in BASELINES}
    hw = None
    lag = 0  # read at t, as a normal rule reads the latest value: never given our lag
    ahead = horizon_steps + lag
    for t in range(first, last + 1):
        o = t - lag  # the value served at t is read from the history up to o
        begin = max(0, o + 1 - history_steps)
        if (t - first) % refit_steps == 0:
            window = series[begin:o + 1]
            hw = HoltWinters(window, DAY_S // STEP_S) if len(window) >= 2 * DAY_S // STEP_S \
                else None
        elif hw is not None and hw.ok:
            hw.advance(series[o])
        if not finite(series[t]):
            continue  # the backtest skips a step whose actual value is a gap
        top = max_finite(series[t:t + horizon_steps + 1])
        latest = latest_finite(series, begin, o)
        served = {
            "last": latest,
            "snaive1d": max_finite(seasonal_naive(series, begin, o, DAY_S // STEP_S,
                                                  ahead)[lag:]),
            "snaive7d": max_finite(seasonal_naive(series, begin, o, 7 * DAY_S // STEP_S,
                                                  ahead)[lag:]),
            "hw": max_finite(hw.forecast(ahead)[lag:]) if hw is not None and hw.ok
            else latest,
        }
        for name, value in served.items():
            if not math.isnan(value):
                points[name].append((t, series[t], value, top))
    return {name: score(series, first, points[name], threshold) for name in BASELINES}


def write_config(path, query):
    with open(path, "w") as f:
        # json.dumps quotes the query as YAML reads a double-quoted scalar.
        f.write("forecastRules:\n- name: %s\n  query: %s\n  history: %ds\n  step: %ds\n"
                "  horizon: %ds\n  quantile: %s\n"
                % (RULE, json.dumps(query), HISTORY_S, STEP_S, HORIZON_S, QUANTILE))


def evaluate(job):
    """Replays one trace at one sampling with the binary and the baselines; a record for the
    report."""
    query = series_query(job["trace"], job["sampling"], job["held"])
    config = os.path.join(job["workdir"], "%s-%s.yaml" % (
        job["trace"], row_name(job["sampling"], job["held"]).replace(" ", "-")))
    write_config(config, query)
    # The backtest ends at the wall clock's minute: read the grid and run it within one minute,
    # so both replay the same steps (otherwise read and run again).
    for _ in range(5):
        end = int(time.time()) // STEP_S * STEP_S
        series = fetch_grid(job["url"], query, end, job["days"])
        first, last = replay_range(len(series), job["days"])
        replayed = series[first:last + 1]
        threshold = None
        if job["threshold_quantile"] is not None:
            values = sorted(v for v in replayed if finite(v))
            threshold = values[min(len(values) - 1, int(job["threshold_quantile"] * len(values)))]
            # The binary takes a positive threshold only.
            threshold = threshold if threshold > 0 else None
        report, mtime = run_backtest(job["adapter"], config, job["url"], job["days"], threshold)
        if int(time.time()) // STEP_S * STEP_S == end:
            break
    else:
        raise RuntimeError("%s: could not read the grid and run the backtest within one minute"
                           % query)
    if len(report["series"]) != 1:
        raise RuntimeError("%s: the backtest reports %d series" % (query, len(report["series"])))
    ours = report["series"][0]
    baselines = replay_baselines(series, job["days"], threshold, job["refit_steps"])
    known = {"labels", "mape", "underForecastRatio", "leadTimeSeconds", "crossings", "points",
             "model"}
    return {
        "trace": job["trace"],
        "sampling": row_name(job["sampling"], job["held"]),
        "held": job["held"],
        "ours": {k: ours.get(k) for k in ("mape", "underForecastRatio", "leadTimeSeconds",
                                          "crossings", "points")},
        "model": ours.get("model"),
        # Whatever else the binary reports per series (e.g. the method it chose, its own
        # baselines): kept and printed, not interpreted.
        "extra": {k: v for k, v in ours.items() if k not in known},
        "baselines": baselines,
        "threshold": threshold,
        "gridEnd": end,
        "tailMinutes": (end - job["last_at"]) // 60,
        "replayedSteps": len(replayed),
        "gapShare": sum(1 for v in replayed if not finite(v)) / len(replayed),
        "adapterMtime": mtime,
    }


def best_baseline(record):
    return min(BASELINES, key=lambda name: record["baselines"][name]["mape"])


def percent(value):
    return "—" if value is None else "%.1f %%" % (value * 100)


def minutes(seconds):
    return "—" if seconds is None else "%+.0f min" % (seconds / 60)


def method_line(record):
    """What served the replayed steps, by method, as the binary reports it (its `servedSteps`);
    the backtest's `model` line for a binary that does not."""
    served = record["extra"].get("servedSteps")
    if not served:
        return record["model"] or ""
    return ", ".join("%s %d" % (name, steps)
                     for name, steps in sorted(served.items(), key=lambda item: -item[1]))


# The binary's own baselines (forecast backtest's `baselines`) against the ones replayed here:
# the latest value and seasonal naive are exact rules, so they must agree; Holt-Winters differs
# by construction (here the state runs forward, there it restarts on each step's window).
EXACT_BASELINES = {"last": "latestValue", "snaive1d": "seasonalNaive1d",
                   "snaive7d": "seasonalNaive7d"}


def baseline_disagreements(record):
    theirs = record["extra"].get("baselines") or {}
    found = []
    for ours, key in EXACT_BASELINES.items():
        if key in theirs and abs(theirs[key]["mape"] - record["baselines"][ours]["mape"]) > 1e-6:
            found.append("%s %s: here %.4f, binary %.4f" % (
                record["trace"], ours, record["baselines"][ours]["mape"], theirs[key]["mape"]))
    return found


def table_rows(records, with_leads):
    header = ["trace", "sampling", "ours MAPE", "last", "snaive1d", "snaive7d", "HW",
              "best baseline", "ours<=best?", "ours under", "last under", "steps (gaps)"]
    if with_leads:
        header += ["ours lead", "last / 1d / 7d / HW lead"]
    header.append("served by (replayed steps)")
    rows = []
    for r in records:
        best = best_baseline(r)
        b = r["baselines"]
        row = [r["trace"], r["sampling"], percent(r["ours"]["mape"])]
        row += [percent(b[name]["mape"]) for name in BASELINES]
        row += [best, "yes" if r["ours"]["mape"] <= b[best]["mape"] else "no",
                percent(r["ours"]["underForecastRatio"]),
                percent(b["last"]["underForecastRatio"]),
                "%d (%.1f %%)" % (r["ours"]["points"] or 0, r["gapShare"] * 100)]
        if with_leads:
            row += [minutes(r["ours"]["leadTimeSeconds"]),
                    " / ".join(minutes(b[n].get("leadTimeSeconds")) for n in BASELINES)]
        row.append(method_line(r))
        rows.append(row)
    return header, rows


def print_table(records, markdown, with_leads):
    header, rows = table_rows(records, with_leads)
    if markdown:
        print("| " + " | ".join(header) + " |")
        text = {"trace", "sampling", "best baseline", "ours<=best?", "served by (replayed steps)"}
        print("|" + "|".join("---" if h in text else "---:" for h in header) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header[:-1])]
    for row in [header] + rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])


def main():
    args = parse_args()
    source = NabSource(args.nab)
    factors = [seconds // NATIVE_SPACING_S for seconds in args.resample]
    series = {}
    for name in args.traces:
        for sampling, samples in variants(load_trace(source, name),
                                          factors if name in args.resample_traces else []).items():
            series[(name, sampling)] = samples

    started = time.monotonic()
    procs = harness.Processes()
    records, failures = [], []
    try:
        last_at = int(time.time()) // 60 * 60
        backfill = os.path.join(procs.workdir, "nab.om")
        written = write_backfill(backfill, series, last_at, span_seconds(args.days))
        # Nothing listens on the scrape port: the harness's Prometheus scrapes an exporter, and
        # here every sample comes from the backfill.
        prometheus = harness.Prometheus(procs, harness.free_port(), backfill=backfill)
        wait_for_backfill(prometheus, written, last_at, span_seconds(args.days))
        loaded = time.monotonic()
        print("backfilled %d series (%d samples) and loaded them in %.0f s"
              % (len(written), sum(written.values()), loaded - started), file=sys.stderr)

        jobs = [{"trace": trace, "sampling": sampling, "url": prometheus.url,
                 "adapter": args.adapter, "workdir": procs.workdir, "days": args.days,
                 "threshold_quantile": args.threshold_quantile,
                 "refit_steps": args.hw_refit_minutes * 60 // STEP_S, "last_at": last_at,
                 "held": held}
                for trace, sampling in series
                for held in ((False, True) if args.held and sampling != NATIVE_SPACING_S
                             else (False,))]
        with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(evaluate, job): job for job in jobs}
            for future in concurrent.futures.as_completed(futures):
                job = futures[future]
                try:
                    records.append(future.result())
                    print("  %s %s done" % (job["trace"], row_name(job["sampling"], job["held"])),
                          file=sys.stderr)
                except Exception as error:  # one trace failing does not hide the others
                    failures.append("%s %s: %s" % (
                        job["trace"], row_name(job["sampling"], job["held"]), error))
    finally:
        procs.stop_all()
    elapsed = time.monotonic() - started

    order = {key: i for i, key in enumerate(series)}
    records.sort(key=lambda r: (order[(r["trace"], parse_duration(r["sampling"].split()[0]))],
                                r["held"]))
    with_leads = args.threshold_quantile is not None
    print("forecast backtest vs baselines: replay of the last %d days, step 1m, horizon 10m, "
          "history 7d, quantile %s; MAPE and under-forecast against the actual maximum over "
          "the horizon; Holt-Winters refitted every %d replayed minutes%s"
          % (args.days, QUANTILE, args.hw_refit_minutes,
             ", threshold the %s quantile of each trace's replayed values"
             % args.threshold_quantile if with_leads else ""))
    if records:
        print_table(records, args.markdown, with_leads)
    wins = sum(1 for r in records if r["ours"]["mape"] <= r["baselines"][best_baseline(r)]["mape"])
    print("ours <= best baseline on %d of %d traces" % (wins, len(records)))
    for r in records:
        for disagreement in baseline_disagreements(r):
            print("warning: the binary's baseline differs: " + disagreement)
        baseline_points = r["baselines"]["last"]["points"]
        if r["ours"]["points"] != baseline_points:
            print("note: %s %s: the backtest replayed %s steps, the baselines %d"
                  % (r["trace"], r["sampling"], r["ours"]["points"], baseline_points))
        if r["gapShare"] > 0.05:
            # Prometheus's 5-minute lookback fills only 6 of every 30 grid minutes of a 30m
            # trace: the rest are gaps the backtest skips, and the actual maximum over the
            # 10-minute horizon of a step left is the sample that step already sees.
            print("note: %s %s: %.0f %% of the replayed 1m steps are gaps (no sample within "
                  "Prometheus's 5m lookback); they are skipped, and the target of the others "
                  "never reaches the next sample" % (r["trace"], r["sampling"],
                                                     r["gapShare"] * 100))
    if len({r["adapterMtime"] for r in records}) > 1:
        print("note: %s was rebuilt during the bench; the rows come from different builds"
              % args.adapter)
    print("%d replays in %.0f s on %d CPUs (%d at once)"
          % (len(jobs), elapsed, os.cpu_count(), args.jobs))
    for failure in failures:
        print("FAILED: " + failure)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"days": args.days, "quantile": QUANTILE, "stepSeconds": STEP_S,
                       "horizonSeconds": HORIZON_S, "historySeconds": HISTORY_S,
                       "hwRefitMinutes": args.hw_refit_minutes,
                       "thresholdQuantile": args.threshold_quantile, "seconds": elapsed,
                       "records": records, "failures": failures}, f, indent=2)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
