#!/usr/bin/env python3
"""The metrics.k8s.io benchmark of issue 16: `python3 bench/resource_metrics_bench.py`.

Starts the fake Prometheus (bench/fake_prometheus.cpp, which answers the resource rules' container
queries and counts them), the fake Kubernetes API with 10,000 Running pods in 100 namespaces
(tests/integration/fake_kube.py; the adapter LISTs them in pages and watches) and the real
metrics-adapter with config/resource-rules.yaml, and per run, each phase in its own adapter:
  list        GET /apis/metrics.k8s.io/v1beta1/pods, one keep-alive connection (wrk -c1), cache
              off, --v=6: handler time and its logged Prometheus wait per request (access log),
              peak RSS growth (VmHWM reset through /proc/<pid>/clear_refs before the first
              request), Prometheus queries per request; then the HPA's request with 2
              connections for the same split;
  list-cache  the same with --metrics-cache-ttl: queries of the first request, then extra
              queries while the cache holds (the load lasts less than the TTL);
  hpa         GET .../namespaces/ns-00/pods?labelSelector=app%3Dbench (100 pods) at --v=0 with
              2 and 16 connections: p50/p99 and requests/s.
Prints medians over the runs; --json writes every figure. bench/resource_render_bench times the
same request's stages without the network."""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

import report  # cpu_model
import run  # bench/run.py: build, wrk, proc_status, TlsClient, percentile, harness

harness = run.harness
CONFIG = os.path.join(run.REPO, "config", "resource-rules.yaml")
GROUP = "/apis/metrics.k8s.io/v1beta1"
LIST_PATH = GROUP + "/pods"
HPA_PATH = GROUP + "/namespaces/ns-00/pods?labelSelector=app%3Dbench"


def cluster(namespaces, pods_per_namespace):
    pods = [{"name": "pod-%02d-%03d" % (n, p), "namespace": "ns-%02d" % n,
             "labels": {"app": "bench", "pod-template-hash": "5d4f8c7b9"}}
            for n in range(namespaces) for p in range(pods_per_namespace)]
    return {"pods": pods, "namespaces": [{"name": "ns-%02d" % n} for n in range(namespaces)]}


def access_lines(log, prefix):
    """(status, handler ms, logged Prometheus wait ms) of each access-log line whose path starts
    so."""
    return [(m.group(2), float(m.group(3)), float(m.group(4) or 0))
            for m in run.ACCESS_LINE.finditer(log) if m.group(1).startswith(prefix)]


def split(lines):
    lines = [(total, wait) for status, total, wait in lines if status == "200"]
    totals = [t for t, _ in lines]
    waits = [w for _, w in lines]
    own = [t - w for t, w in lines]
    return {"requests": len(lines),
            "handler_p50_ms": run.percentile(totals, 50),
            "handler_p99_ms": run.percentile(totals, 99),
            "promql_p50_ms": run.percentile(waits, 50), "promql_p99_ms": run.percentile(waits, 99),
            "own_p50_ms": run.percentile(own, 50), "own_p99_ms": run.percentile(own, 99)}


class ResourceBench:
    def __init__(self, args):
        self.args = args
        self.pods = args.namespaces * args.pods_per_namespace
        self.procs = harness.Processes()
        began = time.monotonic()
        self.kube = harness.FakeKube(self.procs, cluster(args.namespaces, args.pods_per_namespace))
        self.kube_start_s = time.monotonic() - began
        self.prometheus = self.procs.spawn("prometheus", [
            os.path.join(args.build_dir, "bench", "fake_prometheus"), "--series", "0"])
        port = harness.wait_until(lambda: self._first_line(self.prometheus), timeout=10,
                                  what="the fake Prometheus to print its port")
        self.prometheus_url = "http://127.0.0.1:%d" % int(port)

    def _first_line(self, process):
        text = self.procs.log(process)
        return text.split("\n", 1)[0] if "\n" in text else None

    def queries(self):
        return harness.http_get_json(self.prometheus_url + "/stats")["query_calls"]

    def busy_ms(self):
        """The fake Prometheus's own time answering queries so far."""
        return harness.http_get_json(self.prometheus_url + "/stats")["query_busy_us"] / 1000.0

    def settled(self, process):
        """The adapter's log once the request wrk left in flight has finished: neither the log nor
        the query count moved for 0.3 s."""
        last = None
        while True:
            now = (len(self.procs.log(process)), self.queries())
            if now == last:
                return self.procs.log(process)
            last = now
            time.sleep(0.3)  # polling interval

    def start_adapter(self, name, cache_ttl, verbosity):
        """The adapter, once its pod informer has synced; (process, port, seconds to sync)."""
        port = harness.free_port()
        began = time.monotonic()
        process = self.procs.spawn("adapter-" + name, [
            os.path.join(self.args.build_dir, "metrics-adapter"), "--config=" + CONFIG,
            "--prometheus-url=" + self.prometheus_url, "--secure-port=%d" % port,
            "--bind-address=127.0.0.1",
            "--cert-dir=" + os.path.join(self.procs.workdir, "certs-" + name),
            "--authentication-mode=none", "--lister-kubeconfig=" + self.kube.kubeconfig,
            "--metrics-cache-ttl=" + cache_ttl, "--max-requests-inflight=2000",
            "--v=%d" % verbosity])
        # The last pod of the last page, alone: its query (pod="...") is none that the
        # phases send, so it leaves nothing in the cache for them.
        n, p = self.args.namespaces - 1, self.args.pods_per_namespace - 1
        probe = GROUP + "/namespaces/ns-%02d/pods?fieldSelector=metadata.name%%3Dpod-%02d-%03d" % (
            n, n, p)
        client = [None]

        def synced():
            if process.poll() is not None:
                raise RuntimeError("the adapter exited: " + self.procs.log(process)[-2000:])
            try:
                client[0] = client[0] or run.TlsClient(port)
                status, body = client[0].get_json(probe)
                return status == 200 and len(body["items"]) == 1
            except (OSError, run.http.client.HTTPException, ValueError):
                client[0] = None
                return False
        harness.wait_until(synced, timeout=120, interval=0.05, what="the pod informer to sync")
        return process, port, time.monotonic() - began

    def check_list(self, port):
        """One GET of every pod's metrics, checked: every pod, one container with usage."""
        status, body = run.TlsClient(port).get_json(LIST_PATH)
        assert status == 200 and len(body["items"]) == self.pods, (status, len(body["items"]))
        item = body["items"][0]
        assert [c["name"] for c in item["containers"]] == ["app"], item
        assert set(item["containers"][0]["usage"]) == {"cpu", "memory"}, item

    def list_phase(self):
        process, port, sync_s = self.start_adapter("list", "0", 6)
        pid = process.pid
        rss_before = run.proc_status(pid, "VmRSS")
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")  # VmHWM := VmRSS, so the peak below is the requests' own
        queries_before, busy_before = self.queries(), self.busy_ms()
        offset = len(self.procs.log(process))
        self.check_list(port)
        load = run.wrk(port, LIST_PATH, 1, self.args.seconds)
        lines = access_lines(self.settled(process)[offset:], LIST_PATH)
        requests = max(len(lines), 1)
        # The first request (check_list) also warms the process up: reported on its own.
        result = {"sync_s": sync_s, "rss_before_mib": rss_before,
                  "peak_rss_mib": run.proc_status(pid, "VmHWM"),
                  "rss_after_mib": run.proc_status(pid, "VmRSS"),
                  "queries_per_request": (self.queries() - queries_before) / requests,
                  "fake_prometheus_ms_per_request": (self.busy_ms() - busy_before) / requests,
                  "first_request_ms": lines[0][1], "list": split(lines[1:]), "list_wrk": load}
        result["peak_rss_growth_mib"] = result["peak_rss_mib"] - rss_before
        offset = len(self.procs.log(process))
        queries_before = self.queries()
        run.wrk(port, HPA_PATH, self.args.latency_connections, self.args.seconds)
        lines = access_lines(self.settled(process)[offset:], GROUP + "/namespaces/ns-00/pods")
        result["hpa_split"] = split(lines)
        result["hpa_queries_per_request"] = (self.queries() - queries_before) / max(len(lines), 1)
        self.procs.stop(process)
        return result

    def cache_phase(self):
        process, port, _ = self.start_adapter("cache", self.args.cache_ttl, 6)
        offset = len(self.procs.log(process))
        before = self.queries()
        began = time.monotonic()
        self.check_list(port)
        first = self.queries() - before
        load = run.wrk(port, LIST_PATH, 1, self.args.seconds)
        elapsed = time.monotonic() - began
        lines = access_lines(self.settled(process)[offset:], LIST_PATH)
        result = {"first_request_queries": first, "extra_queries": self.queries() - before - first,
                  "requests": len(lines), "seconds": elapsed, "list_cached": split(lines[1:]),
                  "list_cached_wrk": load}
        self.procs.stop(process)
        return result

    def hpa_phase(self):
        process, port, _ = self.start_adapter("hpa", "0", 0)
        status, body = run.TlsClient(port).get_json(HPA_PATH)
        assert status == 200 and len(body["items"]) == self.args.pods_per_namespace, status
        result = {}
        for connections in sorted({self.args.latency_connections, self.args.connections}):
            result["hpa_c%d" % connections] = run.wrk(port, HPA_PATH, connections,
                                                      self.args.seconds)
        self.procs.stop(process)
        return result

    def run_once(self):
        result = self.list_phase()
        result.update(self.cache_phase())
        result.update(self.hpa_phase())
        return result


def median(results, *keys):
    values = []
    for r in results:
        for key in keys:
            r = r[key]
        values.append(r)
    return statistics.median(values)


def print_table(results, args, pods):
    print()
    print("metrics.k8s.io benchmark: %d pods in %d namespaces; %d cores (%s) shared by the "
          "adapter, the fakes and wrk (-t1, %ds per load); median of %d run(s)"
          % (pods, args.namespaces, os.cpu_count(), report.cpu_model(), args.seconds, len(results)))
    print("load average at the end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    hpa = "HPA's namespaced list (%d pods)" % args.pods_per_namespace
    lc, c = args.latency_connections, args.connections
    rows = [
        ("pod informer synced after start (s)", "%.2f", ("sync_s",)),
        ("RSS before the first request (MiB)", "%.1f", ("rss_before_mib",)),
        ("all pods: first request, handler (ms)", "%.1f", ("first_request_ms",)),
        ("all pods, 1 conn: requests measured after it", "%d", ("list", "requests")),
        ("all pods, 1 conn: handler p50 (ms)", "%.1f", ("list", "handler_p50_ms")),
        ("all pods, 1 conn: handler p99 (ms)", "%.1f", ("list", "handler_p99_ms")),
        ("all pods, 1 conn: logged promql= p50 (ms)", "%.1f", ("list", "promql_p50_ms")),
        ("all pods, 1 conn: handler - promql= p50 (ms)", "%.1f", ("list", "own_p50_ms")),
        ("all pods, 1 conn: handler - promql= p99 (ms)", "%.1f", ("list", "own_p99_ms")),
        ("all pods: fake Prometheus's own time, summed over the queries (ms)", "%.1f",
         ("fake_prometheus_ms_per_request",)),
        ("all pods, 1 conn: wrk p50 / p99 (ms)", None, None),
        ("all pods, 1 conn: req/s", "%.1f", ("list_wrk", "rps")),
        ("all pods: peak RSS growth (MiB)", "%.1f", ("peak_rss_growth_mib",)),
        ("all pods: RSS after the load (MiB)", "%.1f", ("rss_after_mib",)),
        ("all pods, cache off: Prometheus queries per request", "%.2f", ("queries_per_request",)),
        ("all pods, cache %s: queries of the first request" % args.cache_ttl, "%d",
         ("first_request_queries",)),
        ("all pods, cache %s: extra queries over the load" % args.cache_ttl, "%d",
         ("extra_queries",)),
        ("all pods, cache %s: requests in the load" % args.cache_ttl, "%d", ("requests",)),
        ("all pods, cache %s: handler p50 / p99 (ms)" % args.cache_ttl, None, None),
        ("%s, %d conns: handler p50 / p99 (ms)" % (hpa, lc), None, None),
        ("%s, %d conns: handler - promql= p99 (ms)" % (hpa, lc), "%.2f",
         ("hpa_split", "own_p99_ms")),
        ("%s: Prometheus queries per request" % hpa, "%.2f", ("hpa_queries_per_request",)),
        ("%s, %d conns: wrk p50 / p99 (ms)" % (hpa, lc), None, None),
        ("%s, %d conns: req/s" % (hpa, lc), "%.0f", ("hpa_c%d" % lc, "rps")),
        ("%s, %d conns: wrk p50 / p99 (ms)" % (hpa, c), None, None),
        ("%s, %d conns: req/s" % (hpa, c), "%.0f", ("hpa_c%d" % c, "rps")),
    ]
    pairs = {
        "all pods, 1 conn: wrk p50 / p99 (ms)": ("list_wrk", "p50_ms", "p99_ms"),
        "all pods, cache %s: handler p50 / p99 (ms)" % args.cache_ttl:
            ("list_cached", "handler_p50_ms", "handler_p99_ms"),
        "%s, %d conns: handler p50 / p99 (ms)" % (hpa, lc):
            ("hpa_split", "handler_p50_ms", "handler_p99_ms"),
        "%s, %d conns: wrk p50 / p99 (ms)" % (hpa, lc): ("hpa_c%d" % lc, "p50_ms", "p99_ms"),
        "%s, %d conns: wrk p50 / p99 (ms)" % (hpa, c): ("hpa_c%d" % c, "p50_ms", "p99_ms"),
    }
    width = max(len(name) for name, _, _ in rows)
    print("| %-*s | %s |" % (width, "figure", "median (runs)"))
    print("|%s|---|" % ("-" * (width + 2)))
    for name, form, keys in rows:
        if keys is None:
            group, low, high = pairs[name]
            cell = "%.2f / %.2f" % (median(results, group, low), median(results, group, high))
            each = ", ".join("%.1f/%.1f" % (r[group][low], r[group][high]) for r in results)
        else:
            cell = form % median(results, *keys)
            each = ", ".join(form % median([r], *keys) for r in results)
        print("| %-*s | %s (%s) |" % (width, name, cell, each))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(run.REPO, "build-perf"))
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--pods-per-namespace", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10, help="length of each wrk load")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--latency-connections", type=int, default=2)
    parser.add_argument("--cache-ttl", default="30s",
                        help="--metrics-cache-ttl of the cache phase; longer than --seconds")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if not args.no_build:
        run.install_packages()
        run.build(args.build_dir)
        subprocess.run(["cmake", "--build", args.build_dir, "--target", "resource_render_bench",
                        "-j2"], check=True, stdout=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    bench = ResourceBench(args)
    results = []
    try:
        for _ in range(args.runs):
            results.append(bench.run_once())
            print(json.dumps(results[-1]), file=sys.stderr)
    finally:
        bench.procs.stop_all()
    print_table(results, args, bench.pods)
    render = subprocess.run([os.path.join(args.build_dir, "bench", "resource_render_bench"),
                             "--namespaces", str(args.namespaces), "--pods-per-namespace",
                             str(args.pods_per_namespace)],
                            capture_output=True, text=True, check=True).stdout
    print()
    print("bench/resource_render_bench (no network):")
    print(render)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results, "render": render}, f, indent=1)


if __name__ == "__main__":
    main()
