"""The Kubernetes API misbehaving under the HPA's wildcard requests (which list pods by
labelSelector): refusing connections, answering 503, answering slowly, throttling with 429 and
Retry-After, and LISTs cut off mid-body. The adapter LISTs each (resource, namespace) once
(metadata only, paged) and then watches it; each test uses a namespace of its own, so its first
request waits for a first LIST, and that LIST is what the fault hits (cut watch streams are
tested in test_object_watch.py). For each fault: the Status the HPA gets, the adapter staying
up with its discovery, and recovery once the fault clears."""

import json
import unittest

import fake_prometheus
import harness
from fake_prometheus import FakePrometheus, discovered, expected_values, values_by_object

ARGS, UNITTEST_ARGV = harness.parse_args()
METRIC = "gpu_utilization"
# One namespace per test, so every test starts without a cached list. "big" needs two pages
# of the adapter's LIST (500 objects per page).
NAMESPACES = {"stale": 3, "slow": 3, "slower": 3, "throttled": 3, "cut": 3, "big": 520,
              "refused": 3}
LISTER_TIMEOUT = "5s"  # ObjectListerOptions.timeout
PROCS = FAKE = KUBE = ADAPTER = None


def pods_of(namespace):
    return ["%s-web-%d" % (namespace, i) for i in range(NAMESPACES[namespace])]


def setUpModule():
    global PROCS, FAKE, KUBE, ADAPTER
    PROCS = harness.Processes()
    series = []
    for namespace in NAMESPACES:
        series += fake_prometheus.pod_series(namespace, pods_of(namespace))
    FAKE = FakePrometheus(series)
    KUBE, ADAPTER = fake_prometheus.started_or_stopped(PROCS, FAKE, start)


def start():
    kube = harness.FakeKube(PROCS, {"pods": [
        {"name": pod, "namespace": namespace, "labels": {"app": "web"}}
        for namespace in NAMESPACES for pod in pods_of(namespace)]})
    return kube, fake_prometheus.start_adapter(PROCS, ARGS.binary, FAKE, extra_args=[
        "--lister-kubeconfig=" + kube.kubeconfig, "--discovery-interval=1s",
        "--object-cache-ttl=1s"])


def tearDownModule():
    fake_prometheus.stop_all(PROCS, FAKE)


def hpa_request(namespace):
    """What the HPA asks for a Pods metric: every pod matching the deployment's selector."""
    return ADAPTER.get_json("/apis/custom.metrics.k8s.io/v1beta2/namespaces/%s/pods/%%2A/%s"
                            "?labelSelector=app%%3Dweb" % (namespace, METRIC))


class KubeFaultTest(unittest.TestCase):
    def tearDown(self):
        KUBE.set_fault("none")
        KUBE.set_down(False)

    def assert_served(self, namespace):
        status, body = hpa_request(namespace)
        self.assertEqual(200, status, body)
        self.assertEqual(expected_values(FAKE, METRIC, namespace), values_by_object(body))
        self.assertEqual(NAMESPACES[namespace], len(body["items"]))

    def assert_unavailable(self, namespace, message_part):
        status, body = hpa_request(namespace)
        self.assertEqual(503, status, body)
        self.assertEqual("ServiceUnavailable", body["reason"])
        self.assertIn("unable to list matching pods: ", body["message"])
        self.assertIn(message_part, body["message"])
        self.assert_up()

    def assert_up(self):
        self.assertIsNone(ADAPTER.process.poll(), "the adapter exited")
        self.assertEqual(200, ADAPTER.get("/healthz")[0])
        self.assertIn("pods/" + METRIC, discovered(ADAPTER))

    def test_an_api_refusing_connections_is_503_until_it_is_back(self):
        argv = KUBE.process.args
        PROCS.stop(KUBE.process)
        self.assert_unavailable("refused", "cannot reach the Kubernetes API: ")
        # The API's address is internal: it is in the log, never in an answer.
        self.assertNotIn(KUBE.url.split("://")[1], json.dumps(hpa_request("refused")[1]))
        KUBE.process = PROCS.spawn("fake-kube-restarted", argv)
        harness.wait_until(lambda: KUBE.stats() is not None, timeout=30,
                           what="the fake Kubernetes API to be back")
        harness.wait_until(lambda: hpa_request("refused")[0] == 200, timeout=30,
                           what="the adapter to list again")
        self.assert_served("refused")

    def test_a_down_api_serves_the_last_list_of_a_namespace(self):
        self.assert_served("stale")
        KUBE.set_down(True)
        answers = []  # every answer until the adapter says it served a stale list

        def served_stale():
            answers.append(hpa_request("stale"))
            return "listing pods/stale failed, serving the list from" in PROCS.log(ADAPTER.process)

        harness.wait_until(served_stale, timeout=30, what="a stale answer while the API is down")
        expected = expected_values(FAKE, METRIC, "stale")
        for status, body in answers:
            self.assertEqual(200, status, body)
            self.assertEqual(expected, values_by_object(body))
        self.assert_up()

    def test_a_slow_api_is_waited_for_up_to_the_lister_deadline(self):
        KUBE.set_fault("slow", seconds=1)
        self.assert_served("slow")
        KUBE.set_fault("slow", seconds=8)
        self.assert_unavailable("slower",
                                "Kubernetes API did not answer within " + LISTER_TIMEOUT)
        KUBE.set_fault("none")
        self.assert_served("slower")

    def test_a_throttled_list_is_503_and_retry_after_is_honoured(self):
        retry_after = 5
        KUBE.set_fault("throttle", retry_after=retry_after)
        message = ("Kubernetes API answered GET /api/v1/namespaces/throttled/pods with HTTP 429: "
                   "Too many requests, please try again later.")
        self.assert_unavailable("throttled", message)
        attempts = KUBE.list_attempts()
        # Within Retry-After the adapter answers from what it learnt, without asking again.
        self.assert_unavailable("throttled", message)
        self.assertEqual(attempts, KUBE.list_attempts())
        KUBE.set_fault("none")
        harness.wait_until(lambda: hpa_request("throttled")[0] == 200, timeout=retry_after + 30,
                           what="a LIST once Retry-After has passed")
        self.assert_served("throttled")

    def test_a_list_cut_off_mid_body_is_503_and_recovers(self):
        KUBE.set_fault("cut")
        self.assert_unavailable("cut", "broke off")
        KUBE.set_fault("none")
        self.assert_served("cut")

    def test_a_list_cut_off_on_its_second_page_is_never_served_in_part(self):
        KUBE.set_fault("cut", continue_only=True)
        self.assert_unavailable("big", "broke off")
        KUBE.set_fault("none")
        self.assert_served("big")


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
