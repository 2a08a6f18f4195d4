#!/usr/bin/env python3
"""The scale-out benchmark of issue 17: `python3 bench/replicas_bench.py`.

What N independent replicas behind one Service cost the Prometheus they share
(docs/scale-out.md). One real Prometheus scrapes a simulated dcgm-exporter serving one GPU per
pod for --pods pods (--deployments Deployments of equal size, 10 per namespace); the fake
Kubernetes API of the integration tests holds the same pods. Each adapter replica talks to
Prometheus through its own recording proxy (tests/integration/recording_proxy.py), so every
/api/v1/query, /api/v1/series and /api/v1/query_range is counted per replica. The config is the
shipped config/gpu-dcgm-exporter.yaml (2 rules, one seriesQuery) + config/gpu-external-rules.yaml
(2 seriesQueries) + one forecastRule: 3 distinct seriesQueries, 1 forecast.

Time runs --time-scale times faster than in a cluster: the HPA sync period (15 s), the cache TTL
(15 s), --metrics-relist-interval (1m) and the forecast's refreshInterval (1m) are all divided by
it. M = --hpas simulated HPAs are driven the way the HPA controller drives them: 5 workers
(--concurrent-horizontal-pod-autoscaler-syncs), each HPA requeued one period after its previous
request finished, every request sent to the next replica in turn (the Service). Each HPA's
request is sent --rounds times in each of two workloads:
  distinct  HPA i asks pods/*/DCGM_FI_DEV_GPU_UTIL?labelSelector=app=dep-i in its namespace;
  shared    every HPA asks the same pods/*/DCGM_FI_DEV_GPU_UTIL_AVG?labelSelector=app=dep-00.
For N = 1 and 2 replicas and --metrics-cache-ttl = 0 and one HPA period it measures Prometheus
/api/v1/query calls per HPA request, /api/v1/series calls per relist and query_range calls per
forecast refresh of each replica (and the interval between them), latency p50/p99 per replica as
the simulated HPAs saw it and as the replica's access log (--v=6) has it, pod LISTs and WATCHes
at the Kubernetes API, and RSS per replica. Prints medians over --runs runs; every answer is
checked against the values the exporter serves."""

import argparse
import heapq
import json
import os
import signal
import statistics
import sys
import threading
import time
import urllib.parse

import report  # cpu_model
import run  # bench/run.py: TlsClient, percentile, proc_status, harness

harness = run.harness
from recording_proxy import RecordingProxy  # noqa: E402  (tests/integration, on run's path)

CUSTOM = "/apis/custom.metrics.k8s.io/v1beta1"
RULE_FILES = [os.path.join(run.REPO, "config", name)
              for name in ("gpu-dcgm-exporter.yaml", "gpu-external-rules.yaml")]
CONFIG_SHAPE = "4 rules, 3 distinct seriesQueries (the 2 dcgm rules share one), 1 forecastRule"
FORECAST = """forecastRules:
- name: gpu_demand_forecast
  query: sum(DCGM_FI_DEV_GPU_UTIL)
  history: 48h
  refreshInterval: %dms
"""
HPA_WORKERS = 5  # the HPA controller's --concurrent-horizontal-pod-autoscaler-syncs default
HPA_PERIOD_S = 15.0  # its --horizontal-pod-autoscaler-sync-period default
RELIST_S = 60.0  # --metrics-relist-interval default
REFRESH_S = 60.0  # forecastRules[].refreshInterval default
DEPLOYMENTS_PER_NAMESPACE = 10


class TimedProxy(RecordingProxy):
    """A recording proxy that also notes when each request arrived (time.monotonic())."""

    def _record(self, request):
        request.at = time.monotonic()
        super()._record(request)

    def calls(self, endpoint, since=0.0, until=float("inf")):
        """Arrival times of the calls to `endpoint` (e.g. "/api/v1/series") in [since, until]."""
        return [r.at for r in self.requests()
                if r.target.split("?", 1)[0] == endpoint and since <= r.at <= until]


class Cluster:
    """The pods: deployment d has pods dep-<d>-<hash>-<k>, labelled app=dep-<d>, in namespace
    team-<d // 10>; each pod has one GPU whose utilisation and memory the exporter serves."""

    def __init__(self, pods, deployments):
        if pods % deployments:
            raise SystemExit("--pods must be a multiple of --deployments")
        self.deployments = ["dep-%02d" % d for d in range(deployments)]
        self.per_deployment = pods // deployments
        self.pods = []  # (namespace, deployment, pod)
        for d, deployment in enumerate(self.deployments):
            for k in range(self.per_deployment):
                self.pods.append((self.namespace(d), deployment,
                                  "%s-5d4f8c7b9-%03d" % (deployment, k)))

    @staticmethod
    def namespace(deployment_index):
        return "team-%d" % (deployment_index // DEPLOYMENTS_PER_NAMESPACE)

    @staticmethod
    def utilisation(i):
        return float((i * 37) % 100)

    @staticmethod
    def memory_used(i):
        return float(1024 + i)

    def exposition(self):
        lines = []
        for name, value in (("DCGM_FI_DEV_GPU_UTIL", self.utilisation),
                            ("DCGM_FI_DEV_FB_USED", self.memory_used)):
            lines.append("# TYPE %s gauge" % name)
            for i, (namespace, _, pod) in enumerate(self.pods):
                node, gpu = "gpu-node-%d" % (i // 8), i % 8
                lines.append(
                    '%s{gpu="%d",UUID="GPU-%08x",Hostname="%s",modelName="Tesla T4",'
                    'container="serving",namespace="%s",pod="%s"} %r'
                    % (name, gpu, i, node, namespace, pod, value(i)))
        return "\n".join(lines) + "\n"

    def objects(self):
        namespaces = sorted({namespace for namespace, _, _ in self.pods})
        return {"pods": [{"name": pod, "namespace": namespace, "labels": {"app": deployment}}
                         for namespace, deployment, pod in self.pods],
                "namespaces": [{"name": n} for n in namespaces]}

    def request(self, deployment_index, metric):
        return "%s/namespaces/%s/pods/*/%s?labelSelector=%s" % (
            CUSTOM, self.namespace(deployment_index), metric,
            urllib.parse.quote("app=" + self.deployments[deployment_index]))

    def expected(self, deployment_index, value):
        """{pod: quantity} an HPA of that deployment must be answered."""
        return {pod: harness.milli_quantity(value(i)) for i, (_, deployment, pod)
                in enumerate(self.pods) if deployment == self.deployments[deployment_index]}


def bursts(times, gap):
    """Calls grouped into bursts (one relist, one refresh): [(first call time, calls)]."""
    groups = []
    for at in sorted(times):
        if groups and at - groups[-1][-1] <= gap:
            groups[-1].append(at)
        else:
            groups.append([at])
    return [(g[0], len(g)) for g in groups]


class HpaDriver:
    """Sends `paths` (one per simulated HPA) `rounds` times each, as the HPA controller does:
    HPA_WORKERS workers; an HPA is due again one period after its previous request finished;
    the first requests are spread evenly over one period. Each request goes to the next
    replica in turn, over that worker's own keep-alive connection to it."""

    def __init__(self, ports, paths, period, rounds, expected):
        self.ports, self.paths, self.period, self.rounds = ports, paths, period, rounds
        self.expected = expected  # {path: {pod: quantity}}, checked on every answer
        self.lock = threading.Condition()
        start = time.monotonic()
        self.due = [(start + i * period / len(paths), i, 0) for i in range(len(paths))]
        heapq.heapify(self.due)
        self.in_flight = 0
        self.next_replica = 0
        self.latencies = [[] for _ in ports]  # ms, per replica
        self.failures = []

    def _take(self):
        """The next (hpa, round, replica) once due; None when every request has been sent."""
        with self.lock:
            while True:
                if not self.due:
                    if self.in_flight == 0:
                        return None
                    self.lock.wait()
                    continue
                at, hpa, sent = self.due[0]
                wait = at - time.monotonic()
                if wait > 0:
                    self.lock.wait(wait)
                    continue
                heapq.heappop(self.due)
                self.in_flight += 1
                replica = self.next_replica
                self.next_replica = (replica + 1) % len(self.ports)
                return hpa, sent, replica

    def _done(self, hpa, sent):
        with self.lock:
            self.in_flight -= 1
            if sent + 1 < self.rounds:
                heapq.heappush(self.due, (time.monotonic() + self.period, hpa, sent + 1))
            self.lock.notify_all()

    def _worker(self):
        clients = {}
        while True:
            job = self._take()
            if job is None:
                return
            hpa, sent, replica = job
            path = self.paths[hpa]
            if replica not in clients:  # outside the timing: a new TLS context loads CA files
                clients[replica] = run.TlsClient(self.ports[replica])
            began = time.monotonic()
            try:
                status, body = clients[replica].get_json(path)
                elapsed = (time.monotonic() - began) * 1000.0
                got = {i["describedObject"]["name"]: i["value"] for i in body["items"]} \
                    if status == 200 else None
                if got != self.expected[path]:
                    self.failures.append((path, status, body))
                else:
                    self.latencies[replica].append(elapsed)
            except (OSError, run.http.client.HTTPException, ValueError) as error:
                clients.pop(replica, None)
                self.failures.append((path, "error", repr(error)))
            self._done(hpa, sent)

    def run(self):
        workers = [threading.Thread(target=self._worker) for _ in range(HPA_WORKERS)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        if self.failures:
            raise RuntimeError("%d wrong or failed answers, the first: %r"
                               % (len(self.failures), self.failures[0]))
        return self.latencies


class ReplicasBench:
    def __init__(self, args):
        self.args = args
        self.scale = args.time_scale
        self.cluster = Cluster(args.pods, args.deployments)
        if args.hpas > args.deployments:
            raise SystemExit("--hpas must be at most --deployments (one HPA per Deployment)")
        self.procs = harness.Processes()
        self.exporter = harness.FunctionExporter(self.cluster.exposition)
        self.prometheus = harness.Prometheus(self.procs, self.exporter.port)
        self.prometheus.wait_for_series("DCGM_FI_DEV_GPU_UTIL", args.pods)
        self.kube = harness.FakeKube(self.procs, self.cluster.objects())
        self.config = os.path.join(self.procs.workdir, "replicas.yaml")
        with open(self.config, "w") as f:
            for path in RULE_FILES:
                with open(path) as rules:
                    f.write(rules.read() + "\n")
            f.write(FORECAST % round(REFRESH_S / self.scale * 1000))
        self.period = HPA_PERIOD_S / self.scale
        self.relist_s = RELIST_S / self.scale
        self.refresh_s = REFRESH_S / self.scale
        self.proxies = []

    def stop(self):
        self.procs.stop_all()
        self.exporter.stop()
        for proxy in self.proxies:
            proxy.stop()

    def start_replicas(self, count, cache_ttl_ms):
        """`count` adapters, each behind its own proxy to the one Prometheus, once each answers
        an HPA-shaped request of its own (DCGM_FI_DEV_FB_USED, which the workloads do not ask,
        so it leaves nothing in their caches); [(process, port, proxy)]."""
        replicas = []
        for _ in range(count):
            proxy = TimedProxy(self.prometheus.url)
            self.proxies.append(proxy)
            port = harness.free_port()
            process = self.procs.spawn("adapter-%d" % port, [
                os.path.join(self.args.build_dir, "metrics-adapter"), "--config=" + self.config,
                "--prometheus-url=" + proxy.url, "--secure-port=%d" % port,
                "--bind-address=127.0.0.1",
                "--cert-dir=" + os.path.join(self.procs.workdir, "certs-%d" % port),
                "--authentication-mode=none", "--lister-kubeconfig=" + self.kube.kubeconfig,
                "--metrics-relist-interval=%dms" % round(self.relist_s * 1000),
                "--metrics-cache-ttl=%dms" % cache_ttl_ms, "--v=6"])
            replicas.append((process, port, proxy))
        last = len(self.cluster.deployments) - 1
        probe = self.cluster.request(last, "DCGM_FI_DEV_FB_USED")
        want = self.cluster.expected(last, self.cluster.memory_used)
        for process, port, _ in replicas:
            def answers(process=process, port=port):
                if process.poll() is not None:
                    raise SystemExit("the adapter exited: " + self.procs.log(process)[-2000:])
                status, body = run.TlsClient(port).get_json(probe)
                return status == 200 and {i["describedObject"]["name"]: i["value"]
                                          for i in body["items"]} == want
            harness.wait_until(answers, timeout=60, interval=0.05,
                               what="replica on port %d to serve" % port)
        return replicas

    def workload(self, replicas, shared):
        """Drives the simulated HPAs; {queries per HPA request, latency per replica}."""
        hpas = range(self.args.hpas)
        if shared:
            paths = [self.cluster.request(0, "DCGM_FI_DEV_GPU_UTIL_AVG")] * len(hpas)
            expected = {paths[0]: self.cluster.expected(0, self.cluster.utilisation)}
        else:
            paths = [self.cluster.request(i, "DCGM_FI_DEV_GPU_UTIL") for i in hpas]
            expected = {p: self.cluster.expected(i, self.cluster.utilisation)
                        for i, p in enumerate(paths)}
        offsets = [len(self.procs.log(process)) for process, _, _ in replicas]
        began = time.monotonic()
        latencies = HpaDriver([port for _, port, _ in replicas], paths, self.period,
                              self.args.rounds, expected).run()
        ended = time.monotonic()
        queries = [len(proxy.calls("/api/v1/query", began, ended)) for _, _, proxy in replicas]
        handler = [self.handler_ms(process, offset, set(paths), len(sent))
                   for (process, _, _), offset, sent in zip(replicas, offsets, latencies)]
        requests = len(paths) * self.args.rounds
        return {"requests": requests, "queries": queries,
                "queries_per_request": sum(queries) / requests,
                "queries_per_hpa_period": sum(queries) / self.args.rounds,
                "p50_ms": [run.percentile(l, 50) for l in latencies],
                "p99_ms": [run.percentile(l, 99) for l in latencies],
                "handler_p50_ms": [run.percentile(h, 50) for h in handler],
                "handler_p99_ms": [run.percentile(h, 99) for h in handler],
                "per_replica_requests": [len(l) for l in latencies]}

    def handler_ms(self, process, offset, paths, requests):
        """The adapter's own time for each of the `requests` requests of `paths` it logged after
        `offset` (its access log at --v=6, written as each answer leaves)."""
        def logged():
            lines = [float(m.group(3)) for m in run.ACCESS_LINE.finditer(
                self.procs.log(process)[offset:]) if m.group(1) in paths]
            return lines if len(lines) >= requests else None
        return harness.wait_until(logged, timeout=10, interval=0.05,
                                  what="the access log of %d requests" % requests)

    def background(self, proxy, endpoint, interval):
        """Calls of the first burst (at start), calls per later burst (median) and the median
        time between bursts (s, in cluster time)."""
        found = bursts(proxy.calls(endpoint), gap=interval / 4)
        starts = [at for at, _ in found]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        return {"bursts": len(found), "first_burst_calls": found[0][1],
                "calls_per_burst": statistics.median(n for _, n in found[1:]),
                "interval_s": statistics.median(gaps) * self.scale}

    def kube_calls(self):
        """(object LISTs, WATCHes) the fake Kubernetes API has answered so far."""
        return sum(self.kube.stats().values()), sum(self.kube.watch_stats().values())

    def case(self, count, cache_ttl_s):
        kube_before = self.kube_calls()
        replicas = self.start_replicas(count, round(cache_ttl_s / self.scale * 1000))
        result = {"distinct": self.workload(replicas, shared=False),
                  "shared": self.workload(replicas, shared=True)}
        # Three relists and refreshes at least: the first at start, two on schedule.
        time.sleep(max(0.0, 2.5 * self.relist_s - (time.monotonic() - replicas[0][2].calls(
            "/api/v1/series")[0])))
        result["series"] = [self.background(p, "/api/v1/series", self.relist_s)
                            for _, _, p in replicas]
        result["query_range"] = [self.background(p, "/api/v1/query_range", self.refresh_s)
                                 for _, _, p in replicas]
        lists, watches = (after - before for after, before in zip(self.kube_calls(), kube_before))
        result["kube_lists"], result["kube_watches"] = lists, watches
        result["rss_mib"] = [run.proc_status(process.pid, "VmRSS") for process, _, _ in replicas]
        for process, _, proxy in replicas:
            self.procs.stop(process)
            proxy.stop()
            self.proxies.remove(proxy)
        return result

    def run_once(self):
        return {"%d/%g" % (count, ttl): self.case(count, ttl)
                for count in (1, 2) for ttl in (0, HPA_PERIOD_S)}


def print_table(results, args):
    print()
    print("scale-out benchmark: %d pods in %d Deployments, %d HPAs x %d requests per workload, "
          "time %gx faster than in a cluster; %d cores (%s) shared by Prometheus, the adapters, "
          "the proxies and the HPA driver; median of %d run(s)"
          % (args.pods, args.deployments, args.hpas, args.rounds, args.time_scale,
             os.cpu_count(), report.cpu_model(), len(results)))
    print("config: %s" % CONFIG_SHAPE)
    print("load average at the end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    cases = list(results[0])
    heads = ["N=%s, cache TTL %ss" % tuple(case.split("/")) for case in cases]

    def each(case, pick, form):
        """One cell: the median over runs, per replica when pick gives a list."""
        values = [pick(r[case]) for r in results]
        if isinstance(values[0], list):
            return " / ".join(form % statistics.median(v[i] for v in values)
                              for i in range(len(values[0])))
        return form % statistics.median(values)

    rows = [
        ("distinct selectors: /api/v1/query per HPA request",
         lambda c: c["distinct"]["queries_per_request"], "%.3f"),
        ("distinct selectors: /api/v1/query per HPA period, all replicas",
         lambda c: c["distinct"]["queries_per_hpa_period"], "%.1f"),
        ("one shared query: /api/v1/query per HPA request",
         lambda c: c["shared"]["queries_per_request"], "%.3f"),
        ("one shared query: /api/v1/query per HPA period, all replicas",
         lambda c: c["shared"]["queries_per_hpa_period"], "%.1f"),
        ("/api/v1/series per relist after the first, each replica",
         lambda c: [s["calls_per_burst"] for s in c["series"]], "%g"),
        ("relist interval, each replica (s)",
         lambda c: [s["interval_s"] for s in c["series"]], "%.0f"),
        ("query_range per forecast refresh, each replica",
         lambda c: [s["calls_per_burst"] for s in c["query_range"]], "%g"),
        ("query_range of the first fetch (48h history), each replica",
         lambda c: [s["first_burst_calls"] for s in c["query_range"]], "%g"),
        ("distinct: latency p50, each replica (ms)",
         lambda c: c["distinct"]["p50_ms"], "%.1f"),
        ("distinct: latency p99, each replica (ms)",
         lambda c: c["distinct"]["p99_ms"], "%.1f"),
        ("shared: latency p50, each replica (ms)", lambda c: c["shared"]["p50_ms"], "%.1f"),
        ("shared: latency p99, each replica (ms)", lambda c: c["shared"]["p99_ms"], "%.1f"),
        ("distinct: adapter's handler p50, each replica (ms)",
         lambda c: c["distinct"]["handler_p50_ms"], "%.1f"),
        ("distinct: adapter's handler p99, each replica (ms)",
         lambda c: c["distinct"]["handler_p99_ms"], "%.1f"),
        ("shared: adapter's handler p50, each replica (ms)",
         lambda c: c["shared"]["handler_p50_ms"], "%.1f"),
        ("shared: adapter's handler p99, each replica (ms)",
         lambda c: c["shared"]["handler_p99_ms"], "%.1f"),
        ("Kubernetes API: pod LISTs, all replicas", lambda c: c["kube_lists"], "%d"),
        ("Kubernetes API: pod WATCHes, all replicas", lambda c: c["kube_watches"], "%d"),
        ("RSS after the workloads, each replica (MiB)", lambda c: c["rss_mib"], "%.1f"),
    ]
    width = max(len(name) for name, _, _ in rows)
    print("| %-*s | %s |" % (width, "figure (median of runs)", " | ".join(heads)))
    print("|%s|%s" % ("-" * (width + 2), "---|" * len(heads)))
    for name, pick, form in rows:
        print("| %-*s | %s |" % (width, name, " | ".join(each(c, pick, form) for c in cases)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(run.REPO, "build"),
                        help="where metrics-adapter was built (Release)")
    parser.add_argument("--pods", type=int, default=200)
    parser.add_argument("--deployments", type=int, default=50)
    parser.add_argument("--hpas", type=int, default=50, help="M, one per Deployment")
    parser.add_argument("--rounds", type=int, default=4,
                        help="K: requests of each HPA per workload")
    parser.add_argument("--time-scale", type=float, default=15,
                        help="how much faster than a cluster: 15 makes the HPA period 1 s")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", help="also write every figure to this file")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    began = time.monotonic()
    bench = ReplicasBench(args)
    results = []
    try:
        for _ in range(args.runs):
            results.append(bench.run_once())
            print(json.dumps(results[-1]), file=sys.stderr)
    finally:
        bench.stop()
    print_table(results, args)
    print("took %.0f s" % (time.monotonic() - began))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
