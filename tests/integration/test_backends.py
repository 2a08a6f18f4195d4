"""Several backends in one adapter: a Prometheus (the flags' "default") and a VictoriaMetrics
behind a recording proxy (the config's backend "vm", with tenant headers), both scraping the
simulated GPU exporter. Each rule is served by the backend it names, with values computed from
what the exporter serves; the proxy shows the tenant headers as Go sends them; explain and
check-config name the backend; a backend that goes down fails only its own rules while the
other keeps serving and relisting; a reload moves a backend to a new URL."""

import os
import signal
import subprocess
import time
import unittest
import urllib.parse

import fake_prometheus
import harness
from recording_proxy import RecordingProxy

ARGS, UNITTEST_ARGV = harness.parse_args()
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta1"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
BERT = "bert-intent-detection"

CONFIG = """backends:
  vm:
    url: %(vm_url)s
    headers:
      x-scope-orgid: team-gpu
      X-Extra: [first, second]
rules:
- seriesQuery: '{uuid!=""}'
  resources:
    overrides:
      pod_name: {resource: "pod"}
      namespace_name: {resource: "namespace"}
  name: {matches: ^nvidia_gpu_(.*)$, as: "${1}_current"}
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
- seriesQuery: '{uuid!=""}'
  resources:
    overrides:
      pod_name: {resource: "pod"}
      namespace_name: {resource: "namespace"}
  name: {matches: ^nvidia_gpu_(.*)$, as: "${1}_from_vm"}
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
  backend: vm
externalRules:
- seriesQuery: 'DCGM_FI_DEV_GPU_UTIL{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
  name: {matches: ^DCGM_FI_DEV_GPU_UTIL$, as: pod_gpu_utilization_max}
  metricsQuery: max by (namespace, pod) (<<.Series>>{<<.LabelMatchers>>})
  backend: vm
"""

PROCS = EXPORTER = PROMETHEUS = VICTORIA = PROXY = PROMETHEUS_PROXY = KUBE = ADAPTER = None
CONFIG_PATH = None


def samples(series):
    return [(labels, value) for name, labels, value in EXPORTER.samples() if name == series]


def cluster_objects():
    pods = {}
    for labels, _ in samples("nvidia_gpu_duty_cycle"):
        if labels.get("pod_name"):
            pods[labels["pod_name"]] = {
                "name": labels["pod_name"], "namespace": labels["namespace_name"],
                "labels": {"app": labels["pod_name"].rsplit("-", 2)[0]}}
    return {"pods": sorted(pods.values(), key=lambda p: p["name"]),
            "namespaces": [{"name": "default"}, {"name": "ml-team"}]}


def write_config(vm_url):
    with open(CONFIG_PATH, "w") as f:
        f.write(CONFIG % {"vm_url": vm_url})


def setUpModule():
    global PROCS, EXPORTER, PROMETHEUS, VICTORIA, PROXY, PROMETHEUS_PROXY, KUBE, ADAPTER
    global CONFIG_PATH
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        PROMETHEUS = harness.Prometheus(PROCS, EXPORTER.port)
        VICTORIA = harness.VictoriaMetrics(PROCS, EXPORTER.port)
        for engine in (PROMETHEUS, VICTORIA):
            engine.wait_for_series("nvidia_gpu_duty_cycle", len(samples("nvidia_gpu_duty_cycle")))
            engine.wait_for_series("DCGM_FI_DEV_GPU_UTIL", len(samples("DCGM_FI_DEV_GPU_UTIL")))
        PROXY = RecordingProxy(VICTORIA.url)
        PROMETHEUS_PROXY = RecordingProxy(PROMETHEUS.url)  # sees what the default backend sends
        KUBE = harness.FakeKube(PROCS, cluster_objects())
        CONFIG_PATH = os.path.join(PROCS.workdir, "backends.yaml")
        write_config(PROXY.url + "/?nocache=1")
        ADAPTER = harness.Adapter(PROCS, ARGS.binary, CONFIG_PATH, PROMETHEUS_PROXY.url,
                                  extra_args=["--lister-kubeconfig=" + KUBE.kubeconfig])
        harness.wait_until(lambda: metric_names() >= {"pods/duty_cycle_current",
                                                      "pods/duty_cycle_from_vm"},
                           timeout=30, what="discovery on both backends (log: %s)"
                           % ADAPTER.process.log_path)
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()
    for proxy in (PROXY, PROMETHEUS_PROXY):
        if proxy:
            proxy.stop()


def metric_names():
    status, body = ADAPTER.get_json(CUSTOM)
    return {r["name"] for r in body["resources"]} if status == 200 else set()


def pods_request(metric):
    return "%s/namespaces/default/pods/*/%s?labelSelector=%s" % (
        CUSTOM, metric, urllib.parse.quote("app=" + BERT))


def expected_duty_cycles():
    """{pod: quantity} of the bert pods, from what the exporter serves."""
    duty = {labels["pod_name"]: value for labels, value in samples("nvidia_gpu_duty_cycle")
            if labels.get("pod_name") and labels.get("namespace_name") == "default"}
    return {pod: harness.milli_quantity(value) for pod, value in duty.items()
            if pod.startswith(BERT)}


def values_by_pod(body):
    return {i["describedObject"]["name"]: i["value"] for i in body["items"]}


def self_metric(name, backend):
    return fake_prometheus.self_metric(ADAPTER, '%s{backend="%s"}' % (name, backend))


def run_tool(*args):
    return subprocess.run([ARGS.binary] + list(args), capture_output=True, text=True, timeout=60)


class BackendsTest(unittest.TestCase):
    def test_each_rule_is_served_by_the_backend_it_names(self):
        expected = expected_duty_cycles()
        self.assertEqual(3, len(expected))
        before = len(PROXY.requests())
        status, body = ADAPTER.get_json(pods_request("duty_cycle_current"))
        self.assertEqual(200, status, body)
        self.assertEqual(expected, values_by_pod(body))
        self.assertEqual(before, len(PROXY.requests()), "the default rule went to the vm backend")

        status, body = ADAPTER.get_json(pods_request("duty_cycle_from_vm"))
        self.assertEqual(200, status, body)
        self.assertEqual(expected, values_by_pod(body))
        asked = [r for r in PROXY.requests()[before:] if r.target.startswith("/api/v1/query")]
        self.assertEqual(1, len(asked))

    def test_an_external_rule_on_the_vm_backend(self):
        gpu = {}
        for labels, value in samples("DCGM_FI_DEV_GPU_UTIL"):
            if labels.get("namespace") == "default" and labels.get("pod"):
                gpu[labels["pod"]] = max(value, gpu.get(labels["pod"], value))
        status, body = ADAPTER.get_json(EXTERNAL + "/namespaces/default/pod_gpu_utilization_max")
        self.assertEqual(200, status, body)
        got = {i["metricLabels"]["pod"]: i["value"] for i in body["items"]}
        self.assertEqual({pod: harness.milli_quantity(v) for pod, v in gpu.items()}, got)

    def test_the_real_prometheus_answers_series_gzipped(self):
        # Prometheus 2.42 (Debian 12's) compresses only for the exact token "gzip": what the
        # adapter asks must be that, or the series answers (260 MB at 1M series) come plain.
        series = [r for r in PROMETHEUS_PROXY.requests() if r.target.startswith("/api/v1/series")]
        self.assertTrue(series, "no series request reached the default backend")
        for request in series:
            self.assertEqual(["gzip"], request.values("accept-encoding"), request.target)
            self.assertEqual("gzip", request.answer_encoding, request.target)

    def test_tenant_headers_arrive_as_go_sends_them(self):
        ADAPTER.get_json(pods_request("duty_cycle_from_vm"))
        requests = PROXY.requests()
        self.assertTrue(any(r.target.startswith("/api/v1/series") for r in requests))
        for request in requests:
            self.assertEqual(["X-Scope-Orgid"], request.names("x-scope-orgid"), request.target)
            self.assertEqual(["team-gpu"], request.values("x-scope-orgid"))
            self.assertEqual(["first", "second"], request.values("x-extra"))
            self.assertEqual(["X-Extra", "X-Extra"], request.names("x-extra"))

    def test_explain_and_check_config_name_the_backend(self):
        pod = sorted(expected_duty_cycles())[0]
        result = run_tool("explain", "--config", CONFIG_PATH, "--prometheus-url", PROMETHEUS.url,
                          "--metric", "duty_cycle_from_vm", "--namespace", "default",
                          "--name", pod)
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
        self.assertIn("backend: vm (%s/?nocache=1)" % PROXY.url, result.stdout)
        self.assertIn('"value": "%s"' % expected_duty_cycles()[pod], result.stdout)
        result = run_tool("check-config", CONFIG_PATH, "--prometheus-url", PROMETHEUS.url)
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
        self.assertIn("backends: default (%s), vm (%s/?nocache=1)" % (PROMETHEUS.url, PROXY.url),
                      result.stdout)
        self.assertIn("rules[1] (backend vm, seriesQuery {uuid!=\"\"})", result.stdout)
        self.assertIn("rules[0] (seriesQuery {uuid!=\"\"})", result.stdout)

    def test_z_a_backend_that_goes_down_fails_only_its_rules_and_reload_moves_it(self):
        PROXY.stop()
        stopped = time.time()
        status, body = ADAPTER.get_json(pods_request("duty_cycle_from_vm"))
        self.assertEqual(503, status, body)
        self.assertIn('unable to fetch metric duty_cycle_from_vm on pods from backend "vm"',
                      body["message"])
        status, body = ADAPTER.get_json(pods_request("duty_cycle_current"))
        self.assertEqual(200, status, body)
        self.assertEqual(expected_duty_cycles(), values_by_pod(body))
        # The default backend keeps its relist schedule; the vm backend's relists fail.
        last = "metrics_adapter_backend_last_successful_relist_timestamp_seconds"
        harness.wait_until(lambda: (self_metric(last, "default") or 0) > stopped + 1
                           # both seriesQueries of its rules
                           and self_metric("metrics_adapter_relist_failed_queries", "vm") == 2,
                           timeout=20, what="default relisted and vm failing")
        self.assertLess(self_metric(last, "vm"), stopped)
        self.assertIn("pods/duty_cycle_from_vm", metric_names(), "discovery keeps the last good")
        self.assertEqual(200, ADAPTER.get("/readyz")[0])

        # A reload that points the backend straight at VictoriaMetrics serves it again.
        write_config(VICTORIA.adapter_url())
        os.kill(ADAPTER.process.pid, signal.SIGHUP)
        harness.wait_until(lambda: ADAPTER.get_json(pods_request("duty_cycle_from_vm"))[0] == 200,
                           timeout=20, what="the vm backend at its new URL")
        status, body = ADAPTER.get_json(pods_request("duty_cycle_from_vm"))
        self.assertEqual(expected_duty_cycles(), values_by_pod(body))
        harness.wait_until(lambda: self_metric("metrics_adapter_relist_failed_queries", "vm") == 0,
                           timeout=20, what="vm relisted at its new URL")


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
