"""Prometheus misbehaving in every way the adapter must survive, injected with the controllable
fake (fake_prometheus.py): refused connections, answers past the deadline, 500/503, invalid JSON,
truncated bodies, a 200 MB answer, special sample values, `status: error` bodies and warnings.
For each: the Status the HPA gets, the adapter staying up, recovery once the fault clears, and
discovery keeping its last good snapshot while relists fail."""

import json
import socket
import sys
import threading
import time
import unittest

import fake_prometheus
import harness
from fake_prometheus import FakePrometheus, discovered, expected_values, values_by_object

ARGS, UNITTEST_ARGV = harness.parse_args()
PODS = ["trainer-%d" % i for i in range(3)]
# One pod per special value, in their own namespace so other tests are not affected.
SPECIAL = {"nan": "NaN", "pos-inf": "+Inf", "neg-inf": "-Inf", "huge": "1e308",
           "dcgm-blank": "9223372036854775794", "plain": "42.5"}
QUERY_TIMEOUT = "2s"
METRIC = "gpu_utilization"
WILDCARD = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/%s/pods/%%2A/" + METRIC
LIMIT = 16 << 20  # the default --prometheus-max-response-bytes
PROCS = FAKE = ADAPTER = None


def setUpModule():
    global PROCS, FAKE, ADAPTER
    PROCS = harness.Processes()
    FAKE = FakePrometheus(
        fake_prometheus.pod_series("default", PODS)
        + fake_prometheus.pod_series("special", list(SPECIAL),
                                     value_of=lambda i: list(SPECIAL.values())[i]))
    ADAPTER = fake_prometheus.started_or_stopped(
        PROCS, FAKE, lambda: fake_prometheus.start_adapter(
            PROCS, ARGS.binary, FAKE, extra_args=["--prometheus-timeout=" + QUERY_TIMEOUT]))


def tearDownModule():
    fake_prometheus.stop_all(PROCS, FAKE)


class FaultTestCase(unittest.TestCase):
    def tearDown(self):
        FAKE.clear_faults()
        FAKE.accept()
        FAKE.set_warnings([])

    def get(self, namespace="default"):
        return ADAPTER.get_json(WILDCARD % namespace)

    def assert_served(self, namespace="default"):
        """The answer of a healthy Prometheus: every pod's value."""
        status, body = self.get(namespace)
        self.assertEqual(200, status, body)
        self.assertEqual(expected_values(FAKE, METRIC, namespace), values_by_object(body))
        return body

    def assert_up(self):
        self.assertIsNone(ADAPTER.process.poll(), "the adapter exited")
        self.assertEqual(200, ADAPTER.get("/healthz")[0])
        self.assertIn("pods/" + METRIC, discovered(ADAPTER))

    def assert_fault_answer(self, code, reason, message_part):
        status, body = self.get()
        self.assertEqual(code, status, body)
        self.assertEqual("Status", body["kind"])
        self.assertEqual(reason, body["reason"])
        self.assertIn(message_part, body["message"])
        # Where Prometheus is stays in the adapter's log, never in what a client sees.
        self.assertNotIn("127.0.0.1:%d" % FAKE.port, json.dumps(body))
        self.assert_up()
        return body

    def assert_query_fault(self, status, reason, message_part, kind, **options):
        """The answer under a query fault, then recovery once it is cleared."""
        FAKE.set_fault("query", kind, **options)
        body = self.assert_fault_answer(status, reason, message_part)
        FAKE.clear_faults()
        self.assert_served()
        return body


class QueryFaultTest(FaultTestCase):
    def test_refused_connections_are_503_and_discovery_is_kept(self):
        FAKE.refuse()
        self.assert_fault_answer(503, "ServiceUnavailable",
                                 "unable to fetch metric gpu_utilization on pods from backend "
                                 "\"default\": cannot reach Prometheus: Connection refused")
        harness.wait_until(lambda: "cannot reach Prometheus" in PROCS.log(ADAPTER.process)
                           and FAKE.url in PROCS.log(ADAPTER.process), timeout=10,
                           what="the log naming the Prometheus URL")
        harness.wait_until(lambda: fake_prometheus.self_metric(
            ADAPTER, 'metrics_adapter_relist_failed_queries{backend="default"}') == 1, timeout=30,
            what="a relist failing while Prometheus refuses connections")
        self.assert_up()
        FAKE.accept()
        self.assert_served()

    def test_an_answer_past_the_deadline_is_503(self):
        self.assert_query_fault(503, "ServiceUnavailable",
                                "Prometheus did not answer within " + QUERY_TIMEOUT, "hang")

    def test_http_500_and_503_are_503_quoting_the_body(self):
        for code in (500, 503):
            with self.subTest(code=code):
                self.assert_query_fault(
                    503, "ServiceUnavailable",
                    "unexpected HTTP status %d from Prometheus: overloaded" % code,
                    "status", code=code, body="overloaded")

    def test_invalid_json_is_500(self):
        self.assert_query_fault(500, "InternalError", "cannot decode Prometheus answer",
                                "invalid_json")

    def test_a_truncated_body_is_500(self):
        self.assert_query_fault(500, "InternalError", "Prometheus answer broke off", "truncated")

    def test_a_200_mb_answer_is_refused_once_the_limit_is_read(self):
        size = 200 << 20
        before = ADAPTER.rss_kib()
        self.assert_query_fault(
            500, "InternalError",
            "Prometheus answer is larger than the limit of %d bytes "
            "(--prometheus-max-response-bytes)" % LIMIT, "huge", size=size)
        # The adapter stopped reading: the fake could not send the rest.
        self.assertLess(FAKE.huge_bytes_sent, size // 2)
        grown_mib = (ADAPTER.rss_kib() - before) / 1024
        self.assertLess(grown_mib, 150, "RSS grew by %d MiB" % grown_mib)

    def test_an_announced_200_mb_answer_is_refused_unread(self):
        self.assert_query_fault(
            500, "InternalError",
            "Prometheus answer of %d bytes is larger than the limit of %d bytes"
            % (200 << 20, LIMIT), "huge", size=200 << 20, content_length=True)

    def test_status_error_bodies_are_500_with_prometheus_text(self):
        cases = [(422, "execution", "query processing would load too many samples into memory"),
                 (400, "bad_data", "1:17: parse error: unexpected \"}\"")]
        for code, error_type, error in cases:
            with self.subTest(code=code):
                cause = ("unable to fetch metric gpu_utilization on pods from backend "
                         "\"default\": %s: %s" % (error_type, error))
                body = self.assert_query_fault(
                    500, "InternalError", "Internal error occurred: " + cause,
                    "error", code=code, error_type=error_type, error=error)
                self.assertEqual(cause, body["details"]["causes"][0]["message"])

    def test_warnings_leave_the_answer_intact_and_are_logged(self):
        warning = "PromQL info: metric might not be a counter, name does not end in _total"
        FAKE.set_warnings([warning])
        self.assert_served()
        harness.wait_until(lambda: warning in PROCS.log(ADAPTER.process), timeout=10,
                           what="the warning in the adapter's log")


class SampleValueTest(FaultTestCase):
    def test_nan_infinities_and_dcgm_blanks_are_left_out_and_huge_values_kept(self):
        body = self.assert_served("special")
        self.assertEqual({"huge", "plain"}, set(values_by_object(body)))
        self.assertEqual("42500m", values_by_object(body)["plain"])
        # 1e308 keeps its magnitude: a 309-digit integer, never an int64 overflow.
        self.assertEqual(fake_prometheus.quantity(1e308), values_by_object(body)["huge"])
        self.assertEqual(309, len(values_by_object(body)["huge"]))

    def test_a_named_pod_whose_sample_is_not_a_number_is_404(self):
        for pod in ("nan", "pos-inf", "neg-inf", "dcgm-blank"):
            with self.subTest(pod=pod):
                status, body = ADAPTER.get_json(
                    "/apis/custom.metrics.k8s.io/v1beta2/namespaces/special/pods/%s/%s"
                    % (pod, METRIC))
                self.assertEqual(404, status, body)
                self.assertEqual("NotFound", body["reason"])
                self.assertEqual("the server could not find the metric %s for pods %s: its "
                                 "sample is not a number (NaN, ±Inf or an exporter's blank)"
                                 % (METRIC, pod), body["message"])
        self.assert_up()


class RelistFaultTest(FaultTestCase):
    """Faults on /api/v1/series: discovery keeps its last good snapshot, then catches up."""

    def relist_failures(self):
        return fake_prometheus.self_metric(
            ADAPTER, 'metrics_adapter_relist_failed_queries{backend="default"}')

    def assert_discovery_survives(self, new_metric, kind, **options):
        FAKE.set_fault("series", kind, **options)
        FAKE.add_series({"__name__": new_metric, "namespace": "default", "pod": PODS[0]}, "7")
        harness.wait_until(lambda: self.relist_failures() == 1, timeout=30,
                           what="a relist failing with %s" % kind)
        names = discovered(ADAPTER)
        self.assertIn("pods/" + METRIC, names)
        self.assertNotIn("pods/" + new_metric, names)  # no relist succeeded since
        self.assert_served()  # queries are unaffected
        FAKE.clear_faults()
        harness.wait_until(lambda: "pods/" + new_metric in discovered(ADAPTER), timeout=30,
                           what="discovery of %s after the fault cleared" % new_metric)
        self.assertEqual(0, self.relist_failures())

    def test_an_error_status_keeps_the_last_good_discovery(self):
        self.assert_discovery_survives("gpu_after_503", "status", code=503, body="unavailable")

    def test_invalid_json_keeps_the_last_good_discovery(self):
        self.assert_discovery_survives("gpu_after_invalid_json", "invalid_json")

    def test_a_truncated_answer_keeps_the_last_good_discovery(self):
        self.assert_discovery_survives("gpu_after_truncation", "truncated")

    def test_a_status_error_body_keeps_the_last_good_discovery(self):
        self.assert_discovery_survives("gpu_after_api_error", "error", code=422,
                                       error_type="execution", error="too many series")

    def test_a_hanging_relist_keeps_serving_discovery(self):
        FAKE.set_fault("series", "hang")
        FAKE.add_series({"__name__": "gpu_after_hang", "namespace": "default",
                         "pod": PODS[0]}, "7")
        harness.wait_until(lambda: FAKE.waiting_count("series") >= 1, timeout=30,
                           what="a relist waiting on Prometheus")
        self.assertIn("pods/" + METRIC, discovered(ADAPTER))
        self.assert_served()
        FAKE.clear_faults()
        harness.wait_until(lambda: "pods/gpu_after_hang" in discovered(ADAPTER), timeout=30,
                           what="discovery after the hang was released")


class HoldingProxy:
    """A TCP proxy between the adapter and the fake Prometheus. hold() makes it a Prometheus
    that accepts connections and never answers (a stuck proxy, a half-open connection after a
    partition): every request that arrives from then on, on a new or a kept-alive connection, is
    read and never forwarded, and its connection is never closed from this side until stop().
    forward() passes new requests through again; held connections stay held."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.lock = threading.Lock()
        self.holding = False
        self.held = []  # [{"socket": client socket, "data": bytes read}]
        self.forwarded = []  # the bytes of each chunk passed on to Prometheus
        self.sockets = []
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self):
        with self.lock:
            self.holding = True

    def forward(self):
        with self.lock:
            self.holding = False

    def held_requests(self, path):
        with self.lock:
            return sum(1 for held in self.held if path.encode() in held["data"])

    def forwarded_requests(self, path):
        with self.lock:
            return sum(1 for data in self.forwarded if path.encode() in data)

    def held_sockets(self):
        with self.lock:
            return [held["socket"] for held in self.held]

    def stop(self):
        self.listener.close()
        with self.lock:
            sockets = list(self.sockets)
        for s in sockets:
            try:
                s.close()
            except OSError:
                pass

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.sockets.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        upstream = None
        held = None
        while True:
            try:
                data = client.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            with self.lock:
                if held is None and self.holding:
                    held = {"socket": client, "data": b""}
                    self.held.append(held)
                if held is not None:
                    held["data"] += data
                    continue
                self.forwarded.append(data)
            try:
                if upstream is None:
                    upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
                    with self.lock:
                        self.sockets.append(upstream)
                    threading.Thread(target=self._pump, args=(upstream, client),
                                     daemon=True).start()
                upstream.sendall(data)
            except OSError:
                break
        if upstream is not None:
            upstream.close()
        if held is None:
            client.close()  # a held connection stays open, whatever the adapter does

    @staticmethod
    def _pump(source, destination):
        while True:
            try:
                data = source.recv(65536)
                if not data:
                    break
                destination.sendall(data)
            except OSError:
                break
        try:
            destination.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class HungPrometheusTest(unittest.TestCase):
    """A Prometheus that accepts connections and never answers must not stall discovery: each
    series call has a deadline of one relist interval (at least 5 s, docs/reliability.md), so
    relisting resumes within two intervals of recovery while the held connections stay open."""

    INTERVAL = 5  # seconds: the deadline floor, so the deadline is exactly one interval

    @classmethod
    def setUpClass(cls):
        cls.proxy = HoldingProxy(FAKE.port)
        config = "%s/hung-rules-%d.yaml" % (PROCS.workdir, cls.proxy.port)
        with open(config, "w") as f:
            f.write(fake_prometheus.POD_RULES)
        try:
            cls.adapter = harness.Adapter(
                PROCS, ARGS.binary, config, cls.proxy.url,
                extra_args=["--metrics-relist-interval=%ds" % cls.INTERVAL])
        except Exception:
            cls.proxy.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        PROCS.stop(cls.adapter.process)
        cls.proxy.stop()

    def test_relisting_resumes_within_two_intervals_while_held_connections_stay_open(self):
        name = "gpu_after_held_connections"
        self.proxy.hold()
        harness.wait_until(lambda: self.proxy.held_requests("/api/v1/series") >= 1,
                           timeout=3 * self.INTERVAL, what="a relist held by the proxy")
        FAKE.add_series({"__name__": name, "namespace": "default", "pod": PODS[0]}, "7")
        held = self.proxy.held_sockets()
        self.assertNotIn("pods/" + name, discovered(self.adapter))  # nothing got through

        series_calls = self.proxy.forwarded_requests("/api/v1/series")
        self.proxy.forward()
        recovered = time.monotonic()
        budget = 2 * self.INTERVAL
        harness.wait_until(
            lambda: self.proxy.forwarded_requests("/api/v1/series") > series_calls,
            timeout=budget, interval=0.05, what="a series call reaching Prometheus")
        reached = time.monotonic() - recovered
        harness.wait_until(lambda: "pods/" + name in discovered(self.adapter),
                           timeout=max(0.05, recovered + budget - time.monotonic()),
                           interval=0.05, what="the new series in discovery")
        discovered_after = time.monotonic() - recovered
        # Every connection held before recovery is still open on the proxy's side.
        self.assertTrue(all(s.fileno() != -1 for s in held))
        self.assertGreaterEqual(self.proxy.held_requests("/api/v1/series"), 1)
        print("\nrelist interval %ds: series call %.2fs and discovery %.2fs after recovery, "
              "%d held connection(s) open" % (self.INTERVAL, reached, discovered_after,
                                              len(held)), file=sys.stderr)
        self.assertIsNone(self.adapter.process.poll(), "the adapter exited")


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
