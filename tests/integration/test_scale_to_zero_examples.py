"""The scale-to-zero examples (docs/llm-inference.md "Scale to zero"): the HPAs of
deploy/examples/hpa-scale-to-zero-*.yaml against what the chart renders with
charts/metrics-adapter/examples/llm-scale-to-zero.yaml. The binary's --dry-run accepts the
rendered flags and files, check-config serves every External metric the HPAs name from rules (the
series test_llm_inference.py's simulators serve), the forecastRules serve the rest, and the API
server's scale-to-zero validation (as fake_kube.py applies it) accepts each HPA."""

import os
import shutil
import tempfile
import unittest

import yaml

import chart_support
import fake_kube
import harness
import test_deploy

ARGS, UNITTEST_ARGV = harness.parse_args()
EXAMPLES = [os.path.join(test_deploy.DEPLOY, "examples", name)
            for name in ("hpa-scale-to-zero-gateway.yaml", "hpa-scale-to-zero-forecast.yaml")]
VALUES = os.path.join(chart_support.CHART, "examples", "llm-scale-to-zero.yaml")
WORK = RENDERED = None


def setUpModule():
    global WORK, RENDERED
    WORK = tempfile.mkdtemp(prefix="ma-zero-")
    test_deploy.WORK = WORK  # where its helpers write their files
    RENDERED = chart_support.Helm(WORK).template(WORK, values=[VALUES])


def tearDownModule():
    if WORK and not os.environ.get("KEEP_TEST_DIRS"):
        shutil.rmtree(WORK, ignore_errors=True)


def hpas():
    """(example file, HPA object) of every HPA of the examples."""
    return [(os.path.basename(path), o) for path in EXAMPLES
            for o in test_deploy.json_objects(path) if o["kind"] == "HorizontalPodAutoscaler"]


class ScaleToZeroExamplesTest(unittest.TestCase):
    def test_the_api_accepts_each_hpa_at_zero(self):
        found = hpas()
        self.assertEqual(len(found), 2)
        for name, hpa in found:
            with self.subTest(example=name):
                self.assertEqual(hpa["spec"]["minReplicas"], 0)
                fixture = {"name": hpa["metadata"]["name"], "spec": hpa["spec"]}
                self.assertIsNone(fake_kube.hpa_invalid(fixture))
                # The same HPA on a Pods metric alone is what the API refuses.
                pods_only = dict(fixture, spec=dict(hpa["spec"], metrics=[
                    {"type": "Pods", "pods": {"metric": {"name": "vllm_num_requests_waiting"}}}]))
                self.assertIn("to support scaling to zero replicas",
                              fake_kube.hpa_invalid(pods_only))

    def test_every_external_metric_is_served_by_the_rendered_chart(self):
        config = test_deploy.config_text(RENDERED)
        forecasts = {rule["name"] for rule in yaml.safe_load(config).get("forecastRules") or []}
        self.assertEqual(forecasts, {"vllm_llama_demand_forecast"})
        served = test_deploy.served(config, "--series-file", test_deploy.llm_series_file(WORK))
        checked = 0
        for name, hpa in hpas():
            for metric in hpa["spec"]["metrics"]:
                with self.subTest(example=name, metric=metric["external"]["metric"]["name"]):
                    self.assertEqual(metric["type"], "External")
                    wanted = metric["external"]["metric"]["name"]
                    self.assertIn(wanted, forecasts | served)
                    checked += 1
        self.assertEqual(checked, 3)

    def test_the_binary_accepts_the_rendered_flags_and_files(self):
        args = chart_support.materialize(RENDERED, os.path.join(WORK, "mounts"))
        result = test_deploy.run([ARGS.binary, "--dry-run"] + args, env=test_deploy.offline_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("dry run OK: config ", result.stdout)
        self.assertIn("; 1 forecastRules", result.stdout)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
