"""End to end: identical HPA queries share Prometheus calls. A fake Prometheus counts every
/api/v1/query by (PromQL, time) and can hold its answers; 1,000 concurrent HPA-shaped requests
for one metric must reach it at most once per distinct (PromQL, time), and the requests that are
in the adapter together while one query is held must all share that query. With
--metrics-cache-ttl, repeated requests within the TTL are answered from one call."""

import http.client
import http.server
import json
import os
import threading
import unittest
import urllib.parse

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG = os.path.join(harness.REPO, "config", "gpu-dcgm-exporter.yaml")
METRIC = "DCGM_FI_DEV_GPU_UTIL"
PODS = ["gpu-pod-%d" % i for i in range(5)]
VALUES = {pod: 10.0 + 7.25 * i for i, pod in enumerate(PODS)}  # what Prometheus answers
HPA_PATH = ("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/%s"
            "?labelSelector=app%%3Dgpu" % METRIC)
HPA_ACCEPT = "application/vnd.kubernetes.protobuf, */*"
REQUESTS = 1000
PROCS = None
PROMETHEUS = None
KUBE = None


class FakePrometheus:
    """/api/v1/series: one DCGM series per pod; /api/v1/query: a vector with every pod's value,
    counted per (query, time). While the gate is closed, query answers wait for it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls = {}  # (query, time) -> count
        self.gate = threading.Event()
        self.gate.set()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()

    def queries(self):
        with self.lock:
            return dict(self.calls)

    def total(self):
        return sum(self.queries().values())

    def _handler(self):
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.answer(urllib.parse.urlsplit(self.path).query)

            def do_POST(self):
                self.answer(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())

            def answer(self, form):
                path = urllib.parse.urlsplit(self.path).path
                params = urllib.parse.parse_qs(form)
                if path == "/api/v1/series":
                    data = [{"__name__": METRIC, "namespace": "default", "pod": pod,
                             "Hostname": "node-1", "gpu": str(i)} for i, pod in enumerate(PODS)]
                    self.send({"status": "success", "data": data})
                elif path == "/api/v1/query":
                    key = (params["query"][0], params["time"][0])
                    with fake.lock:
                        fake.calls[key] = fake.calls.get(key, 0) + 1
                    fake.gate.wait(60)
                    result = [{"metric": {"pod": pod}, "value": [float(key[1]), str(value)]}
                              for pod, value in VALUES.items()]
                    self.send({"status": "success",
                               "data": {"resultType": "vector", "result": result}})
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def send(self, body):
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def setUpModule():
    global PROCS, PROMETHEUS, KUBE
    PROCS = harness.Processes()
    try:
        PROMETHEUS = FakePrometheus()
        KUBE = harness.FakeKube(PROCS, {"pods": [
            {"name": pod, "namespace": "default", "labels": {"app": "gpu"}} for pod in PODS]})
    except Exception:
        tearDownModule()
        raise


def tearDownModule():
    if PROMETHEUS:
        PROMETHEUS.stop()
    PROCS.stop_all()


def start_adapter(*extra_args):
    adapter = harness.Adapter(PROCS, ARGS.binary, CONFIG, PROMETHEUS.url, extra_args=[
        "--lister-kubeconfig=" + KUBE.kubeconfig, "--max-requests-inflight=%d" % (2 * REQUESTS)]
        + list(extra_args))
    harness.wait_until(lambda: hpa_request(adapter)[0] == 200, timeout=60,
                       what="the adapter to serve " + METRIC)
    return adapter


def hpa_request(adapter, context=None):
    """(status, {pod: value}) of one HPA-shaped request on a connection of its own."""
    connection = http.client.HTTPSConnection("127.0.0.1", adapter.port, timeout=120,
                                             context=context or adapter.ssl_context())
    try:
        connection.request("GET", HPA_PATH, headers={"Accept": HPA_ACCEPT})
        response = connection.getresponse()
        body = json.loads(response.read().decode())
    finally:
        connection.close()
    if response.status != 200:
        return response.status, body
    return 200, {item["describedObject"]["name"]: item["value"] for item in body["items"]}


def expected_values():
    return {pod: harness.milli_quantity(value) for pod, value in VALUES.items()}


class CoalescingTest(unittest.TestCase):
    def test_concurrent_hpa_requests_share_queries(self):
        adapter = start_adapter()
        context = adapter.ssl_context()
        PROMETHEUS.gate.clear()
        before_calls = PROMETHEUS.queries()
        before = sum(before_calls.values())
        handled_marker = "metric %s on pods:" % METRIC  # logged by a handler about to query
        handled_before = PROCS.log(adapter.process).count(handled_marker)
        results = [None] * REQUESTS

        def one(index):
            try:
                results[index] = hpa_request(adapter, context)
            except Exception as error:  # reported by the assertions below
                results[index] = (0, repr(error))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(REQUESTS)]
        try:
            for thread in threads:
                thread.start()
            # Several requests are past their PromQL while Prometheus holds the first query:
            # they must all be waiting on that one query.
            harness.wait_until(
                lambda: PROCS.log(adapter.process).count(handled_marker) - handled_before >= 4,
                timeout=120, interval=0.05, what="four requests to reach Prometheus")
            self.assertEqual(PROMETHEUS.total() - before, 1, PROMETHEUS.queries())
        finally:
            PROMETHEUS.gate.set()
            for thread in threads:
                thread.join(180)

        failures = [r for r in results if r is None or r[0] != 200]
        self.assertEqual(failures, [], "%d of %d requests failed" % (len(failures), REQUESTS))
        for _, values in results:
            self.assertEqual(values, expected_values())
        calls = {key: count - before_calls.get(key, 0)
                 for key, count in PROMETHEUS.queries().items()
                 if count > before_calls.get(key, 0)}
        repeated = {key: count for key, count in PROMETHEUS.queries().items() if count > 1}
        self.assertEqual(repeated, {}, "queries sent more than once for one (PromQL, time)")
        # The four that shared the held query saved at least three.
        self.assertLessEqual(PROMETHEUS.total() - before, REQUESTS - 3)
        promqls = {query for query, _ in calls}
        self.assertEqual(len(promqls), 1, promqls)
        self.assertIn('pod=~"gpu-pod-0|gpu-pod-1|gpu-pod-2|gpu-pod-3|gpu-pod-4"', promqls.pop())
        PROCS.stop(adapter.process)

    def test_cache_ttl_answers_repeated_requests_from_one_query(self):
        adapter = start_adapter("--metrics-cache-ttl=1h")
        before = PROMETHEUS.total()
        for _ in range(20):
            self.assertEqual(hpa_request(adapter), (200, expected_values()))
        self.assertEqual(PROMETHEUS.total(), before)  # start_adapter's request is still served
        other = HPA_PATH.replace(METRIC, METRIC + "_AVG")
        status, body, = adapter.get_json(other, headers={"Accept": HPA_ACCEPT})
        self.assertEqual(status, 200, body)
        self.assertEqual(PROMETHEUS.total(), before + 1)  # another PromQL: its own query
        PROCS.stop(adapter.process)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
