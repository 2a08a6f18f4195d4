#!/usr/bin/env python3
"""The performance benchmark of issue 8, one command: `python3 bench/run.py`.

Builds Release (build-perf, -DMA_BUILD_BENCH=ON), then for each series count N starts the fake
Prometheus (bench/fake_prometheus.cpp), the fake Kubernetes API of the integration tests (100
pods labelled app=bench) and the real metrics-adapter with config/gpu-dcgm-exporter.yaml, and
measures:
  - discovery: time from exec to a complete discovery document, RSS after startup (idle), peak
    and steady RSS, CPU seconds per relist (/proc/<pid>/stat across relists);
  - load over TLS keep-alive (wrk): p50/p99 and requests/s of the discovery document and of
    pods/* over 100 pods with the HPA's labelSelector;
  - the adapter's own time for pods/* against Prometheus's (its access log at --v=6: handler
    latency and the time it waited on Prometheus, per request).
Issue 18 added: nginx serving the same discovery bytes as a same-run ceiling
(bench/nginx_reference.py), where the idle RSS goes (bench/memory_breakdown.py), start → ready
phase by phase (bench/startup_phases.py), and --baseline to set a saved --json run beside this
one (bench/report.py); round 4, mallocs per discovery request, ours and nginx's, counted by a
uprobe in runs of their own (bench/malloc_count.py; needs perf and root).
Each phase runs in its own adapter process, so relists (whose interval is short in the
discovery phase) do not disturb the load phases. Prints a table; --json writes the figures."""

import argparse
import datetime
import http.client
import json
import os
import re
import resource
import signal
import ssl
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import harness  # noqa: E402  (Processes, FakeKube, free_port, wait_until)
import malloc_count  # noqa: E402
import memory_breakdown  # noqa: E402
import nginx_reference  # noqa: E402
import report  # noqa: E402
import startup_phases  # noqa: E402

CONFIG = os.path.join(REPO, "config", "gpu-dcgm-exporter.yaml")
METRICS = 16  # distinct DCGM series names the fake serves
RESOURCES = 4  # namespace, pod, Hostname, service: each maps to a resource
RULES = 2  # the dcgm config serves every series as X and X_AVG
PODS = 100
DISCOVERY_PATH = "/apis/custom.metrics.k8s.io/v1beta1"
PODS_PATH = ("/apis/custom.metrics.k8s.io/v1beta1/namespaces/bench/pods/*/DCGM_FI_DEV_GPU_UTIL"
             "?labelSelector=app%3Dbench")
ACCESS_LINE = re.compile(r"GET (\S+) (\d+) ([\d.]+)ms(?: promql=([\d.]+)ms)?")
CLOCK_TICK = os.sysconf("SC_CLK_TCK")
BENCH_PACKAGES = ["wrk", "libbenchmark-dev", "nginx-light"]


def build(build_dir):
    # Release at -O2: g++ 12 at -O3 reports a false -Wrestrict in string concatenation
    # (src/discovery/resource_converter.cpp), which -Werror makes fatal.
    subprocess.run(["cmake", "-S", REPO, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG", "-DMA_BUILD_BENCH=ON"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build_dir, "--target", "metrics-adapter",
                    "fake_prometheus", "discovery_parse_bench", "-j2"], check=True,
                   stdout=subprocess.DEVNULL)


def install_packages():
    """What building and the load generator need, from Debian packages: the project's own list
    (scripts/install-deps.sh), then the bench-only ones."""
    subprocess.run(["bash", os.path.join(REPO, "scripts", "install-deps.sh")], check=True)
    missing = [p for p in BENCH_PACKAGES if subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True,
        text=True).stdout != "install ok installed"]
    if not missing:
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing,
                   check=True, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def parse_microbenchmark(build_dir):
    """{benchmark name: CPU microseconds per series} of bench/discovery_parse_bench.cpp; {} for
    a build without it (an older commit's, built by bench/ab.sh)."""
    binary = os.path.join(build_dir, "bench", "discovery_parse_bench")
    if not os.path.exists(binary):
        return {}
    out = subprocess.run([binary,
                          "--benchmark_format=json"], capture_output=True, text=True,
                         check=True).stdout
    return {b["name"].split("/")[0]: 1e6 / b["items_per_second"]
            for b in json.loads(out)["benchmarks"]}


def proc_status(pid, field):
    """A kB field of /proc/<pid>/status (VmRSS, VmHWM) in MiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK  # utime + stime


def client_context():
    """One TLS client context for every connection: making one loads the system's CA store,
    some 20 ms that would otherwise be counted in every start-up figure (the adapter's
    certificate is self-signed and not verified anyway)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


CLIENT_CONTEXT = client_context()


class TlsClient:
    """One keep-alive HTTPS connection to the adapter."""

    def __init__(self, port):
        self.connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=10,
                                                      context=CLIENT_CONTEXT)

    def get(self, path):
        """(status, body bytes). No User-Agent, like wrk, so the adapter answers compact JSON
        (it pretty-prints for curl and browsers)."""
        self.connection.request("GET", path)
        response = self.connection.getresponse()
        return response.status, response.read()

    def get_json(self, path):
        status, body = self.get(path)
        return status, json.loads(body) if body else None


class Bench:
    def __init__(self, args):
        self.args = args
        self.binary = os.path.join(args.build_dir, "metrics-adapter")
        self.fake_prometheus = os.path.join(args.build_dir, "bench", "fake_prometheus")
        self.procs = harness.Processes()
        objects = {"pods": [{"name": "bench-pod-%d" % i, "namespace": "bench",
                             "labels": {"app": "bench"}} for i in range(PODS)]}
        self.kube = harness.FakeKube(self.procs, objects)

    def start_prometheus(self, series):
        process = self.procs.spawn("prometheus-%d" % series, [
            self.fake_prometheus, "--series", str(series), "--metrics", str(METRICS),
            "--pods", str(PODS)])
        port = harness.wait_until(lambda: self._first_line(process), timeout=10,
                                  what="the fake Prometheus to print its port")
        return process, "http://127.0.0.1:%d" % int(port)

    def _first_line(self, process):
        text = self.procs.log(process)
        return text.split("\n", 1)[0] if "\n" in text else None

    def prometheus_stats(self, url):
        return harness.http_get_json(url + "/stats")

    def start_adapter(self, name, prometheus_url, relist_interval, verbosity, extra_args=()):
        port = harness.free_port()
        argv = [self.binary, "--config=" + CONFIG, "--prometheus-url=" + prometheus_url,
                "--secure-port=%d" % port, "--bind-address=127.0.0.1",
                "--cert-dir=" + os.path.join(self.procs.workdir, "certs-" + name),
                "--authentication-mode=none", "--lister-kubeconfig=" + self.kube.kubeconfig,
                "--metrics-relist-interval=" + relist_interval, "--max-requests-inflight=2000",
                "--v=%d" % verbosity] + list(extra_args)
        began = time.monotonic()
        exec_wall = time.time()  # for the wall-clock timestamps of its log
        process = self.procs.spawn("adapter-" + name, argv)
        process.exec_wall = exec_wall
        process.cert_dir = os.path.join(self.procs.workdir, "certs-" + name)
        return process, port, began

    def wait_for_discovery(self, process, port, began):
        """Seconds from exec to a discovery document with every expected entry."""
        expected = METRICS * RULES * RESOURCES
        return self.poll(process, port, began, DISCOVERY_PATH, lambda status, body: status == 200
                         and len(json.loads(body)["resources"]) >= expected,
                         "a discovery document with %d entries" % expected)

    def wait_for_ready(self, process, port, began):
        """Seconds from exec to /readyz answering 200."""
        return self.poll(process, port, began, "/readyz", lambda status, _: status == 200,
                         "/readyz to answer 200")

    def poll(self, process, port, began, path, done, what):
        """Seconds from exec until done(status, body) of GET path holds. One keep-alive
        connection per process, kept for the next poll, so a poll is one request and not a
        new TLS handshake."""
        last = None
        while time.monotonic() - began < self.args.discovery_timeout:
            if process.poll() is not None:
                raise RuntimeError("the adapter exited: " + self.procs.log(process)[-2000:])
            try:
                process.client = getattr(process, "client", None) or TlsClient(port)
                last = process.client.get(path)
                if done(*last):
                    return time.monotonic() - began
            except (OSError, http.client.HTTPException):
                process.client = None
            time.sleep(0.005)  # polling interval, not synchronisation
        raise RuntimeError("no %s after %ss (last answer: %r)"
                           % (what, self.args.discovery_timeout, last and last[1][:200]))

    def relists_done(self, process):
        return self.procs.log(process).count("relist: ")

    def discovery_phase(self, series, prometheus_url):
        process, port, began = self.start_adapter("discovery-%d" % series, prometheus_url,
                                                  self.args.relist_interval, 0)
        result = {"discovery_s": self.wait_for_discovery(process, port, began)}
        harness.wait_until(lambda: self.relists_done(process) >= 1, timeout=60,
                           what="the first relist to be logged")
        result["rss_after_first_relist_mib"] = proc_status(process.pid, "VmRSS")
        first = self.relists_done(process)
        cpu_before = cpu_seconds(process.pid)
        target = first + self.args.relists
        harness.wait_until(lambda: self.relists_done(process) >= target, interval=0.05,
                           timeout=self.args.relists * 120, what="%d relists" % target)
        result["cpu_per_relist_s"] = (cpu_seconds(process.pid) - cpu_before) / self.args.relists
        result["peak_rss_mib"] = proc_status(process.pid, "VmHWM")
        result["steady_rss_mib"] = proc_status(process.pid, "VmRSS")
        result["steady_anon_mib"] = proc_status(process.pid, "RssAnon")
        self.procs.stop(process)
        return result

    def wrk(self, port, path, connections, seconds, server_cpu=None):
        return wrk(port, path, connections, seconds, server_cpu)

    def load_phase(self, series, prometheus_url):
        process, port, began = self.start_adapter("load-%d" % series, prometheus_url, "1h", 0)
        self.wait_for_discovery(process, port, began)
        idle = proc_status(process.pid, "VmRSS")
        idle_anon = proc_status(process.pid, "RssAnon")
        idle_memory = memory_breakdown.breakdown(process.pid, self.binary)
        status, body = TlsClient(port).get_json(PODS_PATH)
        assert status == 200 and len(body["items"]) == PODS, (status, body)
        nginx = self.start_nginx(process, port)
        pools = sorted({self.args.latency_connections, self.args.connections})
        runs = {(path, pool): [] for path in ("discovery", "pods", "nginx_discovery")
                for pool in pools}
        stats_before = self.prometheus_stats(prometheus_url)
        pods_requests = 0
        for _ in range(self.args.runs):
            for pool in pools:
                runs[("discovery", pool)].append(self.wrk(
                    port, DISCOVERY_PATH, pool, self.args.seconds,
                    lambda: cpu_seconds(process.pid)))
                if pool == self.args.connections:  # the reference right after ours
                    runs[("nginx_discovery", pool)].append(self.wrk(
                        nginx.port, DISCOVERY_PATH, pool, self.args.seconds, nginx.cpu_seconds))
                pods = self.wrk(port, PODS_PATH, pool, self.args.seconds)
                pods_requests += pods["rps"] * self.args.seconds
                runs[("pods", pool)].append(pods)
        stats = self.prometheus_stats(prometheus_url)
        allocations = self.allocations(process, port, nginx)
        queries = stats["query_calls"] - stats_before["query_calls"]
        busy_us = stats["query_busy_us"] - stats_before["query_busy_us"]
        result = {"idle_rss_mib": idle, "idle_anon_mib": idle_anon, "idle_memory": idle_memory,
                  "rss_after_load_mib": proc_status(process.pid, "VmRSS"),
                  "prometheus_queries_per_pods_request": queries / max(pods_requests, 1),
                  "fake_prometheus_ms_per_query": busy_us / 1000.0 / max(queries, 1),
                  "nginx_tls": nginx.tls, "allocations": allocations}
        for (path, pool), values in runs.items():
            if values:
                result["%s_c%d" % (path, pool)] = {
                    key: statistics.median(v[key] for v in values) for key in values[0]}
        # Each run loads ours then nginx back to back: the median of the per-run ratios follows
        # the machine's load better than a ratio of medians.
        pool = self.args.connections
        pairs = list(zip(runs[("discovery", pool)], runs[("nginx_discovery", pool)]))
        result["ratio_discovery_c%d" % pool] = {
            key: statistics.median(ours[key] / theirs[key] for ours, theirs in pairs)
            for key in ("rps", "p50_ms", "p99_ms", "server_cpu_us")}
        nginx.stop()
        self.procs.stop(process)
        return result

    def allocations(self, process, port, nginx):
        """Mallocs per discovery request at --connections, ours and nginx's (bench/
        malloc_count.py), each from a run of its own after the timed ones; {} without perf."""
        if not malloc_count.available():
            return {}
        pool, seconds = self.args.connections, self.args.seconds
        return {
            "discovery": malloc_count.per_request(
                [process.pid], lambda: self.wrk(port, DISCOVERY_PATH, pool, seconds)),
            "nginx_discovery": malloc_count.per_request(
                nginx.pids(), lambda: self.wrk(nginx.port, DISCOVERY_PATH, pool, seconds)),
        }

    def start_nginx(self, process, port):
        """nginx serving the bytes the adapter serves now, with its certificate and key."""
        status, document, tls = nginx_reference.fetch(port, DISCOVERY_PATH)
        assert status == 200, status
        nginx = nginx_reference.NginxReference(
            self.procs, DISCOVERY_PATH, document, os.path.join(process.cert_dir, "apiserver.crt"),
            os.path.join(process.cert_dir, "apiserver.key"), os.cpu_count())
        nginx.tls = nginx_reference.fetch(nginx.port, DISCOVERY_PATH)[2]
        if nginx.tls != tls:
            nginx.stop()
            raise RuntimeError("nginx negotiates %s, the adapter %s" % (nginx.tls, tls))
        return nginx

    def startup_phase(self, series, prometheus_url):
        """Start → ready and its phases (bench/startup_phases.py), median of --runs starts."""
        starts = []
        for index in range(self.args.runs):
            process, port, began = self.start_adapter("start-%d-%d" % (series, index),
                                                      prometheus_url, "1h", 6)
            ready = self.wait_for_ready(process, port, began)
            discovered = self.wait_for_discovery(process, port, began)
            phases = startup_phases.phases(self.procs.log(process), process.exec_wall,
                                           process.exec_wall + discovered)
            phases.update(ready_s=ready, discovery_s=discovered)
            starts.append(phases)
            self.procs.stop(process)
        return {key: (None if any(s[key] is None for s in starts)
                      else statistics.median(s[key] for s in starts)) for key in starts[0]}

    def split_phase(self, series, prometheus_url):
        """pods/* per request: the adapter's handler time minus its wait on Prometheus."""
        process, port, began = self.start_adapter("split-%d" % series, prometheus_url, "1h", 6)
        self.wait_for_discovery(process, port, began)
        offset = len(self.procs.log(process))
        self.wrk(port, PODS_PATH, self.args.latency_connections, self.args.seconds)
        overheads, waits, totals = [], [], []
        for match in ACCESS_LINE.finditer(self.procs.log(process)[offset:]):
            if match.group(1).startswith("/apis/custom.metrics.k8s.io/v1beta1/namespaces/bench"):
                waited = float(match.group(4) or 0)
                overheads.append(float(match.group(3)) - waited)
                waits.append(waited)
                totals.append(float(match.group(3)))
        self.procs.stop(process)
        return {"requests": len(overheads), "overhead_p50_ms": percentile(overheads, 50),
                "overhead_p99_ms": percentile(overheads, 99),
                "prometheus_p50_ms": percentile(waits, 50),
                "prometheus_p99_ms": percentile(waits, 99),
                "handler_p50_ms": percentile(totals, 50), "handler_p99_ms": percentile(totals, 99)}

    def real_prometheus_phase(self):
        """pods/* over the 100 bench pods against a real Prometheus (the Debian package)
        scraping an exporter of their GPU utilisation every second: what an HPA's request costs
        end to end, Prometheus's query engine included. Independent of the series count."""
        exporter = harness.FunctionExporter(bench_pods_exposition)
        prometheus = harness.Prometheus(self.procs, exporter.port)
        prometheus.wait_for_series('DCGM_FI_DEV_GPU_UTIL{namespace="bench"}', PODS)
        process, port, began = self.start_adapter("real-prometheus", prometheus.url, "1h", 0)
        self.poll(process, port, began, PODS_PATH, lambda status, body: status == 200
                  and len(json.loads(body)["items"]) == PODS, "pods/* with %d pods" % PODS)
        runs = {pool: [] for pool in sorted({self.args.latency_connections,
                                             self.args.connections})}
        for _ in range(self.args.runs):
            for pool in runs:
                runs[pool].append(self.wrk(port, PODS_PATH, pool, self.args.seconds,
                                           lambda: cpu_seconds(process.pid)))
        self.procs.stop(process)
        self.procs.stop(prometheus.process)
        exporter.stop()
        return {"pods_c%d" % pool: {key: statistics.median(v[key] for v in values)
                                    for key in values[0]} for pool, values in runs.items()}

    def run(self, series, real_prometheus):
        prometheus, url = self.start_prometheus(series)
        result = {"series": series}
        result.update(self.discovery_phase(series, url))
        result["startup"] = self.startup_phase(series, url)
        if not self.args.skip_load:
            result.update(self.load_phase(series, url))
            result["split"] = self.split_phase(series, url)
        self.procs.stop(prometheus)
        if real_prometheus and not self.args.skip_load:
            result["real_prometheus"] = self.real_prometheus_phase()
        return result


def bench_pods_exposition():
    """DCGM_FI_DEV_GPU_UTIL of the bench pods, one GPU each, as dcgm-exporter labels it."""
    lines = ["# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    for i in range(PODS):
        lines.append('DCGM_FI_DEV_GPU_UTIL{gpu="%d",UUID="GPU-%08x",Hostname="gpu-node-%d",'
                     'modelName="Tesla T4",container="app",namespace="bench",pod="bench-pod-%d"}'
                     ' %d' % (i % 8, i, i // 8, i, (i * 7) % 100))
    return "\n".join(lines) + "\n"


def wrk(port, path, connections, seconds, server_cpu=None):
    """`wrk -t1` against the adapter over TLS keep-alive: req/s, p50/p99 (ms), non-2xx count,
    the cores wrk itself kept busy (near 1: the load generator is the limit), and with
    server_cpu (the server's CPU seconds so far) the server's CPU microseconds per request,
    a figure the machine's other load disturbs much less than req/s."""
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_before = server_cpu() if server_cpu else 0.0
    out = subprocess.run(["wrk", "-t1", "-c%d" % connections, "-d%ds" % seconds, "--latency",
                          "https://127.0.0.1:%d%s" % (port, path)],
                         capture_output=True, text=True, check=True).stdout
    server_used = server_cpu() - server_before if server_cpu else None
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # only wrk ended in between
    result = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
              "requests": int(re.search(r"(\d+) requests in", out).group(1)),
              "client_cores": (children.ru_utime + children.ru_stime - children_before.ru_utime
                               - children_before.ru_stime) / seconds}
    if server_cpu:
        result["server_cpu_us"] = server_used * 1e6 / max(result["requests"], 1)
    for percentile in ("50", "99"):
        match = re.search(r"\s%s%%\s+([\d.]+)(us|ms|s)\b" % percentile, out)
        scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[match.group(2)]
        result["p%s_ms" % percentile] = float(match.group(1)) * scale
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    result["errors"] = int(errors.group(1)) if errors else 0
    return result


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build-perf"))
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--connections", type=int, default=16,
                        help="keep-alive connections of the throughput runs")
    parser.add_argument("--latency-connections", type=int, default=2,
                        help="keep-alive connections of the latency runs")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="load runs; the median is shown")
    parser.add_argument("--relists", type=int, default=3, help="relists CPU is averaged over")
    parser.add_argument("--relist-interval", default="1s")
    parser.add_argument("--discovery-timeout", type=float, default=120)
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--baseline", metavar="FILE.json",
                        help="a saved --json run to print beside this one (old → new, new/old)")
    args = parser.parse_args()
    try:  # before the bench's minutes, not after
        baseline = report.load_baseline(args.baseline) if args.baseline else None
    except ValueError as error:
        parser.error(str(error))
    if not args.no_build:
        install_packages()
        build(args.build_dir)
    # Stopped from outside: still stop every process started (in the `finally` below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    per_series = parse_microbenchmark(args.build_dir)
    load_before = report.load_average()
    bench = Bench(args)
    results = []
    try:
        for index, series in enumerate(int(s) for s in args.sizes.split(",")):
            results.append(bench.run(series, real_prometheus=index == 0))
            print(json.dumps(results[-1]), file=sys.stderr)
    finally:
        bench.procs.stop_all()
    report.print_table(args, results, load_before)
    print("discovery without the network (bench/discovery_parse_bench, CPU per series): %s"
          % (", ".join("%s %.2f us" % item for item in per_series.items()) or "not built"))
    if args.baseline:
        report.print_baseline(args, results, baseline, args.baseline)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args),
                       "date": datetime.datetime.now().isoformat(" ", "seconds"),
                       "load_average": "before: %s; at the end: %s" % (
                           load_before, report.load_average()),
                       "results": results, "rows": report.row_figures(args, results),
                       "parse_us_per_series": per_series}, f, indent=1)


if __name__ == "__main__":
    main()
