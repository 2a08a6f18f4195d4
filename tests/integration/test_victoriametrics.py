"""VictoriaMetrics as the metrics engine: a Prometheus and a single-node VictoriaMetrics both
scrape the simulated GPU exporter, and two adapters with the same rules ask one each. Every
answer of either adapter is checked against values computed from what the exporter serves; the
places where the engines differ (docs/victoriametrics.md) are checked as such."""

import json
import math
import os
import time
import unittest
import urllib.parse

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG_DIR = os.path.join(harness.REPO, "config")
HPA_ACCEPT = {"Accept": "application/vnd.kubernetes.protobuf, */*"}
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta1"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
BERT = "bert-intent-detection"

# gpu_utilization_by_nodepool as in config/gpu-external-rules.yaml (a join, no recording rule:
# VictoriaMetrics evaluates none without vmalert), a namespaced per-pod maximum, and a peak over
# a minute, after which Prometheus drops __name__ and VictoriaMetrics keeps it.
EXTERNAL_RULES = """externalRules:
- seriesQuery: '{__name__="DCGM_FI_DEV_GPU_UTIL"}'
  resources:
    namespaced: false
  name:
    matches: ^DCGM_FI_DEV_GPU_UTIL$
    as: gpu_utilization_by_nodepool
  metricsQuery: >-
    avg by (label_nodepool) (
      label_replace(<<.Series>>, "node", "$1", "Hostname", "(.+)")
      * on (node) group_left (label_nodepool)
      max by (node, label_nodepool) (kube_node_labels{<<.LabelMatchers>>})
    )
- seriesQuery: 'DCGM_FI_DEV_GPU_UTIL{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
  name:
    matches: ^DCGM_FI_DEV_GPU_UTIL$
    as: pod_gpu_utilization_max
  metricsQuery: max by (namespace, pod) (<<.Series>>{<<.LabelMatchers>>})
- seriesQuery: 'DCGM_FI_DEV_GPU_UTIL{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
  name:
    matches: ^DCGM_FI_DEV_GPU_UTIL$
    as: gpu_utilization_peak
  metricsQuery: max_over_time(<<.Series>>{<<.LabelMatchers>>}[1m])
"""

# Only VictoriaMetrics holds this series: the latency test imports it.
FRESH_RULES = """externalRules:
- seriesQuery: '{__name__="fresh_gpu_jobs"}'
  resources:
    namespaced: false
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
"""

PROCS = EXPORTER = PROMETHEUS = VICTORIA = KUBE = None
ON_PROMETHEUS = ON_VICTORIA = LAGGING = None
PODS = []


def samples(series):
    return [(labels, value) for name, labels, value in EXPORTER.samples() if name == series]


def cluster_objects():
    """Every pod the exporter reports, labelled app=<its deployment>; the namespaces; the nodes."""
    pods = {}
    for labels, _ in samples("DCGM_FI_DEV_GPU_UTIL"):
        if labels.get("pod"):
            pods[labels["pod"]] = {"name": labels["pod"], "namespace": labels["namespace"],
                                   "labels": {"app": labels["pod"].rsplit("-", 2)[0]}}
    return {"pods": sorted(pods.values(), key=lambda p: p["name"]),
            "namespaces": [{"name": "default"}, {"name": "ml-team"}],
            "nodes": [{"name": "gpu-node-1"}, {"name": "gpu-node-2"}]}


def write_config(name, text):
    path = os.path.join(PROCS.workdir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def setUpModule():
    global PROCS, EXPORTER, PROMETHEUS, VICTORIA, KUBE, ON_PROMETHEUS, ON_VICTORIA, LAGGING, PODS
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        PROMETHEUS = harness.Prometheus(PROCS, EXPORTER.port)
        VICTORIA = harness.VictoriaMetrics(PROCS, EXPORTER.port)
        objects = cluster_objects()
        PODS = objects["pods"]
        KUBE = harness.FakeKube(PROCS, objects)
        for engine in (PROMETHEUS, VICTORIA):
            engine.wait_for_series("DCGM_FI_DEV_GPU_UTIL", len(samples("DCGM_FI_DEV_GPU_UTIL")))
            engine.wait_for_series("nvidia_gpu_duty_cycle", len(samples("nvidia_gpu_duty_cycle")))
            engine.wait_for_series("kube_node_labels", len(samples("kube_node_labels")))
        # The rules of both GPU exporters, then the external rules above.
        with open(os.path.join(CONFIG_DIR, "gpu-alibaba-exporter.yaml")) as f:
            text = f.read()
        with open(os.path.join(CONFIG_DIR, "gpu-dcgm-exporter.yaml")) as f:
            text += f.read().split("\nrules:\n", 1)[1]
        config = write_config("rules.yaml", text + EXTERNAL_RULES)
        lister = ["--lister-kubeconfig=" + KUBE.kubeconfig]
        ON_PROMETHEUS = harness.Adapter(PROCS, ARGS.binary, config, PROMETHEUS.url,
                                        extra_args=lister)
        ON_VICTORIA = harness.Adapter(PROCS, ARGS.binary, config, VICTORIA.adapter_url(),
                                      extra_args=lister)
        # The plain URL: VictoriaMetrics applies its -search.latencyOffset to these queries.
        LAGGING = harness.Adapter(PROCS, ARGS.binary, write_config("fresh.yaml", FRESH_RULES),
                                  VICTORIA.url)
        for adapter in (ON_PROMETHEUS, ON_VICTORIA):
            harness.wait_until(lambda: custom_names(adapter) == expected_custom_names()
                               and external_names(adapter) == expected_external_names(),
                               timeout=30, what="discovery (log: %s)" % adapter.process.log_path)
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


def custom_names(adapter):
    status, body = adapter.get_json(CUSTOM)
    return {r["name"]: r["namespaced"] for r in body["resources"]} if status == 200 else {}


def external_names(adapter):
    status, body = adapter.get_json(EXTERNAL)
    return sorted(r["name"] for r in body["resources"]) if status == 200 else []


def expected_custom_names():
    """What the rules make of the exporter's series: each nvidia_gpu_X as X_current and
    X_over_time; each DCGM series with a pod as itself and as <name>_AVG."""
    scopes = {"pods": True, "namespaces": False, "nodes": False}
    names = {}
    for name, labels, _ in EXPORTER.samples():
        if name.startswith("nvidia_gpu_") and labels.get("uuid"):
            metrics = [name[len("nvidia_gpu_"):] + s for s in ("_current", "_over_time")]
            resources = scopes
        elif name.startswith("DCGM_FI_") and labels.get("pod") and labels.get("namespace"):
            metrics = [name, name + "_AVG"]
            resources = dict(scopes, services=True)
        else:
            continue
        for metric in metrics:
            for resource, namespaced in resources.items():
                names["%s/%s" % (resource, metric)] = namespaced
    return names


def expected_external_names():
    return ["gpu_utilization_by_nodepool", "gpu_utilization_peak", "pod_gpu_utilization_max"]


def mean(values):
    return sum(values) / len(values)


def get_json(adapter, path):
    status, _, text = adapter.get(path, headers=HPA_ACCEPT)
    return status, json.loads(text)


def values_by_name(body):
    return {i["describedObject"]["name"]: i["value"] for i in body["items"]}


class EnginesAgreeTest(unittest.TestCase):
    """Each check runs against both adapters; a failure names the engine."""

    def each_adapter(self):
        for engine, adapter in (("prometheus", ON_PROMETHEUS), ("victoriametrics", ON_VICTORIA)):
            with self.subTest(engine=engine):
                yield engine, adapter

    def test_discovery_lists_the_same_metrics(self):
        for _, adapter in self.each_adapter():
            self.assertEqual(expected_custom_names(), custom_names(adapter))
            self.assertEqual(expected_external_names(), external_names(adapter))

    def test_pods_wildcard_with_a_label_selector(self):
        duty = {labels["pod_name"]: value for labels, value in samples("nvidia_gpu_duty_cycle")
                if labels.get("pod_name")}
        listed = [p["name"] for p in PODS
                  if p["namespace"] == "default" and p["labels"]["app"] == BERT]
        expected = {pod: harness.milli_quantity(duty[pod]) for pod in listed}
        self.assertEqual(3, len(expected))
        for _, adapter in self.each_adapter():
            status, body = get_json(adapter, "%s/namespaces/default/pods/%%2A/duty_cycle_current"
                                    "?labelSelector=app%%3D%s" % (CUSTOM, BERT))
            self.assertEqual(200, status, body)
            self.assertEqual(expected, values_by_name(body))

    def test_one_pod(self):
        labels, value = next((l, v) for l, v in samples("DCGM_FI_DEV_GPU_UTIL")
                             if l.get("namespace") == "ml-team")
        memory = next(v for l, v in samples("nvidia_gpu_memory_used_bytes")
                      if l.get("pod_name") == labels["pod"])
        for _, adapter in self.each_adapter():
            status, body = get_json(adapter, "%s/namespaces/ml-team/pods/%s/DCGM_FI_DEV_GPU_UTIL"
                                    % (CUSTOM, labels["pod"]))
            self.assertEqual(200, status, body)
            self.assertEqual({labels["pod"]: harness.milli_quantity(value)},
                             values_by_name(body))
            # ceil(avg_over_time(x[3m])) of a series that never changes is ceil(x).
            status, body = get_json(adapter, "%s/namespaces/ml-team/pods/%s/"
                                    "memory_used_bytes_over_time" % (CUSTOM, labels["pod"]))
            self.assertEqual(200, status, body)
            self.assertEqual([harness.milli_quantity(math.ceil(memory))],
                             [i["value"] for i in body["items"]])

    def test_namespaces(self):
        groups = {}
        for labels, value in samples("DCGM_FI_DEV_GPU_UTIL"):
            if labels.get("namespace"):
                groups.setdefault(labels["namespace"], []).append(value)
        expected = {ns: harness.milli_quantity(mean(values)) for ns, values in groups.items()}
        self.assertEqual({"default", "ml-team"}, set(expected))
        for _, adapter in self.each_adapter():
            status, body = get_json(adapter,
                                    CUSTOM + "/namespaces/%2A/metrics/DCGM_FI_DEV_GPU_UTIL")
            self.assertEqual(200, status, body)
            self.assertEqual(expected, values_by_name(body))
            status, body = get_json(adapter,
                                    CUSTOM + "/namespaces/default/metrics/DCGM_FI_DEV_GPU_UTIL")
            self.assertEqual((200, {"default": expected["default"]}),
                             (status, values_by_name(body)))

    def test_external_join_by_node_pool(self):
        pools = {l["node"]: l["label_nodepool"] for l, _ in samples("kube_node_labels")}
        groups = {}
        for labels, value in samples("DCGM_FI_DEV_GPU_UTIL"):
            groups.setdefault(pools[labels["Hostname"]], []).append(value)
        expected = {pool: harness.milli_quantity(mean(values)) for pool, values in groups.items()}
        self.assertEqual({"gpu-a", "gpu-b"}, set(expected))
        for _, adapter in self.each_adapter():
            status, body = get_json(adapter, EXTERNAL + "/namespaces/default/"
                                    "gpu_utilization_by_nodepool")
            self.assertEqual(200, status, body)
            self.assertEqual(expected, {i["metricLabels"]["label_nodepool"]: i["value"]
                                        for i in body["items"]})
            status, body = get_json(adapter, EXTERNAL + "/namespaces/default/gpu_utilization_"
                                    "by_nodepool?labelSelector=label_nodepool%3Dgpu-b")
            self.assertEqual(200, status, body)
            self.assertEqual([({"label_nodepool": "gpu-b"}, expected["gpu-b"])],
                             [(i["metricLabels"], i["value"]) for i in body["items"]])

    def test_external_namespaced_with_a_selector(self):
        in_default = {l["pod"]: harness.milli_quantity(v) for l, v in
                      samples("DCGM_FI_DEV_GPU_UTIL") if l.get("namespace") == "default"}
        wanted = sorted(pod for pod in in_default if pod.startswith(BERT))[:2]
        selector = urllib.parse.quote("pod in (%s)" % ",".join(wanted))
        for _, adapter in self.each_adapter():
            status, body = get_json(adapter, EXTERNAL + "/namespaces/default/"
                                    "pod_gpu_utilization_max?labelSelector=" + selector)
            self.assertEqual(200, status, body)
            self.assertEqual({pod: in_default[pod] for pod in wanted},
                             {i["metricLabels"]["pod"]: i["value"] for i in body["items"]})
            for item in body["items"]:
                self.assertEqual({"namespace": "default", "pod": item["metricLabels"]["pod"]},
                                 item["metricLabels"])


class EnginesDifferTest(unittest.TestCase):
    def test_max_over_time_keeps_the_metric_name_only_in_victoriametrics(self):
        expected = {l["pod"]: harness.milli_quantity(v) for l, v in
                    samples("DCGM_FI_DEV_GPU_UTIL") if l.get("namespace") == "ml-team"}
        for adapter, names in ((ON_PROMETHEUS, set()),
                               (ON_VICTORIA, {"DCGM_FI_DEV_GPU_UTIL"})):
            status, body = get_json(adapter, EXTERNAL + "/namespaces/ml-team/gpu_utilization_peak")
            self.assertEqual(200, status, body)
            self.assertEqual(expected, {i["metricLabels"]["pod"]: i["value"]
                                        for i in body["items"]})
            self.assertEqual(names, {i["metricLabels"].get("__name__") for i in body["items"]}
                             - {None})

    def test_latency_offset_hides_the_last_30_seconds_without_nocache(self):
        imported = time.time()
        VICTORIA.import_text('fresh_gpu_jobs{queue="train"} 7 %d\n' % int(imported * 1000))
        # The sample is there: a query with nocache=1 sees it once VictoriaMetrics has indexed it
        # (the external rule names its metric, so discovery no longer waits for that).
        harness.wait_until(
            lambda: [r["value"][1] for r in VICTORIA.query("fresh_gpu_jobs")] == ["7"],
            timeout=15, what="VictoriaMetrics to answer the imported sample")
        harness.wait_until(lambda: external_names(LAGGING) == ["fresh_gpu_jobs"], timeout=15,
                           what="discovery of fresh_gpu_jobs")
        # ... and an instant query without nocache=1 does not, for 30 s.
        status, body = get_json(LAGGING, EXTERNAL + "/namespaces/default/fresh_gpu_jobs")
        age = time.time() - imported
        self.assertLess(age, 25, "too slow to show the 30 s offset")
        self.assertEqual((200, []), (status, body["items"]))


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
