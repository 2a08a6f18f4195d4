"""Pod lists as fresh as the HPA's: the adapter keeps the pods of a namespace with one LIST and
then a WATCH (fake_kube.py streams real watch events), so a pod created in the Kubernetes API is
in the next answer at once, and a watch that breaks resumes from the last resourceVersion
instead of listing again. Prometheus (the fake) already has series for every pod the tests
create: the answer is decided by what the Kubernetes API holds."""

import signal
import time
import unittest

import fake_prometheus
import harness
from fake_prometheus import FakePrometheus, expected_values, values_by_object

ARGS, UNITTEST_ARGV = harness.parse_args()
METRIC = "gpu_utilization"
NAMESPACE = "scaling"
PODS_PATH = "/api/v1/namespaces/%s/pods" % NAMESPACE
ALL_PODS = ["web-%d" % i for i in range(8)]  # series in Prometheus for each
FRESHNESS_BOUND = 1.0  # seconds from the pod's creation in the API to the adapter's answer
PROCS = FAKE = KUBE = ADAPTER = None


def setUpModule():
    global PROCS, FAKE, KUBE, ADAPTER
    PROCS = harness.Processes()
    FAKE = FakePrometheus(fake_prometheus.pod_series(NAMESPACE, ALL_PODS))
    KUBE, ADAPTER = fake_prometheus.started_or_stopped(PROCS, FAKE, start)


def start():
    kube = harness.FakeKube(PROCS, {"pods": [pod("web-0"), pod("web-1")]})
    return kube, fake_prometheus.start_adapter(PROCS, ARGS.binary, FAKE, extra_args=[
        "--lister-kubeconfig=" + kube.kubeconfig, "--discovery-interval=1s",
        "--object-cache-ttl=10s"])  # accepted, and no longer what makes answers fresh


def tearDownModule():
    fake_prometheus.stop_all(PROCS, FAKE)


def pod(name):
    return {"name": name, "namespace": NAMESPACE, "labels": {"app": "web"}}


def served_pods():
    """The pods the HPA's request is answered with."""
    status, body = ADAPTER.get_json(
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/%s/pods/%%2A/%s?labelSelector=app%%3Dweb"
        % (NAMESPACE, METRIC))
    if status != 200:
        raise AssertionError("HTTP %d: %r" % (status, body))
    return values_by_object(body)


def wait_for_pods(names, what, timeout=30):
    harness.wait_until(lambda: set(served_pods()) == set(names), timeout=timeout,
                       interval=0.02, what=what)


class ObjectWatchTest(unittest.TestCase):
    """The tests share the adapter and build on the pods of the ones before (names sort)."""

    def test_1_a_created_pod_is_answered_within_a_second_without_a_list(self):
        wait_for_pods({"web-0", "web-1"}, "the first answer")
        lists = KUBE.list_calls(PODS_PATH)
        self.assertEqual(1, lists)
        harness.wait_until(lambda: KUBE.watch_calls(PODS_PATH) >= 1, what="a watch of the pods")
        created = time.monotonic()
        KUBE.change_object("add", "pods", pod("web-2"))
        wait_for_pods({"web-0", "web-1", "web-2"}, "the created pod", timeout=10)
        elapsed = time.monotonic() - created
        self.assertLess(elapsed, FRESHNESS_BOUND,
                        "the created pod took %.2f s to appear in the answer" % elapsed)
        # A deleted pod leaves the answer the same way.
        KUBE.change_object("delete", "pods", pod("web-0"))
        wait_for_pods({"web-1", "web-2"}, "the deleted pod gone", timeout=10)
        # Values are Prometheus's for exactly the pods the API holds.
        expected = expected_values(FAKE, METRIC, NAMESPACE)
        self.assertEqual({p: expected[p] for p in ("web-1", "web-2")}, served_pods())
        self.assertEqual(lists, KUBE.list_calls(PODS_PATH))

    def test_2_a_watch_cut_mid_stream_resumes_from_the_last_version(self):
        wait_for_pods({"web-1", "web-2"}, "the pods of the test before")
        lists = KUBE.list_calls(PODS_PATH)
        watches = KUBE.watch_calls(PODS_PATH)
        last_version = KUBE.change_object("add", "pods", pod("web-3"))
        wait_for_pods({"web-1", "web-2", "web-3"}, "web-3")
        KUBE.cut_watches()
        # Changes made while no watch is open arrive through the resumed one.
        KUBE.change_object("add", "pods", pod("web-4"))
        wait_for_pods({"web-1", "web-2", "web-3", "web-4"}, "web-4 through the resumed watch")
        self.assertEqual(lists, KUBE.list_calls(PODS_PATH), "the cut watch caused a LIST")
        versions = KUBE.watch_versions(PODS_PATH)
        self.assertGreater(len(versions), watches)
        # The resumed watch asked from the last version the adapter had seen: that of web-3's
        # event or a later bookmark, never older.
        self.assertGreaterEqual(int(versions[watches]), int(last_version), versions)

    def test_3_410_gone_lists_again(self):
        for gone_as in ("event", "status"):
            with self.subTest(gone_as=gone_as):
                wait_for_pods(served_pods().keys(), "a stable answer")
                lists = KUBE.list_calls(PODS_PATH)
                KUBE.compact(gone_as)  # and the open watch breaks
                name = "web-5" if gone_as == "event" else "web-6"
                KUBE.change_object("add", "pods", pod(name))
                harness.wait_until(lambda: name in served_pods(), timeout=30, interval=0.05,
                                   what="%s after the relist" % name)
                self.assertEqual(lists + 1, KUBE.list_calls(PODS_PATH))
        status, _, text = ADAPTER.get("/metrics")
        self.assertEqual(200, status)
        self.assertIn('metrics_adapter_object_lists_total{reason="gone"} 2', text)

    def test_4_sigterm_ends_the_open_watch_and_exits_0(self):
        harness.wait_until(lambda: KUBE.watch_calls(PODS_PATH) >= 1, what="an open watch")
        served_pods()
        stopped = time.monotonic()
        ADAPTER.process.send_signal(signal.SIGTERM)
        ADAPTER.process.wait(timeout=30)
        elapsed = time.monotonic() - stopped
        self.assertEqual(0, ADAPTER.process.returncode, PROCS.log(ADAPTER.process)[-3000:])
        # The watch asked the server for 300-600 s: exiting in seconds means it was cancelled.
        self.assertLess(elapsed, 10, "the adapter took %.1f s to exit" % elapsed)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
