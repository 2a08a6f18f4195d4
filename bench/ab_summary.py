#!/usr/bin/env python3
"""The table of an A/B run (bench/ab.sh): for each figure of bench/run.py's --json files, the
median per build, B/A, each build's range over its runs, and whether the two ranges are apart.

  python3 bench/ab_summary.py RUN_DIR     # RUN_DIR holds roundN-A.json, roundN-B.json, ab.txt

Two ranges that do not overlap are the test: with n runs each, and no real difference, that
happens by chance with probability 2 / C(2n, n) (5 rounds: 0.8 %); a difference inside the
spread is not one these runs can see. Figures are the rows bench/report.py names, a row of
several figures ("p50 / p99") split into one line each."""

import argparse
import glob
import json
import os
import re
import statistics
import sys

import report

MIN_RUNS = 3  # fewer runs a side, and ranges apart say nothing
SLASHED = re.compile(r"[\w*]+(?: / [\w*]+)+")  # "p50 / p99", "Rss / Pss / Anon"


def load_runs(run_dir, side):
    """[--json dict] of one build, in round order."""
    paths = glob.glob(os.path.join(run_dir, "round*-%s.json" % side))
    paths.sort(key=lambda p: int(re.search(r"round(\d+)-", p).group(1)))
    runs = []
    for path in paths:
        with open(path) as f:
            runs.append(json.load(f))
    return runs


def figure_names(label, count):
    """One name per figure of a row: its slashed part ("p50 / p99") replaced by each name."""
    if count == 1:
        return [label.strip()]
    for match in SLASHED.finditer(label):
        names = match.group(0).split(" / ")
        if len(names) == count:
            return [(label[:match.start()] + name + label[match.end():]).strip()
                    for name in names]
    return ["%s [%d]" % (label.strip(), i + 1) for i in range(count)]


def row_labels(args, results):
    """{row key: label}; an indented row ("  of which anonymous") is named with the row it
    belongs to ("idle RSS: of which anonymous"), as Markdown drops the indent."""
    labels, parent = {}, ""
    for row in report.rows(args, results):
        if row.label.startswith(" ") and not row.key.startswith("idle_memory."):
            labels[row.key] = "%s: %s" % (parent, row.label.strip())
        else:
            labels[row.key] = row.label
            parent = row.label.split(",")[0].split(" (")[0]
    return labels


def figures(runs, everything):
    """{(series, row key, index): [value per run]} and the labels, in the table's order. Unless
    `everything`, the memory categories show their Rss only (not Pss and anonymous)."""
    values, labels, order = {}, {}, []
    for run in runs:
        args = argparse.Namespace(**run["args"])
        table = row_labels(args, run["results"])
        for series, rows in run["rows"].items():
            for key, row_values in rows.items():
                names = figure_names(table.get(key, key), len(row_values))
                if (not everything and key.startswith("idle_memory.")
                        and key not in ("idle_memory.rollup", "idle_memory.threads")):
                    names = names[:1]
                for index, name in enumerate(names):
                    figure = (series, key, index)
                    if figure not in values:
                        values[figure] = []
                        order.append(figure)
                        labels[figure] = name
                    values[figure].append(row_values[index])
    return values, labels, order


def load(run, index):
    """The load average run.py recorded before (0) or after (1) the run."""
    parts = run.get("load_average", "").split("; ")
    return parts[index].split(": ")[-1] if len(parts) == 2 else "not recorded"


def verdict(a, b):
    if min(len(a), len(b)) < MIN_RUNS:
        return "too few runs"
    if max(b) < min(a):
        return "B lower"
    if min(b) > max(a):
        return "B higher"
    return "within spread"


def number(value):
    magnitude = abs(value)
    if magnitude >= 1000:
        return "{:,.0f}".format(value)
    if magnitude >= 100:
        return "%.1f" % value
    if magnitude >= 1:
        return "%.2f" % value
    return "%.3f" % value


def summary_lines(runs_a, runs_b, everything=False):
    """[(figure, median A, median B, B/A, range A, range B, verdict)] for the figures both have
    (not those zero in every run)."""
    values_a, labels, order = figures(runs_a, everything)
    values_b, _, _ = figures(runs_b, everything)
    series = {figure[0] for figure in order}
    lines = []
    for figure in order:
        a, b = values_a[figure], values_b.get(figure)
        if not b or not any(a + b):
            continue
        median_a, median_b = statistics.median(a), statistics.median(b)
        name = labels[figure] if len(series) == 1 else "%s series: %s" % (figure[0],
                                                                           labels[figure])
        lines.append((name, number(median_a), number(median_b),
                      "%.2f" % (median_b / median_a) if median_a else "-",
                      "%s–%s" % (number(min(a)), number(max(a))),
                      "%s–%s" % (number(min(b)), number(max(b))), verdict(a, b)))
    return lines


def print_markdown(header, lines):
    widths = [max(len(str(line[i])) for line in [header] + lines) for i in range(len(header))]
    print("| " + " | ".join("%-*s" % (w, h) for w, h in zip(widths, header)) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for line in lines:
        print("| %-*s | " % (widths[0], line[0])
              + " | ".join("%*s" % (w, c) for w, c in zip(widths[1:], line[1:])) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", help="a directory bench/ab.sh wrote")
    parser.add_argument("--all", action="store_true",
                        help="also the Pss and anonymous memory of each kind of mapping")
    args = parser.parse_args()
    runs_a, runs_b = load_runs(args.run_dir, "A"), load_runs(args.run_dir, "B")
    if not runs_a or not runs_b:
        sys.exit("ab_summary: no roundN-A.json and roundN-B.json in %s" % args.run_dir)
    about = os.path.join(args.run_dir, "ab.txt")
    if os.path.exists(about):
        with open(about) as f:
            print("".join(f.readlines()), end="")
    print("%d run(s) of A, %d of B, interleaved; load average (1, 5, 15 min) before the first: "
          "%s; after the last: %s" % (len(runs_a), len(runs_b), load(runs_a[0], 0),
                                      load(runs_b[-1], 1)))
    print()
    print_markdown(("figure", "A median", "B median", "B/A", "A range", "B range",
                    "B against A"), summary_lines(runs_a, runs_b, args.all))


if __name__ == "__main__":
    main()
