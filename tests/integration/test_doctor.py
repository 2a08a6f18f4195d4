"""`metrics-adapter doctor` (and `kubectl metrics-adapter doctor`, the kubectl plugin form) against
a real Prometheus scraping the simulated GPU exporter and the fake Kubernetes API holding HPAs,
Deployments with a scale subresource, pods, a Service and APIServices. One HPA per failure of
docs/troubleshooting.md plus healthy ones of each metric type; the replicas the doctor computes
are compared with the HPA algorithm run here on the values the exporter serves."""

import json
import math
import os
import subprocess
import sys
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
PROCS = None
EXPORTER = None
SCRAPED = None
PROMETHEUS = None
KUBE = None
CONFIG = None
TOLERANCE = 0.1

# The adapter's rules for the test: duty cycle per pod (and namespace), the pod count of a
# Deployment from kube-state-metrics' kube_pod_labels, and the duty cycle as an external metric.
RULES = """rules:
- seriesQuery: 'nvidia_gpu_duty_cycle{pod_name!=""}'
  resources:
    overrides:
      pod_name: {resource: pod}
      namespace_name: {resource: namespace}
  name: {matches: "^nvidia_gpu_(.*)$", as: "${1}_current"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
- seriesQuery: 'kube_pod_labels{label_app!=""}'
  resources:
    overrides:
      label_app: {group: apps, resource: deployment}
      namespace: {resource: namespace}
  name: {matches: "^kube_pod_labels$", as: "pod_count"}
  metricsQuery: count(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
externalRules:
- seriesQuery: 'nvidia_gpu_duty_cycle{pod_name!=""}'
  resources:
    overrides:
      namespace_name: {resource: namespace}
  name: {matches: "^nvidia_gpu_duty_cycle$", as: "gpu_duty_cycle"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (pod_name)
"""

# metrics.k8s.io from resourceRules. The stand-in kubelet serves CPU usage as a gauge of cores
# (the rate cAdvisor's counter would give) so the usage is exact from the first scrape, and the
# replicas can be computed here from the fixture without rate()'s extrapolation.
def resource_rule(container_series, node_series):
    """One resourceRules entry whose queries sum a gauge per pod and container, and per node."""
    return """    containerQuery: sum by (<<.GroupBy>>) (%s{<<.LabelMatchers>>,container!=""})
    nodeQuery: sum by (<<.GroupBy>>) (%s{<<.LabelMatchers>>})
    resources:
      overrides:
        namespace: {resource: namespace}
        pod: {resource: pod}
        node: {resource: node}
    containerLabel: container
""" % (container_series, node_series)


RESOURCE_RULES = ("resourceRules:\n  cpu:\n"
                  + resource_rule("container_cpu_usage_cores", "node_cpu_usage_cores")
                  + "  memory:\n"
                  + resource_rule("container_memory_working_set_bytes", "node_memory_used_bytes")
                  + "  window: 1m\n")

# External metrics served from forecasts (forecast.metrics-adapter.io). Prometheus holds seconds of
# history, so each series is served its latest value (docs/forecasting.md); the step is the
# shortest the 48 h history allows, so the last grid point falls within what was scraped.
FORECAST_RULES = """forecastRules:
- name: bert_duty_forecast
  query: sum(nvidia_gpu_duty_cycle{namespace_name="default",pod_name=~"bert-intent-detection-.*"})
  namespaces: [default]
  history: 48h
  step: 2s
  horizon: 10s
- name: resnet_duty_forecast
  query: sum(nvidia_gpu_duty_cycle{namespace_name="ml-team"})
  namespaces: [ml-team]
  history: 48h
  step: 2s
  horizon: 10s
"""

# pod -> {container: (cores used, memory bytes, cpu request or None)}: Deployment api (an app
# container and a sidecar, both with requests) and batch (its worker without a cpu request).
RESOURCE_PODS = {
    "api-7d4b9c8f6-aaaaa": {"app": (0.3, 200 * 2**20, "250m"), "sidecar": (0.02, 30 * 2**20, "50m")},
    "api-7d4b9c8f6-bbbbb": {"app": (0.45, 220 * 2**20, "250m"), "sidecar": (0.03, 30 * 2**20, "50m")},
    "api-7d4b9c8f6-ccccc": {"app": (0.15, 180 * 2**20, "250m"), "sidecar": (0.01, 30 * 2**20, "50m")},
    "batch-5c6d7e8f9-aaaaa": {"worker": (0.5, 2**30, None)},
}


def kubelet_text():
    """The stand-in kubelet's series for RESOURCE_PODS (namespace default)."""
    lines = []
    for pod, containers in sorted(RESOURCE_PODS.items()):
        for container, (cores, memory, _) in sorted(containers.items()):
            labels = 'container="%s",namespace="default",pod="%s"' % (container, pod)
            lines.append("container_cpu_usage_cores{%s} %r\n" % (labels, cores))
            lines.append("container_memory_working_set_bytes{%s} %r\n" % (labels, float(memory)))
    return "".join(lines)


def resource_pod(name, containers):
    spec = [{"name": c, "resources": {"requests": {"cpu": request}} if request else {}}
            for c, (_, _, request) in sorted(containers.items())]
    return {"name": name, "namespace": "default", "labels": {"app": name.rsplit("-", 2)[0]},
            "ready": True, "spec": {"containers": spec}}


def resource_metric(name, percent, container=None):
    if container:
        return {"type": "ContainerResource", "containerResource": {
            "name": name, "container": container,
            "target": {"type": "Utilization", "averageUtilization": percent}}}
    return {"type": "Resource", "resource": {
        "name": name, "target": {"type": "Utilization", "averageUtilization": percent}}}


HPA_RESOURCE = ["autoscaling", "v2", "horizontalpodautoscalers", "horizontalpodautoscaler",
                "HorizontalPodAutoscaler", True]
APISERVICE_RESOURCE = ["apiregistration.k8s.io", "v1", "apiservices", "apiservice", "APIService",
                       False]
NEW_POD = "llm-batch-6f7d8c9b5-newpd"  # a pod no GPU series names
WEB_PODS = ["web-5d9c7b6f4-aaaaa", "web-5d9c7b6f4-bbbbb"]  # the exporter knows no "web" pods


def apiservice(name, available=True, reason="Passed", message="all checks passed"):
    return {"name": name, "spec": {"group": name.split(".", 1)[1]},
            "status": {"conditions": [{"type": "Available",
                                       "status": "True" if available else "False",
                                       "reason": reason, "message": message}]}}


def deployment(name, replicas):
    return {"name": name, "namespace": "default", "labels": {"app": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}},
            "status": {"replicas": replicas}}


def pods_metric(name, average):
    return {"type": "Pods", "pods": {"metric": {"name": name},
                                      "target": {"type": "AverageValue", "averageValue": average}}}


def hpa(name, target, metrics, status=None, behavior=None):
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1, "maxReplicas": 10, "metrics": metrics}
    if behavior:
        spec["behavior"] = behavior
    return {"name": name, "namespace": "default", "spec": spec,
            "status": status or {"currentReplicas": 3, "desiredReplicas": 3, "conditions": [
                {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                 "message": "the HPA was able to successfully calculate a replica count"}]}}


HPAS = [
    hpa("bert-gpu", "bert-intent-detection", [pods_metric("duty_cycle_current", "40")]),
    hpa("bert-gpu-and-cpu", "bert-intent-detection", [
        pods_metric("duty_cycle_current", "40"),
        {"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
    hpa("bert-typo", "bert-intent-detection", [pods_metric("duty_cycle_curent", "40")], {
        "currentReplicas": 3, "desiredReplicas": 3, "conditions": [
            {"type": "ScalingActive", "status": "False", "reason": "FailedGetPodsMetric",
             "message": "the HPA was unable to compute the replica count: unable to get metric "
                        "duty_cycle_curent: the server could not find the metric "
                        "duty_cycle_curent for pods"}]}),
    hpa("web-gpu", "web", [pods_metric("duty_cycle_current", "40")]),
    hpa("llm-batch", "llm-batch", [pods_metric("duty_cycle_current", "40")]),
    hpa("resnet-wrong-namespace", "resnet-serving", [pods_metric("duty_cycle_current", "40")]),
    hpa("bert-service", "bert-intent-detection", [{
        "type": "Object", "object": {
            "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "bert-svc"},
            "metric": {"name": "duty_cycle_current"},
            "target": {"type": "Value", "value": "50"}}}]),
    hpa("bert-pod-count", "bert-intent-detection", [{
        "type": "Object", "object": {
            "describedObject": {"apiVersion": "apps/v1", "kind": "Deployment",
                                "name": "bert-intent-detection"},
            "metric": {"name": "pod_count"},
            "target": {"type": "Value", "value": "2"}}}]),
    hpa("gpu-external", "bert-intent-detection", [{
        "type": "External", "external": {
            "metric": {"name": "gpu_duty_cycle",
                       "selector": {"matchLabels": {"node_name": "gpu-node-1"}}},
            "target": {"type": "Value", "value": "100"}}}]),
    hpa("bert-forecast", "bert-intent-detection", [{
        "type": "External", "external": {"metric": {"name": "bert_duty_forecast"},
                                         "target": {"type": "Value", "value": "100"}}}]),
    hpa("resnet-forecast-elsewhere", "bert-intent-detection", [{
        "type": "External", "external": {"metric": {"name": "resnet_duty_forecast"},
                                         "target": {"type": "Value", "value": "100"}}}]),
    hpa("api-cpu", "api", [resource_metric("cpu", 80)]),
    hpa("api-app-cpu", "api", [resource_metric("cpu", 70, container="app")]),
    hpa("batch-cpu", "batch", [resource_metric("cpu", 80)]),
    hpa("api-cpu-settling", "api", [resource_metric("cpu", 200)],
        behavior={"scaleDown": {"stabilizationWindowSeconds": 120}}),
    hpa("gpu-external-none", "bert-intent-detection", [{
        "type": "External", "external": {
            "metric": {"name": "gpu_duty_cycle",
                       "selector": {"matchLabels": {"node_name": "gpu-node-9"}}},
            "target": {"type": "Value", "value": "100"}}}]),
]


HPA_CONTROLLER = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
CONFIGMAP_RESOURCE = ["", "v1", "configmaps", "configmap", "ConfigMap", True]


def adapter_deployment():
    """The kit's Deployment (deploy/base/deployment.yaml's shape): rules from a ConfigMap
    mounted as a directory, Prometheus from --prometheus-url."""
    return {"name": "metrics-adapter", "namespace": "custom-metrics", "labels": {}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": "metrics-adapter"}},
        "template": {"spec": {
            "containers": [{"name": "metrics-adapter", "args": [
                "--prometheus-url=" + PROMETHEUS.url, "--config=/etc/metrics-adapter/config.yaml"],
                "volumeMounts": [{"name": "config", "mountPath": "/etc/metrics-adapter"}]}],
            "volumes": [{"name": "config",
                         "configMap": {"name": "metrics-adapter-config"}}]}}}}


def objects(custom_available=True, hpa_controller_allowed=True):
    """The fake API's objects: the exporter's pods of `default` (label app = their Deployment,
    ready), pods no series names, their Deployments, a Service, the HPAs, the APIServices, and
    the RBAC that lets the HPA controller read the metrics APIs."""
    pods = [{"name": labels["pod_name"], "namespace": "default",
             "labels": {"app": labels["pod_name"].rsplit("-", 2)[0]}, "ready": True}
            for labels in gpu_pod_labels() if labels["namespace_name"] == "default"]
    pods += [{"name": name, "namespace": "default", "labels": {"app": name.rsplit("-", 2)[0]},
              "ready": True} for name in WEB_PODS + [NEW_POD] + other_namespace_pods()]
    pods += [resource_pod(name, containers) for name, containers in sorted(RESOURCE_PODS.items())]
    apps = sorted({p["labels"]["app"] for p in pods})
    return {
        "extra_resources": [HPA_RESOURCE, APISERVICE_RESOURCE, CONFIGMAP_RESOURCE],
        "configmaps": [{"name": "metrics-adapter-config", "namespace": "custom-metrics",
                        "data": {"config.yaml": RULES}}],
        "auth": {"allow": [{"user": HPA_CONTROLLER}] if hpa_controller_allowed else []},
        "pods": pods,
        "deployments.apps": [deployment(app, sum(1 for p in pods if p["labels"]["app"] == app))
                             for app in apps] + [adapter_deployment()],
        "services": [{"name": "bert-svc", "namespace": "default", "labels": {}}],
        "horizontalpodautoscalers.autoscaling": HPAS,
        "apiservices.apiregistration.k8s.io": [
            apiservice("v1beta1.custom.metrics.k8s.io"),
            apiservice("v1beta2.custom.metrics.k8s.io", custom_available, "MissingEndpoints",
                       'endpoints for service/metrics-adapter in "custom-metrics" have no '
                       'addresses with port name "https"'),
            apiservice("v1beta1.external.metrics.k8s.io"),
            dict(apiservice("v1beta1.metrics.k8s.io"),
                 spec={"group": "metrics.k8s.io",
                       "service": {"namespace": "kube-system", "name": "metrics-server"}})],
    }


def other_namespace_pods():
    """The exporter's pods outside `default`, which the fixture runs in `default`: their series
    name another namespace, as dcgm-exporter's do when scraped without honorLabels."""
    return sorted(labels["pod_name"] for labels in gpu_pod_labels()
                  if labels["namespace_name"] != "default")


def gpu_pod_labels():
    return [labels for name, labels, _ in EXPORTER.samples()
            if name == "nvidia_gpu_duty_cycle" and labels.get("pod_name")]


def setUpModule():
    global PROCS, EXPORTER, SCRAPED, PROMETHEUS, KUBE, CONFIG, CONFIG_WITHOUT_RESOURCE
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        # One scrape target: the GPU exporter's series and the stand-in kubelet's.
        SCRAPED = harness.FunctionExporter(lambda: EXPORTER.metrics_text() + kubelet_text())
        PROMETHEUS = harness.Prometheus(PROCS, SCRAPED.port)
        PROMETHEUS.wait_for_series("nvidia_gpu_duty_cycle", len(gpu_pod_labels()))
        PROMETHEUS.wait_for_series("kube_pod_labels", len(gpu_pod_labels()))
        PROMETHEUS.wait_for_series("container_cpu_usage_cores",
                                   sum(len(c) for c in RESOURCE_PODS.values()))
        KUBE = harness.FakeKube(PROCS, objects())
        CONFIG = os.path.join(PROCS.workdir, "doctor-rules.yaml")
        with open(CONFIG, "w") as f:
            f.write(RULES + RESOURCE_RULES + FORECAST_RULES)
        CONFIG_WITHOUT_RESOURCE = os.path.join(PROCS.workdir, "doctor-rules-no-resource.yaml")
        with open(CONFIG_WITHOUT_RESOURCE, "w") as f:
            f.write(RULES)
    except Exception:
        tearDownModule()
        raise


def tearDownModule():
    if SCRAPED:
        SCRAPED.stop()
    PROCS.stop_all()


def doctor(*args, kube=None, program=None, env_extra=None, rules=True, config=None):
    """Runs the doctor; `rules`: with --config (`config`, else the rules with resourceRules) and
    --prometheus-url (else the adapter Deployment's ConfigMap and URL)."""
    env = dict(os.environ, KUBECONFIG=(kube or KUBE).kubeconfig, **(env_extra or {}))
    argv = (program or [ARGS.binary, "doctor"]) + list(args) + (
        ["--config", config or CONFIG, "--prometheus-url", PROMETHEUS.url] if rules else [])
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)


def doctor_json(*args, **kwargs):
    result = doctor(*args, "-o", "json", **kwargs)
    return result, json.loads(result.stdout) if result.stdout.strip() else None


# The HPA controller's algorithm (pkg/controller/podautoscaler/replica_calculator.go), written
# again here so the test does not trust the doctor's own: milli-values, integer averages.
def milli(value):
    return int(value * 1000)


def plain_metric_replicas(current, target, values, pods):
    """calcPlainMetricReplicas for ready Running pods: values {pod: milli}, pods [names]."""
    metrics = dict(values)
    missing = [p for p in pods if p not in metrics]
    ready = len(pods) - len(missing)
    if not metrics:
        return None
    usage = sum(metrics.values()) // len(metrics)
    ratio = usage / target
    if not missing:
        return current if abs(1 - ratio) <= TOLERANCE else math.ceil(ratio * ready)
    for pod in missing:
        metrics[pod] = target if ratio < 1 else 0
    new_ratio = (sum(metrics.values()) // len(metrics)) / target
    if abs(1 - new_ratio) <= TOLERANCE or (ratio < 1 < new_ratio) or (new_ratio < 1 < ratio):
        return current
    replicas = math.ceil(new_ratio * len(metrics))
    if (new_ratio < 1 and replicas > current) or (new_ratio > 1 and replicas < current):
        return current
    return replicas


def value_replicas(current, usage, target, ready):
    ratio = usage / target
    return current if abs(1 - ratio) <= TOLERANCE else math.ceil(ratio * ready)


def milli_cpu(quantity):
    """A cpu request ("250m", "1") in milli-cores."""
    return int(quantity[:-1]) if quantity.endswith("m") else int(float(quantity) * 1000)


def clamp(replicas, low=1, high=10):
    return max(low, min(high, replicas))


def duty_by_pod(app):
    """{pod: milli duty cycle} of the exporter's pods of Deployment `app` in default."""
    values = {}
    for name, labels, value in EXPORTER.samples():
        if (name == "nvidia_gpu_duty_cycle" and labels.get("namespace_name") == "default"
                and labels.get("pod_name", "").rsplit("-", 2)[0] == app):
            values[labels["pod_name"]] = values.get(labels["pod_name"], 0) + milli(value)
    return values


def wait_for_forecast_history():
    """Until Prometheus holds samples older than the forecast's read delay (15 s): a forecast
    reads its history only up to then."""
    harness.wait_until(lambda: PROMETHEUS.query("count(nvidia_gpu_duty_cycle offset 20s)"),
                       timeout=60, what="20 s of history for the forecast rules")


def hpa_report(report, name):
    return next(h for h in report["hpas"] if h["name"] == name)


class DoctorTest(unittest.TestCase):
    def checked(self, name, exit_code, **kwargs):
        """The JSON report of `doctor hpa NAME`, after checking its exit code."""
        result, report = doctor_json("hpa", name, **kwargs)
        self.assertEqual(result.returncode, exit_code, result.stdout + result.stderr)
        return hpa_report(report, name)

    def test_healthy_pods_metric_values_and_replicas(self):
        result, report = doctor_json("hpa", "bert-gpu", "-n", "default")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        entry = hpa_report(report, "bert-gpu")
        values = duty_by_pod("bert-intent-detection")
        metric = entry["metrics"][0]
        self.assertTrue(metric["hasValue"])
        self.assertEqual({p["name"]: p["valueMilli"] for p in metric["pods"]}, values)
        self.assertIn("labelSelector=app=bert-intent-detection", metric["request"])
        self.assertIn("rules[0]", metric["rule"])
        expected = clamp(plain_metric_replicas(3, 40000, values, list(values)))
        self.assertEqual(entry["computedReplicas"], expected)
        self.assertEqual(entry["status"]["desiredReplicas"], 3)

    def test_rules_and_prometheus_from_the_adapter_deployment(self):
        result, report = doctor_json("hpa", "bert-gpu", rules=False)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("the adapter's rules from configmap custom-metrics/metrics-adapter-config, "
                      "key config.yaml", result.stderr)
        values = duty_by_pod("bert-intent-detection")
        self.assertEqual(hpa_report(report, "bert-gpu")["computedReplicas"],
                         clamp(plain_metric_replicas(3, 40000, values, list(values))))
        missing = doctor("hpa", "bert-gpu", "--adapter", "custom-metrics/absent", rules=False)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("absent", missing.stderr)

    def test_resource_metrics_served_by_another_apiservice_are_unchecked_and_left_out(self):
        entry = self.checked("bert-gpu-and-cpu", 0, config=CONFIG_WITHOUT_RESOURCE)
        self.assertEqual([m["checked"] for m in entry["metrics"]], [True, False])
        self.assertIn("not served by this adapter (its config has no resourceRules)",
                      entry["metrics"][1]["cause"])
        self.assertIn("service kube-system/metrics-server", entry["metrics"][1]["cause"])
        values = duty_by_pod("bert-intent-detection")
        self.assertEqual(entry["computedReplicas"],
                         clamp(plain_metric_replicas(3, 40000, values, list(values))))
        text = doctor("hpa", "bert-gpu-and-cpu", config=CONFIG_WITHOUT_RESOURCE).stdout
        self.assertIn("(without the Resource metric cpu)", text)
        self.assertIn("ok: every metric checked has a value (not checked: Resource cpu", text)

    def assertUtilizationReplicas(self, entry, container, target):
        """The doctor's per-pod usage and replicas equal the controller's algorithm run here on
        RESOURCE_PODS: each container's served usage as a MilliValue (nanocores rounded up),
        summed per pod, over the summed requests, in whole percent."""
        pods = {p: c for p, c in RESOURCE_PODS.items() if p.startswith("api-")}
        usage, requests = {}, {}
        for pod, containers in pods.items():
            chosen = {n: c for n, c in containers.items() if container in (None, n)}
            usage[pod] = sum(-(-int(cores * 1e9) // 10**6) for cores, _, _ in chosen.values())
            requests[pod] = sum(milli_cpu(request) for _, _, request in chosen.values())
        metric = entry["metrics"][0]
        self.assertTrue(metric["hasValue"], metric)
        self.assertEqual({p["name"]: p["valueMilli"] for p in metric["pods"]}, usage)
        utilization = sum(usage.values()) * 100 // sum(requests.values())
        self.assertEqual(metric["replicas"]["utilization"], utilization)
        ratio = utilization / target
        expected = len(pods) if abs(1 - ratio) <= TOLERANCE else math.ceil(ratio * len(pods))
        self.assertEqual(entry["computedReplicas"], clamp(expected))
        self.assertIn("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app=api",
                      metric["request"])

    def test_healthy_resource_cpu_utilization(self):
        entry = self.checked("api-cpu", 0)
        self.assertUtilizationReplicas(entry, None, 80)
        self.assertIn("resourceRules.cpu", entry["metrics"][0]["rule"])
        self.assertIn("container_cpu_usage_cores{", entry["metrics"][0]["promql"])

    def test_healthy_container_resource_counts_only_its_container(self):
        entry = self.checked("api-app-cpu", 0)
        self.assertEqual(entry["metrics"][0]["container"], "app")
        self.assertUtilizationReplicas(entry, "app", 70)

    def test_scale_down_stabilization_explains_a_higher_desired_count(self):
        # The utilization is far below the 200 % target: the count computed now is below the
        # status's 3, which the scale-down window (120 s here) holds.
        entry = self.checked("api-cpu-settling", 0)
        self.assertLess(entry["computedReplicas"], entry["status"]["desiredReplicas"])
        self.assertIn("stabilizationWindowSeconds: 120 s", entry["behaviorNote"])
        text = doctor("hpa", "api-cpu-settling").stdout
        self.assertIn("\nbehavior: the HPA scales down only to the highest count", text)

    def test_pod_without_a_cpu_request(self):
        entry = self.checked("batch-cpu", 1)
        pod = next(p for p in RESOURCE_PODS if p.startswith("batch-"))
        self.assertIn("missing request for cpu in container worker of Pod %s" % pod,
                      entry["cause"])
        self.assertIsNone(entry["computedReplicas"])
        self.assertIn("resources.requests.cpu", entry["metrics"][0]["fix"])

    def test_text_output_leads_with_the_outcome(self):
        result = doctor("hpa", "bert-gpu")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("HPA default/bert-gpu -> Deployment/"), lines[0])
        self.assertEqual(lines[1], "ok: every metric has a value")
        self.assertIn("PromQL: sum(nvidia_gpu_duty_cycle{", result.stdout)

    def test_missing_pod_counts_as_idle_on_a_scale_up(self):
        entry = self.checked("llm-batch", 0)
        values = duty_by_pod("llm-batch")
        pods = sorted(list(values) + [NEW_POD])
        metric = entry["metrics"][0]
        self.assertEqual(metric["replicas"]["missingPods"], [NEW_POD])
        no_value = [p for p in metric["pods"] if p["valueMilli"] is None]
        self.assertEqual([p["name"] for p in no_value], [NEW_POD])
        self.assertIn('pod_name="%s"' % NEW_POD, no_value[0]["whyNoValue"])
        self.assertEqual(entry["computedReplicas"],
                         clamp(plain_metric_replicas(len(pods), 40000, values, pods)))

    def test_wrong_metric_name(self):
        entry = self.checked("bert-typo", 1)
        self.assertIsNone(entry["computedReplicas"])
        self.assertIn("no rule serves duty_cycle_curent for pods", entry["cause"])
        self.assertIn("closest metric names: duty_cycle_current", entry["cause"])
        self.assertEqual(entry["status"]["conditions"][0]["reason"], "FailedGetPodsMetric")

    def test_pods_the_exporter_does_not_label(self):
        entry = self.checked("web-gpu", 1)
        self.assertIn("none of the %d pods of \"app=web\" has a value" % len(WEB_PODS),
                      entry["cause"])
        metric = entry["metrics"][0]
        self.assertEqual(sorted(p["name"] for p in metric["pods"]), WEB_PODS)
        for pod in metric["pods"]:
            self.assertIn('no series with pod_name="%s"' % pod["name"], pod["whyNoValue"])
        self.assertEqual(metric["replicas"]["error"], "did not receive metrics for any ready pods")
        # What the HPA itself reads: the server's 404 names the cause too.
        self.assertIn('404 NotFound: the server could not find the metric duty_cycle_current for '
                      'pods: none of the %d pods matching "app=web" has a value: '
                      % len(WEB_PODS), metric["answer"])

    def test_series_under_another_namespace(self):
        entry = self.checked("resnet-wrong-namespace", 1)
        elsewhere = {labels["pod_name"]: labels["namespace_name"] for labels in gpu_pod_labels()
                     if labels["namespace_name"] != "default"}
        pods = entry["metrics"][0]["pods"]
        self.assertEqual(sorted(p["name"] for p in pods), sorted(elsewhere))
        for pod in pods:
            self.assertIn("only under another namespace (%s) than the HPA's default"
                          % elsewhere[pod["name"]], pod["whyNoValue"])
        self.assertIn("another namespace", entry["cause"])

    def test_object_metric_on_a_service_no_rule_covers(self):
        entry = self.checked("bert-service", 1)
        self.assertIn("no rule serves duty_cycle_current for services", entry["cause"])
        self.assertIn("the metric exists, but not for services", entry["cause"])
        self.assertIn("/namespaces/default/services/bert-svc/duty_cycle_current",
                      entry["metrics"][0]["request"])

    def test_healthy_object_metric(self):
        entry = self.checked("bert-pod-count", 0)
        count = len(duty_by_pod("bert-intent-detection"))  # kube_pod_labels: one per GPU pod
        metric = entry["metrics"][0]
        self.assertEqual(metric["values"][0]["valueMilli"], count * 1000)
        self.assertEqual(entry["computedReplicas"],
                         clamp(value_replicas(3, count * 1000, 2000, count)))

    def test_healthy_external_metric(self):
        entry = self.checked("gpu-external", 0)
        usage = sum(milli(value) for name, labels, value in EXPORTER.samples()
                    if name == "nvidia_gpu_duty_cycle" and labels.get("pod_name")
                    and labels.get("namespace_name") == "default"
                    and labels.get("node_name") == "gpu-node-1")
        metric = entry["metrics"][0]
        self.assertEqual(sum(v["valueMilli"] for v in metric["values"]), usage)
        self.assertIn("labelSelector=node_name=gpu-node-1", metric["request"])
        ready = len(duty_by_pod("bert-intent-detection"))
        self.assertEqual(entry["computedReplicas"], clamp(value_replicas(3, usage, 100000, ready)))

    def test_external_metric_served_by_a_forecast_rule(self):
        wait_for_forecast_history()
        entry = self.checked("bert-forecast", 0)
        metric = entry["metrics"][0]
        self.assertIn("forecastRules bert_duty_forecast serves it", metric["rule"])
        # Seconds of history: the forecast is the latest value of the rule's query.
        usage = sum(duty_by_pod("bert-intent-detection").values())
        self.assertEqual(sum(v["valueMilli"] for v in metric["values"]), usage)
        ready = len(duty_by_pod("bert-intent-detection"))
        self.assertEqual(entry["computedReplicas"], clamp(value_replicas(3, usage, 100000, ready)))

    def test_forecast_not_served_in_the_hpas_namespace(self):
        entry = self.checked("resnet-forecast-elsewhere", 1)
        self.assertIn("the forecast resnet_duty_forecast is not served in namespace default",
                      entry["cause"])
        self.assertTrue(entry["metrics"][0]["answer"].startswith("404 NotFound"))

    def test_external_selector_that_matches_nothing(self):
        entry = self.checked("gpu-external-none", 1)
        self.assertIn('no series of gpu_duty_cycle matches the selector "node_name=gpu-node-9"',
                      entry["cause"])

    def test_apiservice_not_available_comes_first(self):
        kube = harness.FakeKube(PROCS, objects(custom_available=False))
        entry = self.checked("bert-gpu", 1, kube=kube)
        self.assertTrue(entry["cause"].startswith(
            "APIService v1beta2.custom.metrics.k8s.io is not Available (MissingEndpoints"),
            entry["cause"])
        self.assertIn("no adapter pod is ready", entry["cause"])
        # The values are still followed: the adapter itself would answer.
        self.assertTrue(entry["metrics"][0]["hasValue"])

    def test_hpa_controller_without_rbac(self):
        kube = harness.FakeKube(PROCS, objects(hpa_controller_allowed=False))
        entry = self.checked("gpu-external", 1, kube=kube)
        self.assertTrue(entry["cause"].startswith(
            'the HPA controller may not read the metric: %s cannot list resource '
            '"gpu_duty_cycle" in API group "external.metrics.k8s.io"' % HPA_CONTROLLER),
            entry["cause"])
        self.assertIn("metrics-adapter-metrics-reader", entry["cause"])
        self.assertEqual(len(entry["forbidden"]), 1)
        text = doctor("hpa", "gpu-external", kube=kube).stdout
        self.assertIn("\nforbidden: %s cannot list" % HPA_CONTROLLER, text)
        # What the review asked is what authorization sees of the HPA's request.
        review = kube.access_reviews()[-1]
        self.assertEqual(review["user"], HPA_CONTROLLER)
        self.assertEqual(review["resourceAttributes"]["namespace"], "default")

    def test_file_form_checks_an_hpa_not_yet_applied(self):
        spec = dict(HPAS[0], name="bert-new")
        document = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                    "metadata": {"name": "bert-new"}, "spec": spec["spec"]}
        path = os.path.join(PROCS.workdir, "hpa.json")
        with open(path, "w") as f:
            json.dump(document, f)
        result, report = doctor_json("-f", path)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        values = duty_by_pod("bert-intent-detection")
        entry = hpa_report(report, "bert-new")
        self.assertEqual(entry["computedReplicas"],
                         clamp(plain_metric_replicas(3, 40000, values, list(values))))
        self.assertIsNone(entry["status"]["desiredReplicas"])

    def test_all_namespaces_lists_every_hpa_and_fails_if_one_does(self):
        wait_for_forecast_history()
        result, report = doctor_json("hpa", "--all-namespaces")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(sorted(h["name"] for h in report["hpas"]),
                         sorted(h["name"] for h in HPAS))
        # bert-gpu-and-cpu: these rules serve metrics.k8s.io, and no kubelet series names the
        # bert pods.
        healthy = {"bert-gpu", "llm-batch", "bert-pod-count", "gpu-external", "api-cpu",
                   "api-app-cpu", "api-cpu-settling", "bert-forecast"}
        self.assertEqual({h["name"] for h in report["hpas"] if h["ok"]}, healthy)

    def test_kubectl_plugin_form(self):
        kubectl = harness.modern_tool("kubectl")
        plugins = os.path.join(PROCS.workdir, "plugins")
        os.makedirs(plugins, exist_ok=True)
        link = os.path.join(plugins, "kubectl-metrics_adapter")
        if not os.path.exists(link):
            os.symlink(os.path.abspath(ARGS.binary), link)
        path = plugins + os.pathsep + os.environ.get("PATH", "")
        result, report = doctor_json("doctor", "hpa", "bert-gpu", "-n", "default",
                                     program=[kubectl, "metrics-adapter"],
                                     env_extra={"PATH": path})
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        values = duty_by_pod("bert-intent-detection")
        self.assertEqual(hpa_report(report, "bert-gpu")["computedReplicas"],
                         clamp(plain_metric_replicas(3, 40000, values, list(values))))
        failing = doctor("doctor", "hpa", "web-gpu", program=[kubectl, "metrics-adapter"],
                         env_extra={"PATH": path})
        self.assertEqual(failing.returncode, 1, failing.stderr)
        self.assertTrue(failing.stdout.splitlines()[1].startswith("cause: spec.metrics[0]"))


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
