"""End to end: identical HPA queries share Prometheus calls. The fake Prometheus
(fake_prometheus.py) counts every /api/v1/query by (PromQL, time) and can hold its answers; 1,000 concurrent HPA-shaped requests
for one metric must reach it at most once per distinct (PromQL, time), and the requests that are
in the adapter together while one query is held must all share that query. With
--metrics-cache-ttl, repeated requests within the TTL are answered from one call."""

import http.client
import json
import os
import threading
import unittest

import harness
from fake_prometheus import FakePrometheus

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG = os.path.join(harness.REPO, "config", "gpu-dcgm-exporter.yaml")
METRIC = "DCGM_FI_DEV_GPU_UTIL"
PODS = ["gpu-pod-%d" % i for i in range(5)]
VALUES = {pod: 10.0 + 7.25 * i for i, pod in enumerate(PODS)}  # what Prometheus answers
# One DCGM series per pod, as dcgm-exporter labels them.
SERIES = [({"__name__": METRIC, "namespace": "default", "pod": pod, "Hostname": "node-1",
            "gpu": str(i)}, str(VALUES[pod])) for i, pod in enumerate(PODS)]
HPA_PATH = ("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/%s"
            "?labelSelector=app%%3Dgpu" % METRIC)
HPA_ACCEPT = "application/vnd.kubernetes.protobuf, */*"
REQUESTS = 1000
PROCS = None
PROMETHEUS = None
KUBE = None


def total_queries():
    return sum(PROMETHEUS.query_counts().values())


def setUpModule():
    global PROCS, PROMETHEUS, KUBE
    PROCS = harness.Processes()
    try:
        PROMETHEUS = FakePrometheus(SERIES)
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
        PROMETHEUS.set_fault("query", "hang")  # held until cleared
        before_calls = PROMETHEUS.query_counts()
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
            self.assertEqual(total_queries() - before, 1, PROMETHEUS.query_counts())
        finally:
            PROMETHEUS.clear_faults("query")
            for thread in threads:
                thread.join(180)

        failures = [r for r in results if r is None or r[0] != 200]
        self.assertEqual(failures, [], "%d of %d requests failed" % (len(failures), REQUESTS))
        for _, values in results:
            self.assertEqual(values, expected_values())
        calls = {key: count - before_calls.get(key, 0)
                 for key, count in PROMETHEUS.query_counts().items()
                 if count > before_calls.get(key, 0)}
        repeated = {key: count for key, count in PROMETHEUS.query_counts().items() if count > 1}
        self.assertEqual(repeated, {}, "queries sent more than once for one (PromQL, time)")
        # The four that shared the held query saved at least three.
        self.assertLessEqual(total_queries() - before, REQUESTS - 3)
        promqls = {query for query, _ in calls}
        self.assertEqual(len(promqls), 1, promqls)
        self.assertIn('pod=~"gpu-pod-0|gpu-pod-1|gpu-pod-2|gpu-pod-3|gpu-pod-4"', promqls.pop())
        PROCS.stop(adapter.process)

    def test_cache_ttl_answers_repeated_requests_from_one_query(self):
        adapter = start_adapter("--metrics-cache-ttl=1h")
        before = total_queries()
        for _ in range(20):
            self.assertEqual(hpa_request(adapter), (200, expected_values()))
        self.assertEqual(total_queries(), before)  # start_adapter's request is still served
        other = HPA_PATH.replace(METRIC, METRIC + "_AVG")
        status, body, = adapter.get_json(other, headers={"Accept": HPA_ACCEPT})
        self.assertEqual(status, 200, body)
        self.assertEqual(total_queries(), before + 1)  # another PromQL: its own query
        PROCS.stop(adapter.process)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
