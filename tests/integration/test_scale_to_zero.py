"""Scale to zero (issue 45) against a real Prometheus and the fake Kubernetes API: the doctor on
HPAs with minReplicas: 0, and the adapter's answer for a metric its config defines whose series
are gone.

Two vLLM Deployments in `default`, their pods exporting vllm:* series as vLLM does (labels
namespace, pod, model_name): vllm-llama runs two pods that export vllm:num_requests_waiting;
vllm-idle was scaled to 0, and the vllm:num_requests_running its pods exported went stale before
the tests. The llm-d gateway's endpoint picker exports the flow-control queue of both pools. The
rules: config/llm-d-epp.yaml and, merged after it, the External sum most vLLM guides scale on."""

import json
import os
import re
import subprocess
import sys
import time
import unittest

import yaml

import harness
import test_doctor

ARGS, UNITTEST_ARGV = harness.parse_args()
PROCS = SCRAPED = PROMETHEUS = KUBE = ADAPTER = None
CONFIG = None
MAX_AGE = "5s"  # the relists' lookback: series stale for longer are gone to discovery
EXPORTED = {"idle": True}  # the idle Deployment's pods still export (until setUpModule is done)
LLAMA_PODS = ["vllm-llama-5f6d7c8b9-aaaaa", "vllm-llama-5f6d7c8b9-bbbbb"]
IDLE_PODS = ["vllm-idle-6c7d8e9f4-ccccc"]
WAITING = {LLAMA_PODS[0]: 2, LLAMA_PODS[1]: 3}
GATEWAY_POD = "gateway-epp-7b8c9d6f5-ddddd"
QUEUE = {"llama-pool": 4, "idle-pool": 0}  # requests the gateway holds per pool

# The trap of issue 45: an External sum of a series the scaled pods export themselves.
TRAP_RULES = """# vLLM's own series summed as External metrics (the test's trap).
externalRules:
- seriesQuery: '{__name__=~"vllm:num_requests_(waiting|running)",namespace!=""}'
  resources: {overrides: {namespace: {resource: namespace}}}
  name: {matches: "^vllm:(.*)$", as: "vllm_${1}_sum"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
"""


def exposition():
    lines = []
    for pod in LLAMA_PODS:
        lines.append('vllm:num_requests_waiting{namespace="default",pod="%s",model_name="llama"} '
                     "%d\n" % (pod, WAITING[pod]))
    if EXPORTED["idle"]:
        for pod in IDLE_PODS:
            lines.append('vllm:num_requests_running{namespace="default",pod="%s",'
                         'model_name="idle"} 1\n' % pod)
    for pool, held in sorted(QUEUE.items()):
        lines.append('inference_extension_flow_control_queue_size{namespace="default",pod="%s",'
                     'inference_pool="%s",model_name="%s"} %d\n'
                     % (GATEWAY_POD, pool, pool.split("-")[0], held))
    return "".join(lines)


def external(name, selector, average="1"):
    metric = {"name": name}
    if selector:
        metric["selector"] = {"matchLabels": selector}
    return {"type": "External", "external": {"metric": metric, "target": {
        "type": "AverageValue", "averageValue": average}}}


def zero_hpa(name, target, metric, replicas):
    hpa = test_doctor.hpa(name, target, [metric], status={
        "currentReplicas": replicas, "desiredReplicas": replicas, "conditions": []})
    hpa["spec"]["minReplicas"] = 0
    return hpa


def objects():
    pods = [{"name": name, "namespace": "default", "labels": {"app": "vllm-llama"},
             "ready": True} for name in LLAMA_PODS]
    return {
        "extra_resources": [test_doctor.HPA_RESOURCE, test_doctor.APISERVICE_RESOURCE],
        "auth": {"allow": [{"user": test_doctor.HPA_CONTROLLER}]},
        "pods": pods,
        "deployments.apps": [test_doctor.deployment("vllm-llama", len(LLAMA_PODS)),
                             test_doctor.deployment("vllm-idle", 0)],
        "horizontalpodautoscalers.autoscaling": [
            zero_hpa("llama-trap", "vllm-llama",
                     external("vllm_num_requests_waiting_sum", {"model_name": "llama"}), 2),
            zero_hpa("idle-trap", "vllm-idle",
                     external("vllm_num_requests_running_sum", {"model_name": "idle"}), 0),
            zero_hpa("idle-gateway", "vllm-idle",
                     external("inference_pool_flow_control_queue_size",
                              {"inference_pool": "idle-pool"}), 0)],
        "apiservices.apiregistration.k8s.io": [
            test_doctor.apiservice("v1beta1.custom.metrics.k8s.io"),
            test_doctor.apiservice("v1beta2.custom.metrics.k8s.io"),
            test_doctor.apiservice("v1beta1.external.metrics.k8s.io")],
    }


def relists():
    """How many relists the adapter has run (its own metrics)."""
    status, _, body = ADAPTER.get("/metrics")
    assert status == 200, body
    found = re.search(r'^metrics_adapter_relist_duration_seconds_count\{backend="default"\} '
                      r"(\d+)", body, re.M)
    return int(found.group(1)) if found else 0


def series_within_max_age(name):
    """The series of `name` a relist would find now (Prometheus's /api/v1/series)."""
    answer = harness.http_get_json(PROMETHEUS.url + "/api/v1/series?match[]=%s&start=%d" % (
        name, int(time.time()) - int(MAX_AGE[:-1])))
    return answer["data"]


def setUpModule():
    global PROCS, SCRAPED, PROMETHEUS, KUBE, ADAPTER, CONFIG
    PROCS = harness.Processes()
    try:
        SCRAPED = harness.FunctionExporter(exposition)
        PROMETHEUS = harness.Prometheus(PROCS, SCRAPED.port)
        PROMETHEUS.wait_for_series("vllm:num_requests_waiting", len(LLAMA_PODS))
        PROMETHEUS.wait_for_series("vllm:num_requests_running", len(IDLE_PODS))
        PROMETHEUS.wait_for_series("inference_extension_flow_control_queue_size", len(QUEUE))
        trap = os.path.join(PROCS.workdir, "vllm-external.yaml")
        with open(trap, "w") as f:
            f.write(TRAP_RULES)
        CONFIG = os.path.join(PROCS.workdir, "scale-to-zero.yaml")
        with open(CONFIG, "w") as f:
            f.write(subprocess.run(
                [sys.executable, os.path.join(harness.REPO, "scripts", "merge_presets.py"),
                 os.path.join(harness.REPO, "config", "llm-d-epp.yaml"), trap],
                check=True, capture_output=True, text=True).stdout)
        ADAPTER = harness.Adapter(PROCS, ARGS.binary, CONFIG, PROMETHEUS.url,
                                  extra_args=["--metrics-max-age=" + MAX_AGE])
        harness.wait_until(lambda: "vllm_num_requests_running_sum" in external_names(),
                           what="the adapter to discover the idle pods' series")
        # The idle Deployment scaled to 0: its pods' series go stale, then out of every relist.
        EXPORTED["idle"] = False
        harness.wait_until(lambda: not PROMETHEUS.query("vllm:num_requests_running"),
                           what="the idle pods' series to go stale")
        harness.wait_until(lambda: not series_within_max_age("vllm:num_requests_running"),
                           what="the idle pods' series to leave metrics-max-age")
        done = relists()
        harness.wait_until(lambda: relists() >= done + 2, what="two relists without them")
        KUBE = harness.FakeKube(PROCS, objects())
    except Exception:
        tearDownModule()
        raise


def tearDownModule():
    if SCRAPED:
        SCRAPED.stop()
    if PROCS:
        PROCS.stop_all()


def external_names():
    status, body = ADAPTER.get_json("/apis/external.metrics.k8s.io/v1beta1")
    return {r["name"] for r in body["resources"]} if status == 200 else set()


def doctor(name):
    """(exit code, text report, JSON report of the HPA) of `doctor hpa NAME`."""
    env = dict(os.environ, KUBECONFIG=KUBE.kubeconfig)
    argv = [ARGS.binary, "doctor", "hpa", name, "-n", "default", "--config", CONFIG,
            "--prometheus-url", PROMETHEUS.url, "--metrics-max-age=" + MAX_AGE]
    text = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    report = subprocess.run(argv + ["-o", "json"], capture_output=True, text=True, timeout=60,
                            env=env)
    return text.returncode, text.stdout + text.stderr, json.loads(report.stdout)["hpas"][0]


def rule_index(metric):
    """The externalRules index of CONFIG's rule that names `metric` (by its name.as)."""
    with open(CONFIG) as f:
        rules = yaml.safe_load(f)["externalRules"]
    return [i for i, r in enumerate(rules) if r["name"]["as"] == metric][0]


class DoctorAtZeroTest(unittest.TestCase):
    def test_a_metric_the_scaled_pods_export_is_the_trap_while_running(self):
        code, text, entry = doctor("llama-trap")
        self.assertEqual(code, 1, text)
        self.assertTrue(entry["cause"].startswith(
            "spec.metrics[0] (External vllm_num_requests_waiting_sum) cannot bring "
            "Deployment/vllm-llama back from 0 replicas once it scales there"), entry["cause"])
        self.assertIn("come only from the Deployment's own pods (%s)" % ", ".join(LLAMA_PODS),
                      entry["cause"])
        gateway_rule = "externalRules[%d]" % rule_index("inference_pool_flow_control_queue_size")
        self.assertIn("External inference_pool_flow_control_queue_size", entry["zeroFix"])
        self.assertIn(gateway_rule + " of the adapter's config serves it", entry["zeroFix"])
        self.assertIn("minReplicas: 1", entry["zeroFix"])
        self.assertIn("\nfix: wake it on a metric that exists while no pod runs", text)
        # It has a value now: the sum of what the pods export.
        metric = entry["metrics"][0]
        self.assertTrue(metric["hasValue"])
        self.assertEqual(sum(v["valueMilli"] for v in metric["values"]),
                         1000 * sum(WAITING.values()))
        self.assertTrue(metric["emptyAtZero"])

    def test_the_trap_at_zero_names_the_rule_whose_series_are_gone(self):
        code, text, entry = doctor("idle-trap")
        self.assertEqual(code, 1, text)
        self.assertTrue(entry["cause"].startswith(
            "spec.metrics[0] (External vllm_num_requests_running_sum) cannot bring "
            "Deployment/vllm-idle back from 0 replicas, where it sits now"), entry["cause"])
        self.assertIn("(%s)" % IDLE_PODS[0], entry["cause"])
        self.assertIn("FailedGetExternalMetric", entry["cause"])
        metric = entry["metrics"][0]
        self.assertFalse(metric["hasValue"])
        # A rule defines it; its series are gone: no naming mismatch.
        trap_rule = "externalRules[%d]" % rule_index("vllm_${1}_sum")
        self.assertTrue(metric["rule"].startswith(
            trap_rule + " serves vllm_num_requests_running_sum from series "
            "vllm:num_requests_running; its series are gone"), metric["rule"])
        self.assertNotIn("no externalRule serves", text)
        self.assertNotIn("naming mismatch", text)
        self.assertEqual(metric["answer"], "200, 0 item(s)")

    def test_a_gateway_queue_at_zero_is_healthy(self):
        code, text, entry = doctor("idle-gateway")
        self.assertEqual(code, 0, text)
        self.assertTrue(entry["ok"])
        self.assertEqual(entry["cause"], "")
        self.assertTrue(entry["mayScaleToZero"])
        held = QUEUE["idle-pool"]
        self.assertEqual(entry["computedReplicas"], -(-held // 1))  # ceil(held / 1 per replica)
        self.assertIsNone(entry["metrics"][0]["replicas"]["ratio"])
        self.assertTrue(entry["metrics"][0]["replicas"]["fromZeroReplicas"])
        self.assertTrue(entry["metrics"][0]["atZero"].startswith("has series: its series "))
        self.assertIn(GATEWAY_POD, entry["metrics"][0]["atZero"])
        self.assertNotIn("nan", text)
        self.assertIn("at 0 replicas: ceil(usage / target), no tolerance", text)


class GoneSeriesAnswerTest(unittest.TestCase):
    def get(self, metric, selector=""):
        path = "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/" + metric
        return ADAPTER.get_json(path + ("?labelSelector=" + selector if selector else ""))

    def test_a_defined_metric_whose_series_are_gone_is_an_empty_list(self):
        self.assertEqual(series_within_max_age("vllm:num_requests_running"), [])
        status, body = self.get("vllm_num_requests_running_sum", "model_name%3Didle")
        self.assertEqual(status, 200, body)
        self.assertEqual((body["kind"], body["items"]), ("ExternalMetricValueList", []))
        self.assertIn("vllm_num_requests_running_sum", external_names())

    def test_a_defined_metric_that_never_had_series_is_an_empty_list(self):
        # config/llm-d-epp.yaml's seriesQuery names its series; none exists in this Prometheus.
        self.assertEqual(PROMETHEUS.query("inference_pool_average_kv_cache_utilization"), [])
        status, body = self.get("inference_pool_average_kv_cache_utilization")
        self.assertEqual((status, body["items"]), (200, []))

    def test_values_come_back_with_the_series_and_unknown_names_stay_404(self):
        status, body = self.get("vllm_num_requests_waiting_sum", "model_name%3Dllama")
        self.assertEqual(status, 200, body)
        self.assertEqual([i["value"] for i in body["items"]],
                         [harness.milli_quantity(sum(WAITING.values()))])
        status, body = self.get("vllm_num_requests_swapped_sum")
        self.assertEqual(status, 404, body)
        self.assertTrue(body["message"].startswith(
            "the server could not find the metric vllm_num_requests_swapped_sum"), body)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
