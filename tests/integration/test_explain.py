"""`metrics-adapter explain` and `metrics-adapter check-config` against a real Prometheus
scraping the simulated GPU exporter. Expected values come from what the exporter serves."""

import json
import os
import subprocess
import sys
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
ALIBABA = os.path.join(harness.REPO, "config", "gpu-alibaba-exporter.yaml")
PROCS = None
EXPORTER = None
PROMETHEUS = None


def setUpModule():
    global PROCS, EXPORTER, PROMETHEUS
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        PROMETHEUS = harness.Prometheus(PROCS, EXPORTER.port)
        gpus = sum(1 for name, _, _ in EXPORTER.samples() if name == "nvidia_gpu_duty_cycle")
        PROMETHEUS.wait_for_series("nvidia_gpu_duty_cycle", gpus)
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


def run(*args):
    return subprocess.run([ARGS.binary] + list(args), capture_output=True, text=True, timeout=60)


def explain(metric, *extra):
    return run("explain", "--config", ALIBABA, "--prometheus-url", PROMETHEUS.url,
               "--metric", metric, *extra)


def quantity(text):
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def answer_json(stdout):
    """The JSON printed after the "API answer" line."""
    start = stdout.index("API answer")
    body = stdout[stdout.index("\n", start) + 1:stdout.index("\nresult:")]
    return json.loads(body)


class ExplainTest(unittest.TestCase):
    def one_gpu_pod(self):
        """(namespace, pod, value) of a pod with exactly one GPU."""
        pods = EXPORTER.grouped("nvidia_gpu_duty_cycle", "pod_name")
        for pod, samples in sorted(pods.items()):
            if len(samples) == 1:
                labels, value = samples[0]
                return labels["namespace_name"], pod, value
        self.skipTest("the exporter has no pod with exactly one GPU")

    def test_known_metric_names_rule_promql_and_values(self):
        namespace, pod, value = self.one_gpu_pod()
        result = explain("duty_cycle_current", "--resource", "pods", "--namespace", namespace,
                         "--name", pod)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        # rules[1] of the file names series <metric>_current.
        self.assertIn("rule: rules[1] serves pods/duty_cycle_current from series "
                      "nvidia_gpu_duty_cycle", result.stdout)
        self.assertIn('PromQL: nvidia_gpu_duty_cycle{namespace_name="%s",pod_name="%s"}'
                      % (namespace, pod), result.stdout)
        sample_lines = [line for line in result.stdout.splitlines()
                        if line.startswith("  {") and 'pod_name="%s"' % pod in line]
        self.assertEqual(len(sample_lines), 1, result.stdout)
        self.assertAlmostEqual(float(sample_lines[0].split(" @ ")[0].rsplit(" ", 1)[1]), value)
        items = answer_json(result.stdout)["items"]
        self.assertEqual(len(items), 1)
        self.assertEqual(items[0]["describedObject"]["name"], pod)
        self.assertAlmostEqual(quantity(items[0]["value"]), value, places=3)

    def test_takes_the_servers_prometheus_client_flags(self):
        namespace, pod, value = self.one_gpu_pod()
        result = explain("duty_cycle_current", "--namespace", namespace, "--name", pod,
                         "--prometheus-verb=POST", "--prometheus-timeout", "5s",
                         "--prometheus-header", "X-Scope-OrgID=team-a",
                         "--prometheus-max-response-bytes=1048576")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        items = answer_json(result.stdout)["items"]
        self.assertEqual([item["describedObject"]["name"] for item in items], [pod])
        self.assertAlmostEqual(quantity(items[0]["value"]), value, places=3)
        # A server-only flag is refused the way the server refuses an unknown one.
        refused = explain("duty_cycle_current", "--secure-port=6443")
        self.assertEqual(refused.returncode, 1)
        self.assertIn("unknown flag: --secure-port", refused.stderr)

    def test_unknown_metric_names_reason_and_close_name(self):
        namespace, pod, _ = self.one_gpu_pod()
        result = explain("duty_cycle_curent", "--namespace", namespace, "--name", pod)
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn("no rule serves duty_cycle_curent for pods", result.stdout)
        self.assertIn("reason: no rule turns any series into the name duty_cycle_curent",
                      result.stdout)
        closest = [line for line in result.stdout.splitlines()
                   if line.startswith("closest metric names:")]
        self.assertEqual(len(closest), 1, result.stdout)
        self.assertIn("duty_cycle_current", closest[0].split())
        self.assertIn('"code": 404', result.stdout)

    def test_metric_of_another_resource_lists_where_it_exists(self):
        result = explain("duty_cycle_current", "--resource", "deployments.apps",
                         "--namespace", "default")
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn("reason: the metric exists, but not for deployments.apps", result.stdout)
        self.assertIn("pods", result.stdout.split("it exists for:")[1].splitlines()[0])

    def test_check_config_lists_what_rules_expose_from_live_prometheus(self):
        result = run("check-config", ALIBABA, "--prometheus-url", PROMETHEUS.url)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("\n  pods/duty_cycle_current\n", result.stdout)
        self.assertIn("\n  pods/duty_cycle_over_time\n", result.stdout)

    def test_check_config_on_a_broken_file_exits_1_naming_the_field(self):
        broken = os.path.join(PROCS.workdir, "broken.yaml")
        with open(broken, "w") as f:
            f.write("rules:\n- seriesQuery: '{uuid!=\"\"}'\n"
                    "  metricsQuery: <<.Series>>{<<.LabelMatcher>>}\n")
        result = run("check-config", broken)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("rules[0].metricsQuery", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
