#!/usr/bin/env python3
"""Soak test for metrics-adapter (on demand, not part of the test gate).

Starts what the integration tests start (simulated GPU exporter, Prometheus, the fake
Kubernetes API, the adapter; all from tests/integration/harness.py) or attaches to a running
adapter, then drives a mixed request load at a fixed rate for --duration seconds:

  discovery   /apis, the custom and external group versions
  pods/*      every pod's metric, with and without the labelSelector the HPA sends
  named       one pod's metric by name
  external    external.metrics.k8s.io values
  bad         invalid selector, bad URL escape (400), unknown metric and group (404)
  slow        a client that trickles its request header over ~2 s (must still get 200)
  stalled     a client that sends half a header and stops (the adapter must close it)
  disconnect  clients that hang up after the handshake, mid-header or before the answer

It samples the adapter's RSS, open file descriptors and threads every --sample-every seconds
and reports RSS over time (first, baseline after warm-up, min, max, end, drift), outcomes by
status code per request kind and latency percentiles per kind. Exit status 0 only when RSS
stayed within --rss-tolerance of the baseline, no 5xx was answered outside the injected
Kubernetes API outages (--kube-down-every) and every request got its expected status.

  scripts/soak.py --binary build/metrics-adapter --duration 120 --rate 50
  scripts/soak.py --attach https://127.0.0.1:6443 --ca-file ca.crt --pid 1234 --duration 600
"""

import argparse
import collections
import http.client
import json
import os
import random
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import harness  # noqa: E402
from test_kubernetes import cluster_objects  # noqa: E402  (the integration tests' cluster)

CUSTOM = "/apis/custom.metrics.k8s.io"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
HPA_ACCEPT = "application/vnd.kubernetes.protobuf, */*"
# Relative frequency of each request kind.
MIX = {"discovery": 10, "pods/*": 30, "named": 25, "external": 15, "bad": 12, "slow": 3,
       "stalled": 1, "disconnect": 4}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "metrics-adapter"))
    parser.add_argument("--duration", type=float, default=120, help="seconds of load")
    parser.add_argument("--rate", type=float, default=50, help="requests started per second")
    parser.add_argument("--sample-every", type=float, default=10, help="RSS sampling period (s)")
    parser.add_argument("--warmup", type=float, default=None,
                        help="seconds before the RSS baseline (default: 10%% of --duration, "
                             "at most 300)")
    parser.add_argument("--rss-tolerance", type=float, default=5.0, help="allowed drift in %%")
    parser.add_argument("--header-timeout", type=int, default=3,
                        help="the adapter's --header-timeout in seconds (stalled clients)")
    parser.add_argument("--kube-down-every", type=float, default=0,
                        help="inject a Kubernetes API outage every N seconds (0: never)")
    parser.add_argument("--kube-down-for", type=float, default=15, help="outage length (s)")
    parser.add_argument("--workers", type=int, default=32, help="concurrent client threads")
    parser.add_argument("--malloc-arena-max", type=int,
                        help="start the adapter with MALLOC_ARENA_MAX=N (glibc's arena count)")
    parser.add_argument("--report", help="also write the report to this file")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--attach", help="base URL of a running adapter instead of starting one")
    parser.add_argument("--ca-file", help="CA that signed the attached adapter's certificate")
    parser.add_argument("--pid", type=int, help="process id of the attached adapter (for RSS)")
    parser.add_argument("--namespace", default="default", help="namespace of the pod requests")
    parser.add_argument("--selector", action="append", default=[],
                        help="labelSelector for pods/* requests when attached (repeatable)")
    args = parser.parse_args()
    if args.attach and not (args.ca_file and args.pid):
        parser.error("--attach needs --ca-file and --pid")
    if args.warmup is None:
        args.warmup = min(300.0, args.duration / 10)
    return args


class Target:
    """Where the adapter listens and how to trust it."""

    def __init__(self, base, ca_file, pid):
        parsed = urllib.parse.urlsplit(base)
        self.host, self.port = parsed.hostname, parsed.port or 443
        self.context = ssl.create_default_context(cafile=ca_file)
        self.pid = pid

    def tls_socket(self, timeout=30):
        raw = socket.create_connection((self.host, self.port), timeout=timeout)
        return self.context.wrap_socket(raw, server_hostname=self.host)

    def https(self):
        return http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=30)


class Environment:
    """The processes of the integration harness, or an adapter that is already running."""

    def __init__(self, args):
        self.procs = self.kube = self.adapter = None
        if args.attach:
            self.target = Target(args.attach, args.ca_file, args.pid)
            self.selectors = args.selector
            return
        if args.malloc_arena_max:
            os.environ["MALLOC_ARENA_MAX"] = str(args.malloc_arena_max)
        self.procs = harness.Processes()
        try:
            self._start(args)
        except BaseException:
            self.procs.stop_all()
            raise

    def _start(self, args):
        exporter = harness.Exporter(self.procs, mode="wave")
        prometheus = harness.Prometheus(self.procs, exporter.port)
        objects = cluster_objects(exporter)
        self.kube = harness.FakeKube(self.procs, objects)
        gpus = sum(1 for name, _, _ in exporter.samples() if name == "DCGM_FI_DEV_GPU_UTIL")
        prometheus.wait_for_series("DCGM_FI_DEV_GPU_UTIL", gpus)
        config = os.path.join(self.procs.workdir, "soak-rules.yaml")
        with open(config, "w") as f:
            f.write(preset_rules())
        self.adapter = harness.Adapter(self.procs, args.binary, config, prometheus.url,
                                       extra_args=["--lister-kubeconfig=" + self.kube.kubeconfig,
                                                   "--header-timeout=%ds" % args.header_timeout,
                                                   "--v=2"])
        self.target = Target(self.adapter.base, self.adapter.ca_file, self.adapter.process.pid)
        apps = sorted({pod["labels"]["app"] for pod in objects["pods"]})
        self.selectors = ["app=" + app for app in apps] + ["app in (%s)" % ",".join(apps[:2])]
        harness.wait_until(lambda: any(n.startswith("pods/") for n in custom_names(self.target)),
                           timeout=60, what="custom metrics discovery")
        harness.wait_until(lambda: external_names(self.target), timeout=60,
                           what="external metrics discovery")

    def stop(self):
        """Stops everything started; returns the adapter's exit status (None when attached)."""
        if self.procs is None:
            return None
        try:
            self.procs.stop_all()
        except AssertionError as error:  # the adapter did not exit cleanly: reported below
            print(error, file=sys.stderr)
        return self.adapter.process.returncode if self.adapter else None


def preset_rules():
    """The shipped presets in one file: both GPU exporters' rules and the external rules."""
    with open(os.path.join(REPO, "config", "gpu-alibaba-exporter.yaml")) as f:
        text = f.read()
    for preset, section in (("gpu-dcgm-exporter.yaml", "rules:"),
                            ("gpu-external-rules.yaml", "externalRules:")):
        with open(os.path.join(REPO, "config", preset)) as f:
            body = f.read().split("\n" + section + "\n", 1)[1]
        text += ("" if section == "rules:" else "\n" + section + "\n") + body
    return text


def get(target, path, connection=None):
    """(status, body) of one GET with the HPA's Accept header."""
    own = connection is None
    connection = connection or target.https()
    try:
        connection.request("GET", path, headers={"Accept": HPA_ACCEPT})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        if own:
            connection.close()


def json_get(target, path):
    status, body = get(target, path)
    return json.loads(body) if status == 200 else None


def custom_names(target):
    document = json_get(target, CUSTOM + "/v1beta1")
    return [r["name"] for r in document["resources"]] if document else []


def external_names(target):
    document = json_get(target, EXTERNAL)
    return [r["name"] for r in document["resources"]] if document else []


class Plan:
    """The concrete requests of each kind, derived from what the adapter discovered."""

    def __init__(self, target, namespace, selectors):
        quote = urllib.parse.quote
        metrics = sorted(n.split("/", 1)[1] for n in custom_names(target) if n.startswith("pods/"))
        base = CUSTOM + "/%s/namespaces/" + namespace + "/pods/"
        self.discovery = ["/apis", CUSTOM, CUSTOM + "/v1beta1", CUSTOM + "/v1beta2",
                          "/apis/external.metrics.k8s.io", EXTERNAL]
        self.pods = []
        for metric in metrics:
            for version in ("v1beta1", "v1beta2"):
                self.pods.append(base % version + "%2A/" + metric)
                self.pods += [base % version + "%2A/" + metric + "?labelSelector=" +
                              quote(s, safe="") for s in selectors]
        pod_names = set()
        for path in self.pods[:4]:
            status, body = get(target, path)
            if status == 200:
                pod_names |= {i["describedObject"]["name"] for i in json.loads(body)["items"]}
        self.named = [base % "v1beta2" + quote(pod, safe="") + "/" + metric
                      for pod in sorted(pod_names) for metric in metrics]
        self.external = [EXTERNAL + "/namespaces/" + namespace + "/" + name
                         for name in external_names(target)]
        some_metric = metrics[0] if metrics else "duty_cycle_current"
        self.bad = [
            (base % "v1beta1" + "%2A/" + some_metric + "?labelSelector=app%3D%3D%3Dx", 400),
            (base % "v1beta1" + "%2A/" + some_metric + "?labelSelector=%zz", 400),
            (base % "v1beta1" + "%2A/no_such_metric_soak", 404),
            (EXTERNAL + "/namespaces/" + namespace + "/no_such_external_soak", 404),
            ("/apis/no.such.group/v1", 404),
        ]
        if not self.pods or not self.named:
            raise SystemExit("no pod metrics to request (discovery incomplete?)")
        # Without external rules there are no external requests.
        self.mix = {kind: weight for kind, weight in MIX.items()
                    if kind != "external" or self.external}


class Results:
    """Outcomes and latencies by request kind; thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.outcomes = collections.defaultdict(collections.Counter)
        self.latencies = collections.defaultdict(list)
        self.unexpected = collections.Counter()  # (kind, outcome, path) -> count
        self.injected_5xx = 0
        self.fivexx = 0

    def record(self, kind, outcome, seconds, expected, path, injected):
        with self.lock:
            self.outcomes[kind][outcome] += 1
            if seconds is not None:
                self.latencies[kind].append(seconds)
            if isinstance(outcome, int) and outcome >= 500:
                if injected:
                    self.injected_5xx += 1
                else:
                    self.fivexx += 1
            if outcome not in expected and not (injected and outcome == 503):
                self.unexpected[(kind, outcome, path)] += 1


class Outages:
    """Injected Kubernetes API outages; a 503 of a request that overlapped one is expected."""

    def __init__(self, kube, every, length):
        self.kube, self.every, self.length = kube, every, length
        self.windows = []  # [start, end) in monotonic seconds
        self.lock = threading.Lock()

    def covers(self, start, end):
        with self.lock:
            # The adapter may answer from a cache filled just before the outage, or serve a
            # request that started just after it with a stale failure: one second of slack.
            return any(s - 1 <= end and start <= (e or time.monotonic()) + 1
                       for s, e in self.windows)

    def run(self, stop):
        if not self.kube or self.every <= 0:
            return
        while not stop.wait(self.every):
            with self.lock:
                self.windows.append([time.monotonic(), None])
            self.kube.set_down(True)
            stop.wait(self.length)
            self.kube.set_down(False)
            with self.lock:
                self.windows[-1][1] = time.monotonic()


class Load:
    def __init__(self, target, plan, results, outages, header_timeout, rng):
        self.target, self.plan, self.results, self.outages = target, plan, results, outages
        self.header_timeout = header_timeout
        self.rng = rng
        self.local = threading.local()

    def choose(self):
        """(kind, path, expected statuses) of the next request; called by the scheduler only."""
        mix = self.plan.mix
        kind = self.rng.choices(list(mix), weights=list(mix.values()))[0]
        if kind == "discovery":
            return kind, self.rng.choice(self.plan.discovery), {200}
        if kind == "pods/*":
            return kind, self.rng.choice(self.plan.pods), {200}
        if kind == "named":
            return kind, self.rng.choice(self.plan.named), {200}
        if kind == "external":
            return kind, self.rng.choice(self.plan.external), {200}
        if kind == "bad":
            path, status = self.rng.choice(self.plan.bad)
            return kind, path, {status}
        if kind == "slow":
            return kind, self.rng.choice(self.plan.pods + self.plan.discovery), {200}
        if kind == "stalled":
            return kind, self.rng.choice(self.plan.discovery), {"closed by server"}
        return kind, self.rng.choice(self.plan.pods), {"hung up"}

    def run(self, kind, path, expected):
        start = time.monotonic()
        try:
            if kind == "slow":
                outcome = self.slow(path)
            elif kind == "stalled":
                outcome = self.stalled(path)
            elif kind == "disconnect":
                outcome = self.disconnect(path)
            else:
                outcome = self.keep_alive_get(path)
        except (OSError, http.client.HTTPException) as error:
            outcome = "error: " + type(error).__name__
        end = time.monotonic()
        timed = isinstance(outcome, int) and kind != "slow"
        self.results.record(kind, outcome, end - start if timed else None, expected, path,
                            isinstance(outcome, int) and outcome >= 500
                            and self.outages.covers(start, end))

    def keep_alive_get(self, path):
        """One GET on this thread's keep-alive connection (reconnecting once if the adapter
        closed it while idle)."""
        for attempt in (1, 2):
            connection = getattr(self.local, "connection", None)
            fresh = connection is None
            if fresh:
                connection = self.local.connection = self.target.https()
            try:
                return get(self.target, path, connection)[0]
            except (OSError, http.client.HTTPException):
                connection.close()
                self.local.connection = None
                if fresh or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def request_bytes(self, path):
        return ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: %s\r\nUser-Agent: soak\r\n"
                "Connection: close\r\n\r\n" % (path, self.target.host, self.target.port,
                                               HPA_ACCEPT)).encode()

    def slow(self, path):
        """Sends the header in 10 pieces over ~2 s (inside the header timeout): must be 200."""
        data = self.request_bytes(path)
        with self.target.tls_socket() as tls:
            step = max(1, len(data) // 10)
            for i in range(0, len(data), step):
                tls.sendall(data[i:i + step])
                time.sleep(0.2)
            return status_of(read_all(tls))

    def stalled(self, path):
        """Half a header, then silence: the adapter must close within its header timeout."""
        data = self.request_bytes(path)
        with self.target.tls_socket(timeout=self.header_timeout + 10) as tls:
            tls.sendall(data[:len(data) // 2])
            try:
                read_all(tls)
            except socket.timeout:
                return "still open after header timeout"
            except (ssl.SSLError, ConnectionResetError):
                pass
            return "closed by server"

    def disconnect(self, path):
        """Hangs up after the handshake, in the middle of the header, or right after sending
        the request (before the answer is read)."""
        data = self.request_bytes(path)
        how = random.choice(("after handshake", "mid-header", "before answer"))
        tls = self.target.tls_socket()
        try:
            if how == "mid-header":
                tls.sendall(data[:len(data) // 3])
            elif how == "before answer":
                tls.sendall(data)
        finally:
            # No close_notify: a client that vanishes. SO_LINGER 0 sends a reset.
            tls.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            tls.close()
        return "hung up"


def read_all(tls):
    chunks = []
    while True:
        chunk = tls.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def status_of(response):
    line = response.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) >= 2 and line[1].isdigit() else "no status line"


def process_stats(pid):
    """(RSS KiB, open fds, threads) of `pid`."""
    rss = threads = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, len(os.listdir("/proc/%d/fd" % pid)), threads


def percentile(sorted_values, fraction):
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, int(round(fraction * (len(sorted_values) - 1)))))
    return sorted_values[index]


def drive(args, env, plan):
    results = Results()
    outages = Outages(env.kube, args.kube_down_every, args.kube_down_for)
    load = Load(env.target, plan, results, outages, args.header_timeout, random.Random(args.seed))
    samples = []  # (seconds since start, rss KiB, fds, threads)
    stop = threading.Event()
    begin = time.monotonic()

    def sample():
        while True:
            stats = process_stats(env.target.pid)
            samples.append((time.monotonic() - begin,) + stats)
            if len(samples) % max(1, int(60 / args.sample_every)) == 1:
                with results.lock:
                    done = sum(sum(c.values()) for c in results.outcomes.values())
                print("%6.0fs rss %d KiB fds %d threads %d requests %d" %
                      ((samples[-1][0],) + stats + (done,)), flush=True)
            if stop.wait(args.sample_every):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    injector = threading.Thread(target=outages.run, args=(stop,), daemon=True)
    injector.start()
    # At most this many requests in flight or queued: a stuck adapter cannot make the client
    # itself grow without bound; a request that cannot start in time counts as "client backlog".
    slots = threading.BoundedSemaphore(args.workers * 4)
    started = skipped = 0
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        next_at = begin
        while next_at < begin + args.duration:
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            next_at += 1.0 / args.rate
            kind, path, expected = load.choose()
            if not slots.acquire(blocking=False):
                skipped += 1
                continue
            started += 1

            def task(kind=kind, path=path, expected=expected):
                try:
                    load.run(kind, path, expected)
                finally:
                    slots.release()

            pool.submit(task)
        elapsed = time.monotonic() - begin
    stop.set()
    sampler.join()
    injector.join()
    samples.append((time.monotonic() - begin,) + process_stats(env.target.pid))
    return results, samples, started, skipped, elapsed, outages


def report(args, results, samples, started, skipped, elapsed, outages, exit_status):
    lines = []
    out = lines.append
    out("metrics-adapter soak, %s" % time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    out("command: %s" % " ".join(sys.argv))
    out("load: %.0f s at %.0f req/s target, %d requests started (%.1f req/s), %d not started "
        "(client backlog)" % (elapsed, args.rate, started, started / elapsed, skipped))
    if outages.windows:
        out("injected: %d Kubernetes API outages of %.0f s" % (len(outages.windows),
                                                              args.kube_down_for))
    first = samples[0]
    baseline = next((s for s in samples if s[0] >= args.warmup), samples[-1])
    after = [s for s in samples if s[0] >= baseline[0]]
    rss = [s[1] for s in after]
    end = samples[-1]
    drift = 100.0 * (end[1] - baseline[1]) / baseline[1]
    spread = 100.0 * (max(rss) - baseline[1]) / baseline[1]
    dip = 100.0 * (min(rss) - baseline[1]) / baseline[1]
    out("")
    out("RSS (KiB): first %d at %.0f s; baseline %d at %.0f s (after warm-up); after baseline: "
        "min %d (%+.1f %%), max %d (%+.1f %%), end %d" % (
            first[1], first[0], baseline[1], baseline[0], min(rss), dip, max(rss), spread,
            end[1]))
    out("RSS drift end vs baseline: %+.2f %%   (tolerance ±%.0f %%)" % (drift, args.rss_tolerance))
    out("open fds: first %d, max %d, end %d; threads: first %d, max %d, end %d" % (
        first[2], max(s[2] for s in samples), end[2], first[3], max(s[3] for s in samples),
        end[3]))
    out("")
    out("RSS over time:")
    out("  %8s %10s %5s %7s" % ("t (s)", "RSS KiB", "fds", "threads"))
    step = max(1, len(samples) // 24)
    shown = samples[::step]
    if shown[-1] is not samples[-1]:
        shown.append(samples[-1])
    for t, kib, fds, threads in shown:
        out("  %8.0f %10d %5d %7d" % (t, kib, fds, threads))
    out("")
    out("Outcomes by kind (HTTP status, or what happened to the connection):")
    for kind in MIX:
        counts = results.outcomes.get(kind, {})
        text = ", ".join("%s: %d" % (k, v) for k, v in sorted(counts.items(), key=str))
        out("  %-10s %7d  %s" % (kind, sum(counts.values()), text))
    out("")
    out("Latency (ms) per kind, status-answered requests (slow clients excluded):")
    out("  %-10s %7s %8s %8s %8s %8s" % ("kind", "n", "p50", "p90", "p99", "max"))
    for kind in MIX:
        values = sorted(results.latencies.get(kind, []))
        if values:
            out("  %-10s %7d %8.1f %8.1f %8.1f %8.1f" % (
                kind, len(values), 1000 * percentile(values, 0.5),
                1000 * percentile(values, 0.9), 1000 * percentile(values, 0.99),
                1000 * values[-1]))
    out("")
    out("5xx: %d not injected, %d during injected outages" % (results.fivexx,
                                                             results.injected_5xx))
    for (kind, outcome, path), count in sorted(results.unexpected.items(), key=str)[:20]:
        out("unexpected: %d x %s %s -> %s" % (count, kind, path, outcome))
    if exit_status is not None:
        out("adapter exit status after SIGTERM: %d" % exit_status)
    failures = []
    if abs(drift) > args.rss_tolerance or spread > args.rss_tolerance:
        failures.append("RSS moved more than ±%.0f %% from the baseline" % args.rss_tolerance)
    if results.fivexx:
        failures.append("%d 5xx answers outside injected faults" % results.fivexx)
    if results.unexpected:
        failures.append("%d unexpected outcomes" % sum(results.unexpected.values()))
    if exit_status not in (None, 0):
        failures.append("the adapter exited with status %d" % exit_status)
    out("verdict: " + ("PASS" if not failures else "FAIL: " + "; ".join(failures)))
    return "\n".join(lines) + "\n", not failures


def main():
    args = parse_args()
    env = Environment(args)
    try:
        plan = Plan(env.target, args.namespace, env.selectors)
        print("load plan: %d discovery, %d pods/*, %d named, %d external, %d bad paths" % (
            len(plan.discovery), len(plan.pods), len(plan.named), len(plan.external),
            len(plan.bad)), flush=True)
        outcome = drive(args, env, plan)
    except BaseException:
        env.stop()
        raise
    exit_status = env.stop()
    text, passed = report(args, *outcome, exit_status)
    print(text, end="")
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    return 0 if passed else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
