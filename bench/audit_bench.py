#!/usr/bin/env python3
"""What auditing costs the hottest path (issue 27): the discovery document under wrk, with the
audit log off and on (every request at Metadata level, the log backend in batch mode, to a file),
in alternating runs against one fake Prometheus. Prints the medians and the on/off ratios of
req/s, p99 and the adapter's CPU per request; the goal is >= 0.9 of the req/s and a p99 within
1.2x. Also checks that the log holds one event per answered request (none lost or dropped).

  python3 bench/audit_bench.py [--no-build] [--pairs 5] [--seconds 5] [--connections 16]"""

import argparse
import json
import os
import statistics
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import run  # noqa: E402  (Bench: the fake Prometheus and the adapter; wrk)
import harness  # noqa: E402

POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
"""


def metric(text, name):
    """The sum of the samples of `name` in a Prometheus exposition."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(run.REPO, "build-perf"))
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--series", type=int, default=10000)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if not args.no_build:
        run.install_packages()
        run.build(args.build_dir)
    args.discovery_timeout = 120
    bench = run.Bench(args)
    try:
        _, prometheus_url = bench.start_prometheus(args.series)
        policy = os.path.join(bench.procs.workdir, "policy.yaml")
        with open(policy, "w") as f:
            f.write(POLICY)
        audit_log = os.path.join(bench.procs.workdir, "audit", "audit.log")
        modes = {
            "off": [],
            "on": ["--audit-policy-file=" + policy, "--audit-log-path=" + audit_log,
                   "--audit-log-mode=batch", "--audit-log-batch-max-size=100",
                   "--audit-log-batch-max-wait=100ms", "--audit-log-maxsize=1000"],
        }
        adapters = {}
        for mode, extra in modes.items():
            process, port, began = bench.start_adapter("audit-" + mode, prometheus_url, "1h", 0,
                                                       extra)
            bench.wait_for_discovery(process, port, began)
            adapters[mode] = (process, port)
        results = {mode: [] for mode in modes}
        for _ in range(args.pairs):
            for mode, (process, port) in adapters.items():
                results[mode].append(run.wrk(port, run.DISCOVERY_PATH, args.connections,
                                             args.seconds,
                                             server_cpu=lambda p=process: run.cpu_seconds(p.pid)))
        process, port = adapters["on"]
        exposition = run.TlsClient(port).get("/metrics")[1].decode()
        written = metric(exposition, "metrics_adapter_audit_events_total")
        dropped = metric(exposition, "metrics_adapter_audit_events_dropped_total")
        answered = metric(exposition, "metrics_adapter_requests_total")
        for process, _ in adapters.values():
            bench.procs.stop(process)  # SIGTERM: the batch is flushed
        with open(audit_log) as f:
            lines = sum(1 for _ in f)

        def median(mode, key):
            return statistics.median(r[key] for r in results[mode])

        figures = {mode: {key: median(mode, key) for key in ("rps", "p99_ms", "server_cpu_us")}
                   for mode in modes}
        figures["ratio"] = {key: figures["on"][key] / figures["off"][key]
                            for key in figures["off"]}
        figures["events"] = {"written": written, "dropped": dropped, "log_lines": lines,
                             "answers_before_metrics": answered}
        print("discovery, %d connections, %d x %d s pairs, medians" %
              (args.connections, args.pairs, args.seconds))
        print("%-6s %12s %10s %16s" % ("audit", "req/s", "p99 ms", "CPU us/request"))
        for mode in ("off", "on"):
            f = figures[mode]
            print("%-6s %12.0f %10.3f %16.1f" % (mode, f["rps"], f["p99_ms"], f["server_cpu_us"]))
        r = figures["ratio"]
        print("on/off %12.3f %10.3f %16.3f" % (r["rps"], r["p99_ms"], r["server_cpu_us"]))
        print("events written %d, dropped %d, log lines %d (answers counted before: %d)" %
              (written, dropped, lines, answered))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(figures, f, indent=2)
    finally:
        bench.procs.stop_all()


if __name__ == "__main__":
    main()
