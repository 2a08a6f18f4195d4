"""Graceful shutdown on SIGTERM (what the kubelet sends when a pod is deleted): a request in
flight still completes, new connections are refused at once, and the process exits 0 within a
bound (the drain time, well inside Kubernetes' default 30 s grace period), also when Prometheus
never answers a query or a relist."""

import json
import signal
import socket
import threading
import unittest
import urllib.error
import urllib.request

import fake_prometheus
import harness
from fake_prometheus import FakePrometheus, expected_values, values_by_object

ARGS, UNITTEST_ARGV = harness.parse_args()
METRIC = "gpu_utilization"
PODS = ["server-%d" % i for i in range(3)]
WILDCARD = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/" + METRIC
DRAIN_SECONDS = 10  # what runAdapter gives in-flight requests
QUERY_TIMEOUT_SECONDS = 25  # longer than the drain, so a stuck query outlives it
RELIST_TIMEOUT_SECONDS = 30  # RelistOptions.series_timeout
# Exiting takes the drain at most: calls still waiting on Prometheus are cancelled, not waited
# for (the margin is for a loaded machine; both timeouts above are longer).
EXIT_BOUND_SECONDS = DRAIN_SECONDS + 8
PROCS = FAKE = None


def setUpModule():
    global PROCS, FAKE
    PROCS = harness.Processes()
    FAKE = FakePrometheus(fake_prometheus.pod_series("default", PODS))


def tearDownModule():
    fake_prometheus.stop_all(PROCS, FAKE)


def refuses_connections(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return False
    except ConnectionRefusedError:
        return True


class InFlight:
    """One request on its own thread; result() waits for its (status, headers, body) or its
    error."""

    def __init__(self, adapter, path):
        self.answer = None
        self.error = None
        self.thread = threading.Thread(target=self.run, args=(adapter, path), daemon=True)
        self.thread.start()

    def run(self, adapter, path):
        request = urllib.request.Request(adapter.base + path)
        try:
            try:
                with urllib.request.urlopen(request, timeout=120,
                                            context=adapter.ssl_context()) as response:
                    self.answer = (response.status, response.headers, json.loads(response.read()))
            except urllib.error.HTTPError as error:
                self.answer = (error.code, error.headers, json.loads(error.read()))
        except Exception as error:  # reported by the test
            self.error = error

    def result(self, timeout):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the request did not finish"
        if self.error:
            raise self.error
        return self.answer


class ShutdownTest(unittest.TestCase):
    def setUp(self):
        self.adapter = fake_prometheus.start_adapter(
            PROCS, ARGS.binary, FAKE,
            extra_args=["--prometheus-timeout=%ds" % QUERY_TIMEOUT_SECONDS])

    def tearDown(self):
        FAKE.clear_faults()

    def terminate_during_a_hanging_query(self):
        FAKE.set_fault("query", "hang")
        in_flight = InFlight(self.adapter, WILDCARD)
        harness.wait_until(lambda: FAKE.waiting_count("query") >= 1, timeout=30,
                           what="the query to reach Prometheus")
        self.adapter.process.send_signal(signal.SIGTERM)
        harness.wait_until(lambda: refuses_connections(self.adapter.port), timeout=10,
                           what="new connections to be refused")
        return in_flight

    def test_sigterm_lets_the_request_in_flight_complete_then_exits_0(self):
        in_flight = self.terminate_during_a_hanging_query()
        self.assertIsNone(self.adapter.process.poll(), "exited before the request was answered")
        FAKE.clear_faults()
        status, _, body = in_flight.result(timeout=30)
        self.assertEqual(200, status, body)
        self.assertEqual(expected_values(FAKE, METRIC, "default"), values_by_object(body))
        self.assertEqual(0, self.adapter.process.wait(timeout=EXIT_BOUND_SECONDS))
        self.assertIn("shutting down", PROCS.log(self.adapter.process))

    def test_a_request_still_stuck_after_the_drain_gets_503_and_the_process_exits_0(self):
        in_flight = self.terminate_during_a_hanging_query()
        # Its query is cancelled after the drain rather than waited for.
        status, headers, body = in_flight.result(timeout=EXIT_BOUND_SECONDS)
        self.assertEqual(503, status, body)
        self.assertEqual("1", headers.get("Retry-After"))  # client-go retries, elsewhere
        self.assertEqual("ServiceUnavailable", body["reason"])
        self.assertEqual("the server is shutting down", body["message"])
        self.assertEqual(0, self.adapter.process.wait(timeout=EXIT_BOUND_SECONDS))

    def test_a_relist_waiting_on_prometheus_does_not_hold_the_exit(self):
        FAKE.set_fault("series", "hang")
        harness.wait_until(lambda: FAKE.waiting_count("series") >= 1, timeout=30,
                           what="a relist waiting on Prometheus")
        self.adapter.process.send_signal(signal.SIGTERM)
        self.assertEqual(0, self.adapter.process.wait(timeout=EXIT_BOUND_SECONDS))
        self.assertLess(EXIT_BOUND_SECONDS, RELIST_TIMEOUT_SECONDS)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
