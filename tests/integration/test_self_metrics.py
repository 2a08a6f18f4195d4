"""End to end: the adapter's own metrics at /metrics. Requests of known routes and codes are
made, then the exposition must show exactly those counts, the relist and per-rule gauges for the
config's rules, and pass `promtool check metrics`."""

import os
import re
import subprocess
import time
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG = os.path.join(harness.REPO, "config", "gpu-alibaba-exporter.yaml")
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta1"
PROCS = None
EXPORTER = None
ADAPTER = None

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def setUpModule():
    global PROCS, EXPORTER, ADAPTER
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        prometheus = harness.Prometheus(PROCS, EXPORTER.port)
        gpus = sum(1 for name, _, _ in EXPORTER.samples() if name == "nvidia_gpu_duty_cycle")
        prometheus.wait_for_series("nvidia_gpu_duty_cycle", gpus)
        ADAPTER = harness.Adapter(PROCS, ARGS.binary, CONFIG, prometheus.url, extra_args=[
            "--debug-socket-path=" + os.path.join(PROCS.workdir, "debug.sock")])
        harness.wait_until(lambda: "pods/duty_cycle_current" in discovered(), timeout=60,
                           what="discovery of pods/duty_cycle_current")
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


def discovered():
    status, body = ADAPTER.get_json(CUSTOM)
    return {r["name"] for r in body["resources"]} if status == 200 else set()


def scrape():
    """(content type, body, {(name, frozenset(labels)): value}) of GET /metrics."""
    status, content_type, body = ADAPTER.get("/metrics")
    assert status == 200, (status, body)
    samples = {}
    for line in body.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SAMPLE.match(line)
        assert match, "not a sample line: %r" % line
        labels = frozenset(LABEL.findall(match.group(2) or ""))
        samples[(match.group(1), labels)] = float(match.group(3))
    return content_type, body, samples


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


class SelfMetricsTest(unittest.TestCase):
    def test_requests_are_counted_by_route_template_and_code(self):
        _, _, before = scrape()
        good = CUSTOM + "/namespaces/default/pods/*/duty_cycle_current"
        requests = [
            (CUSTOM, 200),  # discovery
            (CUSTOM, 200),
            (good, 200),  # one Prometheus query
            (CUSTOM + "/namespaces/default/pods/*/no_such_metric", 404),
            (CUSTOM + "/namespaces/default/pods/*/no_such_metric", 404),
            (good + "?labelSelector=%3D%3D%3D", 400),  # a selector that does not parse
            ("/no/such/path", 404),
        ]
        for path, code in requests:
            self.assertEqual(code, ADAPTER.get(path)[0], path)
        content_type, body, after = scrape()

        self.assertEqual("text/plain; version=0.0.4; charset=utf-8", content_type)
        expected = {("discovery", "200"): 2, ("custom_metric", "200"): 1,
                    ("custom_metric", "404"): 2, ("custom_metric", "400"): 1,
                    ("other", "404"): 1,
                    ("metrics", "200"): 1}  # the first scrape, counted once it was answered
        for (route, code), count in expected.items():
            name = "metrics_adapter_requests_total"
            self.assertEqual(count, value(after, name, route=route, code=code)
                             - value(before, name, route=route, code=code), (route, code))
        histogram = "metrics_adapter_request_duration_seconds_count"
        self.assertEqual(4, value(after, histogram, route="custom_metric")
                         - value(before, histogram, route="custom_metric"))
        # Raw paths never become label values.
        self.assertNotIn("no_such_metric", body)
        self.assertNotIn("/no/such/path", body)
        # The scrape that produced this body was itself in flight, and nothing else was.
        self.assertEqual(1, value(after, "metrics_adapter_requests_in_flight"))
        queries = "metrics_adapter_prometheus_requests_total"
        success = {"backend": "default", "endpoint": "query", "outcome": "success"}
        self.assertGreaterEqual(value(after, queries, **success) - value(before, queries, **success),
                                1)

    def test_relist_and_rule_gauges_name_the_configs_rules(self):
        samples = EXPORTER.samples()
        series = sum(1 for _, labels, _ in samples if labels.get("uuid"))
        metrics = len({name for name, labels, _ in samples
                       if labels.get("uuid") and name.startswith("nvidia_gpu_")})
        _, _, after = scrape()
        self.assertGreaterEqual(value(after, "metrics_adapter_relist_duration_seconds_count",
                                      backend="default"), 1)
        self.assertEqual(0, value(after, "metrics_adapter_relist_failed_queries", backend="default"))
        # The last relist that found every series is at most a few relist intervals old.
        last = value(after, "metrics_adapter_backend_last_successful_relist_timestamp_seconds",
                     backend="default")
        self.assertLess(abs(time.time() - last), 120)
        # Both rules of the config share seriesQuery {uuid!=""} and expose one metric per series
        # name (with _over_time and _current suffixes respectively).
        for rule in ("rules[0]", "rules[1]"):
            self.assertEqual(series, value(after, "metrics_adapter_rule_series", rule=rule), rule)
            self.assertEqual(metrics, value(after, "metrics_adapter_rule_metrics", rule=rule), rule)
        rules = {dict(labels)["rule"] for name, labels in after
                 if name == "metrics_adapter_rule_series"}
        self.assertEqual({"rules[0]", "rules[1]"}, rules)
        self.assertEqual(0, sum(v for (name, _), v in after.items()
                                if name == "metrics_adapter_rule_errors_total"))

    def test_promtool_accepts_the_exposition(self):
        _, body, _ = scrape()
        result = subprocess.run(["promtool", "check", "metrics"], input=body,
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
        self.assertIn("# TYPE metrics_adapter_request_duration_seconds histogram", body)
        self.assertIn("# TYPE metrics_adapter_requests_total counter", body)



class DebugSocketTest(unittest.TestCase):
    """--debug-socket-path: the metrics, health and flags without TLS or credentials, over a
    Unix socket only the adapter's user may open; PUT /debug/flags/v sets --v at run time."""

    def unix(self, path, *extra):
        result = subprocess.run(["curl", "-sS", "--unix-socket",
                                 os.path.join(PROCS.workdir, "debug.sock"), "-w", "\n%{http_code}"]
                                + list(extra) + ["http://adapter" + path],
                                capture_output=True, text=True, timeout=30)
        body, _, code = result.stdout.rpartition("\n")
        return int(code or 0), body

    def test_metrics_health_and_flags(self):
        code, body = self.unix("/metrics")
        self.assertEqual(200, code)
        self.assertIn("metrics_adapter_requests_total", body)
        self.assertEqual((200, "ok"), self.unix("/readyz"))
        code, body = self.unix("/debug/flags")
        self.assertEqual(200, code)
        self.assertIn("--secure-port=%d\n" % ADAPTER.port, body)
        self.assertEqual(404, self.unix(CUSTOM)[0])  # the API is not served here
        self.assertEqual(0o600, os.stat(os.path.join(PROCS.workdir, "debug.sock")).st_mode & 0o777)

    def test_put_verbosity_changes_the_access_log(self):
        before = PROCS.log(ADAPTER.process).count(" /healthz?debug-socket ")
        self.assertEqual(200, self.unix("/debug/flags/v", "-X", "PUT", "--data", "2")[0])
        ADAPTER.get("/healthz?debug-socket")  # --v=2: no access-log line
        self.assertEqual(200, self.unix("/debug/flags/v", "-X", "PUT", "--data", "6")[0])
        ADAPTER.get("/healthz?debug-socket")  # --v=6 again: one
        harness.wait_until(lambda: PROCS.log(ADAPTER.process).count(" /healthz?debug-socket ")
                           == before + 1, timeout=10, what="one access-log line")

if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
