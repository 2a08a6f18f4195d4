"""End to end for external.metrics.k8s.io: the real adapter, a real Prometheus scraping the
simulated exporter and evaluating recording rules this test writes, real TLS. Requests are made
as the HPA makes them (Accept: protobuf then */*, the selector query-escaped). Expected values
are computed from what the exporter serves."""

import json
import os
import subprocess
import unittest
import urllib.parse

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG_DIR = os.path.join(harness.REPO, "config")
HPA_ACCEPT = {"Accept": "application/vnd.kubernetes.protobuf, */*"}
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
TIMESTAMP = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"
BERT = "bert-intent-detection"

# seeds/002's recording rule with the simulator's labels (Hostname for node, BERT for cuda-test),
# and a per-(namespace, app) rule that keeps the namespace label.
RECORDING_RULES = """groups:
- name: gpu-autoscaling
  rules:
  - record: cuda_test_gpu_avg
    expr: >-
      avg(max by (Hostname, pod, namespace) (DCGM_FI_DEV_GPU_UTIL)
      * on (pod) group_left (label_app)
      max by (pod, label_app) (kube_pod_labels{label_app="%s"}))
  - record: namespace_app:gpu_utilization:avg
    expr: >-
      avg by (namespace, label_app) (DCGM_FI_DEV_GPU_UTIL
      * on (namespace, pod) group_left (label_app) kube_pod_labels)
""" % BERT

# A namespaced rule (namespace label from an override) and the same series without a namespace
# mapping, which upstream fails with a bare 500 on every request.
NAMESPACED_RULES = """externalRules:
- seriesQuery: '{__name__="namespace_app:gpu_utilization:avg"}'
  resources:
    overrides:
      namespace: {resource: namespace}
  name:
    matches: ^namespace_app:gpu_utilization:avg$
    as: app_gpu_utilization
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
- seriesQuery: '{__name__="namespace_app:gpu_utilization:avg"}'
  name:
    matches: ^namespace_app:gpu_utilization:avg$
    as: app_gpu_utilization_unmapped
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
"""

PROCS = EXPORTER = PROMETHEUS = PRESET = NAMESPACED = CUSTOM_ONLY = None


def external_names(adapter):
    status, body = adapter.get_json(EXTERNAL)
    return [r["name"] for r in body["resources"]] if status == 200 else []


def setUpModule():
    global PROCS, EXPORTER, PROMETHEUS, PRESET, NAMESPACED, CUSTOM_ONLY
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        rules = os.path.join(PROCS.workdir, "recording-rules.yml")
        with open(rules, "w") as f:
            f.write(RECORDING_RULES)
        PROMETHEUS = harness.Prometheus(PROCS, EXPORTER.port, rule_files=[rules])
        gpus = len(dcgm_samples())
        PROMETHEUS.wait_for_series("DCGM_FI_DEV_GPU_UTIL", gpus)
        PROMETHEUS.wait_for_series("kube_node_labels", len(node_pools()))
        PROMETHEUS.wait_for_series("cuda_test_gpu_avg", 1)
        PROMETHEUS.wait_for_series('{__name__="namespace_app:gpu_utilization:avg"}',
                                   len(expected_by_app()))
        namespaced_config = os.path.join(PROCS.workdir, "namespaced-external.yaml")
        with open(namespaced_config, "w") as f:
            f.write(NAMESPACED_RULES)
        PRESET = harness.Adapter(PROCS, ARGS.binary,
                                 os.path.join(CONFIG_DIR, "gpu-external-rules.yaml"),
                                 PROMETHEUS.url)
        NAMESPACED = harness.Adapter(PROCS, ARGS.binary, namespaced_config, PROMETHEUS.url)
        CUSTOM_ONLY = harness.Adapter(PROCS, ARGS.binary,
                                      os.path.join(CONFIG_DIR, "gpu-dcgm-exporter.yaml"),
                                      PROMETHEUS.url)
        for adapter, names in ((PRESET, ["cuda_test_gpu_avg", "gpu_utilization_by_nodepool"]),
                               (NAMESPACED, ["app_gpu_utilization",
                                             "app_gpu_utilization_unmapped"])):
            harness.wait_until(lambda: external_names(adapter) == names, timeout=60,
                               what="discovery of %s" % names)
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


def dcgm_samples():
    return [(labels, value) for name, labels, value in EXPORTER.samples()
            if name == "DCGM_FI_DEV_GPU_UTIL"]


def node_pools():
    return {labels["node"]: labels["label_nodepool"] for name, labels, _ in EXPORTER.samples()
            if name == "kube_node_labels"}


def pod_apps():
    return {(labels["namespace"], labels["pod"]): labels["label_app"]
            for name, labels, _ in EXPORTER.samples() if name == "kube_pod_labels"}


def mean(values):
    return sum(values) / len(values)


def expected_by_app():
    """{(namespace, app): quantity} of namespace_app:gpu_utilization:avg."""
    apps = pod_apps()
    groups = {}
    for labels, value in dcgm_samples():
        app = apps.get((labels["namespace"], labels["pod"]))
        if app:
            groups.setdefault((labels["namespace"], app), []).append(value)
    return {key: harness.milli_quantity(mean(values)) for key, values in groups.items()}


def expected_cuda_test_gpu_avg():
    """cuda_test_gpu_avg: the mean over BERT's pods of the max utilisation of each pod's GPUs."""
    apps = pod_apps()
    per_pod = {}
    for labels, value in dcgm_samples():
        if apps.get((labels["namespace"], labels["pod"])) == BERT:
            key = (labels["Hostname"], labels["pod"], labels["namespace"])
            per_pod[key] = max(per_pod.get(key, value), value)
    return harness.milli_quantity(mean(list(per_pod.values())))


def expected_by_pool():
    """{pool: quantity} of gpu_utilization_by_nodepool: the mean over the pool's GPUs."""
    pools = node_pools()
    groups = {}
    for labels, value in dcgm_samples():
        groups.setdefault(pools[labels["Hostname"]], []).append(value)
    return {pool: harness.milli_quantity(mean(values)) for pool, values in groups.items()}


def hpa_get(adapter, namespace, metric, selector=None):
    """The request the HPA's external metrics client makes: (status, content type, JSON)."""
    path = "%s/namespaces/%s/%s" % (EXTERNAL, namespace, metric)
    if selector is not None:
        path += "?" + urllib.parse.urlencode({"labelSelector": selector})
    status, content_type, text = adapter.get(path, headers=HPA_ACCEPT)
    return status, content_type, json.loads(text)


class NamespacedRuleTest(unittest.TestCase):
    def assertItems(self, body, expected):
        """`expected` {(namespace, app): quantity}; checks every item's shape too."""
        self.assertEqual(("ExternalMetricValueList", "external.metrics.k8s.io/v1beta1", {}),
                         (body["kind"], body["apiVersion"], body["metadata"]))
        got = {}
        for item in body["items"]:
            self.assertEqual("app_gpu_utilization", item["metricName"])
            self.assertRegex(item["timestamp"], TIMESTAMP)
            self.assertNotIn("window", item)
            labels = item["metricLabels"]
            self.assertEqual({"__name__", "namespace", "label_app"}, set(labels), labels)
            self.assertEqual("namespace_app:gpu_utilization:avg", labels["__name__"])
            got[(labels["namespace"], labels["label_app"])] = item["value"]
        self.assertEqual(expected, got)

    def test_hpa_request_with_a_selector(self):
        status, content_type, body = hpa_get(NAMESPACED, "default", "app_gpu_utilization",
                                             "label_app=" + BERT)
        self.assertEqual((200, "application/json"), (status, content_type), body)
        expected = {("default", BERT): expected_by_app()[("default", BERT)]}
        self.assertItems(body, expected)

    def test_the_request_namespace_scopes_the_series(self):
        for namespace in ("default", "ml-team"):
            status, _, body = hpa_get(NAMESPACED, namespace, "app_gpu_utilization")
            self.assertEqual(200, status, body)
            expected = {k: v for k, v in expected_by_app().items() if k[0] == namespace}
            self.assertTrue(expected)
            self.assertItems(body, expected)
        status, _, body = hpa_get(NAMESPACED, "empty-ns", "app_gpu_utilization")
        self.assertEqual((200, []), (status, body["items"]))

    def test_every_selector_operator(self):
        in_default = {k: v for k, v in expected_by_app().items() if k[0] == "default"}
        apps = sorted(app for _, app in in_default)
        self.assertEqual(["bert-intent-detection", "llm-batch"], apps)
        cases = [
            ("label_app==llm-batch", {"llm-batch"}),
            ("label_app!=llm-batch", {BERT}),
            ("label_app in (llm-batch)", {"llm-batch"}),
            ("label_app in (llm-batch,%s)" % BERT, {"llm-batch", BERT}),
            ("label_app notin (llm-batch)", {BERT}),
            ("label_app notin (llm-batch,%s)" % BERT, set()),
            ("label_app", {"llm-batch", BERT}),
            ("!label_app", set()),
            ("label_app=none", set()),
        ]
        for selector, wanted in cases:
            status, _, body = hpa_get(NAMESPACED, "default", "app_gpu_utilization", selector)
            self.assertEqual(200, status, (selector, body))
            self.assertItems(body, {k: v for k, v in in_default.items() if k[1] in wanted})

    def test_hostile_selectors_give_the_right_data_or_400(self):
        in_default = {k: v for k, v in expected_by_app().items() if k[0] == "default"}
        # Valid selectors whose `.` would match the `-` of llm-batch if it were a regex.
        for selector, wanted in (("label_app=llm.batch", set()),
                                 ("label_app in (llm.batch)", set()),
                                 ("label_app notin (llm.batch)", {"llm-batch", BERT}),
                                 ("label_app in (llm.batch,%s)" % BERT, {BERT})):
            status, _, body = hpa_get(NAMESPACED, "default", "app_gpu_utilization", selector)
            self.assertEqual(200, status, (selector, body))
            self.assertItems(body, {k: v for k, v in in_default.items() if k[1] in wanted})
        # Quotes, backslashes, newlines, regex characters, PromQL: refused before any query.
        for selector in ('label_app="} or vector(1) #', 'label_app=llm-batch"} or vector(1)',
                         "label_app=a\\b", "label_app=llm\nbatch", "label_app in (.*)",
                         "label_app in (llm-batch|%s)" % BERT, "label_app=~llm.*",
                         "label_app in (llm-batch,a\")", "label_app>1",
                         "app.kubernetes.io/name=llm-batch", "label_app in (llm-batch"):
            status, _, body = hpa_get(NAMESPACED, "default", "app_gpu_utilization", selector)
            self.assertEqual((400, "BadRequest"), (status, body.get("reason")), (selector, body))
            self.assertIn("labelSelector", body["message"])

    def test_rule_without_namespace_label_says_how_to_fix_it(self):
        status, _, body = hpa_get(NAMESPACED, "default", "app_gpu_utilization_unmapped")
        self.assertEqual((500, "InternalError"), (status, body["reason"]), body)
        self.assertIn("externalRules[1]", body["message"])
        self.assertIn("resources.namespaced: false", body["message"])
        self.assertIn("externalRules[1].resources: namespaced external rule maps no label to "
                      "namespaces", PROCS.log(NAMESPACED.process))

    def test_unknown_metric_and_unserved_paths_are_404(self):
        status, _, body = hpa_get(NAMESPACED, "default", "app_gpu_utilisation")
        self.assertEqual((404, "NotFound"), (status, body["reason"]), body)
        self.assertIn("the server could not find the metric app_gpu_utilisation",
                      body["message"])
        self.assertIn("app_gpu_utilization", body["message"].split("app_gpu_utilisation", 1)[1])
        for path in (EXTERNAL + "/app_gpu_utilization", EXTERNAL + "/namespaces/default",
                     EXTERNAL + "/namespaces/default/a/b",
                     "/apis/external.metrics.k8s.io/v1beta2/namespaces/default/x"):
            status, _, text = NAMESPACED.get(path, headers=HPA_ACCEPT)
            self.assertEqual(404, status, path)
            self.assertEqual("NotFound", json.loads(text)["reason"])

    def test_kubectl_reads_external_metrics(self):
        code, out, err = NAMESPACED.kubectl_raw(
            EXTERNAL + "/namespaces/ml-team/app_gpu_utilization?labelSelector=label_app%3D"
            "resnet-serving")
        self.assertEqual(0, code, err)
        self.assertItems(json.loads(out), {("ml-team", "resnet-serving"):
                                           expected_by_app()[("ml-team", "resnet-serving")]})


class PresetRulesTest(unittest.TestCase):
    def test_cuda_test_gpu_avg_is_the_same_from_every_namespace(self):
        for namespace in ("default", "ml-team", "autoscaling"):
            status, content_type, body = hpa_get(PRESET, namespace, "cuda_test_gpu_avg")
            self.assertEqual((200, "application/json"), (status, content_type), body)
            self.assertEqual(1, len(body["items"]), body)
            item = body["items"][0]
            self.assertEqual("cuda_test_gpu_avg", item["metricName"])
            self.assertEqual({"__name__": "cuda_test_gpu_avg"}, item["metricLabels"])
            self.assertEqual(expected_cuda_test_gpu_avg(), item["value"])
            self.assertRegex(item["timestamp"], TIMESTAMP)

    def test_gpu_utilization_by_nodepool(self):
        expected = expected_by_pool()
        self.assertEqual({"gpu-a", "gpu-b"}, set(expected))  # the cpu pool has no GPU
        status, _, body = hpa_get(PRESET, "default", "gpu_utilization_by_nodepool")
        self.assertEqual(200, status, body)
        self.assertEqual(expected, {i["metricLabels"]["label_nodepool"]: i["value"]
                                    for i in body["items"]})
        for pool in sorted(expected):
            status, _, body = hpa_get(PRESET, "default", "gpu_utilization_by_nodepool",
                                      "label_nodepool=" + pool)
            self.assertEqual(200, status, body)
            self.assertEqual([({"label_nodepool": pool}, expected[pool])],
                             [(i["metricLabels"], i["value"]) for i in body["items"]])


class DiscoveryTest(unittest.TestCase):
    def test_group_documents(self):
        for adapter in (PRESET, NAMESPACED, CUSTOM_ONLY):
            status, body = adapter.get_json("/apis")
            self.assertEqual(200, status)
            self.assertEqual(["custom.metrics.k8s.io", "external.metrics.k8s.io"],
                             [g["name"] for g in body["groups"]])
            external = body["groups"][1]
            self.assertEqual([{"groupVersion": "external.metrics.k8s.io/v1beta1",
                               "version": "v1beta1"}], external["versions"])
            self.assertEqual("v1beta1", external["preferredVersion"]["version"])
        status, body = PRESET.get_json("/apis/external.metrics.k8s.io")
        self.assertEqual((200, "APIGroup", "external.metrics.k8s.io"),
                         (status, body["kind"], body["name"]))

    def test_resource_lists_of_both_groups(self):
        status, body = NAMESPACED.get_json(EXTERNAL, headers=HPA_ACCEPT)
        self.assertEqual(200, status)
        self.assertEqual(("APIResourceList", "external.metrics.k8s.io/v1beta1"),
                         (body["kind"], body["groupVersion"]))
        self.assertEqual([{"name": name, "singularName": "", "namespaced": True,
                           "kind": "ExternalMetricValueList", "verbs": ["get"]}
                          for name in ("app_gpu_utilization", "app_gpu_utilization_unmapped")],
                         body["resources"])
        # No custom rules: the custom group still answers, with an empty list.
        for version in ("v1beta1", "v1beta2"):
            status, body = NAMESPACED.get_json("/apis/custom.metrics.k8s.io/" + version)
            self.assertEqual((200, []), (status, body["resources"]))

    def test_external_group_without_rules_is_empty_not_404(self):
        harness.wait_until(
            lambda: CUSTOM_ONLY.get_json("/apis/custom.metrics.k8s.io/v1beta1")[1]["resources"],
            timeout=60, what="custom discovery")
        status, body = CUSTOM_ONLY.get_json(EXTERNAL, headers=HPA_ACCEPT)
        self.assertEqual((200, "APIResourceList", []), (status, body["kind"], body["resources"]))
        status, _, body = hpa_get(CUSTOM_ONLY, "default", "DCGM_FI_DEV_GPU_UTIL")
        self.assertEqual((404, "NotFound"), (status, body["reason"]))

    def test_kubectl_reads_external_discovery(self):
        code, out, err = PRESET.kubectl_raw(EXTERNAL)
        self.assertEqual(0, code, err)
        self.assertEqual(["cuda_test_gpu_avg", "gpu_utilization_by_nodepool"],
                         [r["name"] for r in json.loads(out)["resources"]])


class ZzPrometheusDownTest(unittest.TestCase):
    """Runs last (unittest sorts classes by name): it stops Prometheus."""

    def test_prometheus_down_is_503_and_discovery_is_kept(self):
        PROCS.stop(PROMETHEUS.process)
        status, _, body = hpa_get(PRESET, "default", "cuda_test_gpu_avg")
        self.assertEqual((503, "ServiceUnavailable"), (status, body["reason"]), body)
        self.assertIn("Prometheus", body["message"])
        harness.wait_until(lambda: "keeping its last good result" in PROCS.log(PRESET.process),
                           timeout=30, what="a failed relist")
        self.assertEqual(["cuda_test_gpu_avg", "gpu_utilization_by_nodepool"],
                         external_names(PRESET))


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
