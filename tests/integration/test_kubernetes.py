"""The HPA's own requests against a cluster: object lookup by labelSelector through the
Kubernetes API (a fake that speaks the real JSON), Object metrics on Services, CRDs that appear
after start, and the Kubernetes API going down. Values are computed from what the simulated
exporter serves; object sets from what the fake Kubernetes API holds."""

import json
import os
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG_DIR = os.path.join(harness.REPO, "config")
HPA_ACCEPT = {"Accept": "application/vnd.kubernetes.protobuf, */*"}
BERT = "bert-intent-detection"
CRD = {"group": "serving.kserve.io", "version": "v1beta1", "plural": "inferenceservices",
       "singular": "inferenceservice", "kind": "InferenceService", "namespaced": True,
       "objects": [{"name": BERT, "namespace": "default", "labels": {"team": "nlp"}}]}
CRD_RULE = """- seriesQuery: 'inference_gpu_util{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      inferenceservice: {group: "serving.kserve.io", resource: "inferenceservices"}
  metricsQuery: avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
"""
RECORDING_RULES = """groups:
- name: inference
  rules:
  - record: inference_gpu_util
    expr: label_replace(DCGM_FI_DEV_GPU_UTIL{pod=~"%s-.*"}, "inferenceservice", "%s", "", "")
""" % (BERT, BERT)

PROCS = EXPORTER = PROMETHEUS = KUBE = ADAPTER = None
PODS = []  # the pod objects the fake Kubernetes API holds
UNSCHEDULED_PODS = ["whisper-asr-5d8f7b6c9-q2x7k", "whisper-asr-5d8f7b6c9-w4n8m"]


def cluster_objects(exporter):
    """Pods: every pod the exporter reports (labelled app=<deployment name>), plus a pending
    replica of bert without a GPU yet (no metrics: it must be omitted, not invented)."""
    pods = {}
    for name, labels, _ in exporter.samples():
        if name == "DCGM_FI_DEV_GPU_UTIL" and labels["pod"]:
            app = labels["pod"].rsplit("-", 2)[0]
            pods[labels["pod"]] = {"name": labels["pod"], "namespace": labels["namespace"],
                                   "labels": {"app": app, "pod-template-hash": "7c9f6b5d4"}}
    pods[BERT + "-7c9f6b5d4-pend1"] = {"name": BERT + "-7c9f6b5d4-pend1",
                                       "namespace": "default", "labels": {"app": BERT}}
    for pod in UNSCHEDULED_PODS:  # a Deployment none of whose pods has a GPU yet
        pods[pod] = {"name": pod, "namespace": "default", "labels": {"app": "whisper-asr"}}
    return {
        "pods": sorted(pods.values(), key=lambda p: p["name"]),
        "services": [{"name": "dcgm-exporter", "namespace": "default",
                      "labels": {"app.kubernetes.io/name": "dcgm-exporter"}}],
        "namespaces": [{"name": "default"}, {"name": "ml-team"}],
        "nodes": [{"name": "gpu-node-1"}, {"name": "gpu-node-2"}],
        "deployments.apps": [{"name": BERT, "namespace": "default", "labels": {"app": BERT}}],
    }


def setUpModule():
    global PROCS, EXPORTER, PROMETHEUS, KUBE, ADAPTER, PODS
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        rules = os.path.join(PROCS.workdir, "recording-rules.yml")
        with open(rules, "w") as f:
            f.write(RECORDING_RULES)
        PROMETHEUS = harness.Prometheus(PROCS, EXPORTER.port, rule_files=[rules])
        objects = cluster_objects(EXPORTER)
        PODS = objects["pods"]
        KUBE = harness.FakeKube(PROCS, objects)
        gpus = sum(1 for n, _, _ in EXPORTER.samples() if n == "DCGM_FI_DEV_GPU_UTIL")
        PROMETHEUS.wait_for_series("DCGM_FI_DEV_GPU_UTIL", gpus)
        PROMETHEUS.wait_for_series("inference_gpu_util", 1)
        config = os.path.join(PROCS.workdir, "cluster-rules.yaml")
        with open(os.path.join(CONFIG_DIR, "gpu-alibaba-exporter.yaml")) as f:
            text = f.read()
        with open(os.path.join(CONFIG_DIR, "gpu-dcgm-exporter.yaml")) as f:
            text += f.read().split("\nrules:\n", 1)[1]
        with open(config, "w") as f:
            f.write(text + CRD_RULE)
        ADAPTER = harness.Adapter(PROCS, ARGS.binary, config, PROMETHEUS.url, extra_args=[
            "--lister-kubeconfig=" + KUBE.kubeconfig, "--discovery-interval=1s",
            "--object-cache-ttl=60s"])
        harness.wait_until(lambda: "pods/duty_cycle_current" in discovered(), timeout=60,
                           what="discovery")
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


def discovered():
    status, body = ADAPTER.get_json("/apis/custom.metrics.k8s.io/v1beta1")
    return {r["name"] for r in body["resources"]} if status == 200 else set()


def exporter_by(series, label):
    return EXPORTER.grouped(series, label)


def average(values):
    return sum(values) / len(values)


class HpaPodsMetricTest(unittest.TestCase):
    def expected(self, apps, namespace="default"):
        """Pods the fake API lists with app in `apps`, valued from the exporter; pods without
        GPU samples (the pending replica) have no item."""
        listed = {p["name"] for p in PODS
                  if p["namespace"] == namespace and p["labels"]["app"] in apps}
        duty = exporter_by("nvidia_gpu_duty_cycle", "pod_name")
        return {pod: harness.milli_quantity(duty[pod][-1][1]) for pod in listed if pod in duty}

    def test_the_hpas_exact_request_in_both_versions(self):
        expected = self.expected({BERT})
        self.assertEqual(3, len(expected))  # the pending replica has no metric
        for version in ("v1beta2", "v1beta1"):
            status, content_type, text = ADAPTER.get(
                "/apis/custom.metrics.k8s.io/%s/namespaces/default/pods/%%2A/duty_cycle_current"
                "?labelSelector=app%%3D%s" % (version, BERT), headers=HPA_ACCEPT)
            self.assertEqual((200, "application/json"), (status, content_type), text)
            body = json.loads(text)
            self.assertEqual("custom.metrics.k8s.io/" + version, body["apiVersion"])
            got = {i["describedObject"]["name"]: i["value"] for i in body["items"]}
            self.assertEqual(expected, got)

    def test_set_based_selector_plus_encoded(self):
        expected = self.expected({BERT, "llm-batch"})
        self.assertEqual(4, len(expected))
        status, body = ADAPTER.get_json(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/duty_cycle_current"
            "?labelSelector=app+in+%28bert-intent-detection%2Cllm-batch%29", headers=HPA_ACCEPT)
        self.assertEqual(200, status, body)
        self.assertEqual(expected, {i["describedObject"]["name"]: i["value"]
                                    for i in body["items"]})

    def test_selector_matching_nothing_is_an_empty_list(self):
        status, body = ADAPTER.get_json(
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A/duty_cycle_current"
            "?labelSelector=app%3Dnothing-here", headers=HPA_ACCEPT)
        self.assertEqual((200, []), (status, body["items"]))

    def test_pods_without_any_value_are_404_naming_why(self):
        # What `kubectl describe hpa` shows for a Deployment none of whose pods has a series:
        # kubectl, as a real client, prints the Status message.
        code, out, err = ADAPTER.kubectl_raw(
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A/duty_cycle_current"
            "?labelSelector=app%3Dwhisper-asr")
        self.assertNotEqual(0, code, out)
        self.assertIn("(NotFound)", err)
        self.assertRegex(err, r'the server could not find the metric duty_cycle_current for pods: '
                         r'none of the %d pods matching "app=whisper-asr" has a value: '
                         r"rules\[\d+\]'s query returned no sample" % len(UNSCHEDULED_PODS))

    def test_a_thousand_hpa_polls_cause_a_handful_of_lists(self):
        path = "/api/v1/namespaces/default/pods"
        before = KUBE.list_calls(path)
        for _ in range(1000):
            status, _, _ = ADAPTER.get(
                "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A/"
                "duty_cycle_current?labelSelector=app%3Dbert-intent-detection",
                headers=HPA_ACCEPT)
            self.assertEqual(200, status)
        self.assertLessEqual(KUBE.list_calls(path) - before, 2)


class ObjectMetricTest(unittest.TestCase):
    def test_service_object_metric_of_the_aws_walkthrough(self):
        samples = exporter_by("DCGM_FI_DEV_GPU_UTIL", "namespace")["default"]
        expected = harness.milli_quantity(average([v for _, v in samples]))
        for version in ("v1beta1", "v1beta2"):
            status, body = ADAPTER.get_json(
                "/apis/custom.metrics.k8s.io/%s/namespaces/default/services/dcgm-exporter/"
                "DCGM_FI_DEV_GPU_UTIL_AVG" % version, headers=HPA_ACCEPT)
            self.assertEqual(200, status, body)
            self.assertEqual(1, len(body["items"]))
            item = body["items"][0]
            self.assertEqual({"kind": "Service", "namespace": "default", "name": "dcgm-exporter",
                              "apiVersion": "v1"}, item["describedObject"])
            self.assertEqual(expected, item["value"])

    def test_namespace_metric_as_the_hpa_asks(self):
        samples = exporter_by("DCGM_FI_DEV_GPU_UTIL", "namespace")["ml-team"]
        status, body = ADAPTER.get_json(
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ml-team/metrics/DCGM_FI_DEV_GPU_UTIL",
            headers=HPA_ACCEPT)
        self.assertEqual(200, status, body)
        self.assertEqual([harness.milli_quantity(average([v for _, v in samples]))],
                         [i["value"] for i in body["items"]])
        self.assertEqual("Namespace", body["items"][0]["describedObject"]["kind"])

    def test_discovery_uses_the_clusters_rest_mapping(self):
        names = discovered()
        self.assertIn("services/DCGM_FI_DEV_GPU_UTIL_AVG", names)
        self.assertIn("nodes/duty_cycle_current", names)


class CrdTest(unittest.TestCase):
    def test_a_crd_installed_after_start_becomes_queryable(self):
        metric = "inferenceservices.serving.kserve.io/inference_gpu_util"
        self.assertNotIn(metric, discovered())  # the rule waits for its resource
        KUBE.add_crd(CRD)
        harness.wait_until(lambda: metric in discovered(), timeout=60,
                           what="the CRD's metric in discovery")
        bert = [v for pod, samples in exporter_by("DCGM_FI_DEV_GPU_UTIL", "pod").items()
                if pod.startswith(BERT) for _, v in samples]
        expected = harness.milli_quantity(average(bert))
        status, body = ADAPTER.get_json(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/"
            "inferenceservices.serving.kserve.io/%s/inference_gpu_util" % BERT)
        self.assertEqual(200, status, body)
        item = body["items"][0]
        self.assertEqual(expected, item["value"])
        self.assertEqual({"kind": "InferenceService", "namespace": "default", "name": BERT,
                          "apiVersion": "serving.kserve.io/v1beta1"}, item["describedObject"])
        # A wildcard with a selector lists the CRD's objects through the Kubernetes API.
        status, body = ADAPTER.get_json(
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/"
            "inferenceservices.serving.kserve.io/%2A/inference_gpu_util?labelSelector=team%3Dnlp")
        self.assertEqual(200, status, body)
        self.assertEqual([(BERT, expected)],
                         [(i["describedObject"]["name"], i["value"]) for i in body["items"]])
        self.assertEqual(1, KUBE.list_calls(
            "/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices"))


def deploy_grants():
    """(group, resource, verb) of every rule of every Role and ClusterRole under deploy/."""
    import yaml
    grants = set()
    for directory, _, names in os.walk(os.path.join(harness.REPO, "deploy")):
        for name in names:
            if not name.endswith(".yaml"):
                continue
            with open(os.path.join(directory, name)) as f:
                for doc in yaml.safe_load_all(f):
                    if isinstance(doc, dict) and doc.get("kind") in ("Role", "ClusterRole"):
                        for rule in doc.get("rules", []):
                            for group in rule.get("apiGroups", []):
                                for resource in rule.get("resources", []):
                                    grants.update((group, resource, v) for v in rule["verbs"])
    return grants


def rbac_attributes(method, path, watch):
    """What the API server's authorizer checks for one call: ("nonResource", path, verb) or
    (group, resource, verb), as its request-info parser derives them."""
    parts = [p for p in path.split("/") if p]
    if method == "POST":
        return (parts[1], parts[-1], "create")  # tokenreviews, subjectaccessreviews
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        group, rest = (parts[1] if len(parts) > 1 else ""), parts[3:]
    if not rest:
        return ("nonResource", path, "get")  # API discovery: /api, /apis, /apis/g/v
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    verb = "watch" if watch else ("list" if len(rest) == 1 else "get")
    return (group, rest[0], verb)


class ZyLeastPrivilegeTest(unittest.TestCase):
    """deploy/ grants the adapter's service account what the code uses, and this fails when the
    code starts needing more: every call the fake API answered, against deploy/'s roles and
    the built-in ones the deploy binds (system:auth-delegator, the auth ConfigMap's reader)."""

    BUILT_IN = {("authentication.k8s.io", "tokenreviews", "create"),
                ("authorization.k8s.io", "subjectaccessreviews", "create"),
                ("", "configmaps", "get")}  # extension-apiserver-authentication, in kube-system

    def test_every_call_is_one_the_deploy_grants(self):
        grants = deploy_grants() | self.BUILT_IN
        core_verbs = {verb for group, resource, verb in grants
                      if group == "" and resource == "pods"}
        self.assertEqual({"list", "watch"}, core_verbs)  # least privilege: what is used
        calls = KUBE.calls()
        self.assertTrue(any(watch for _, _, watch in calls))
        for method, path, watch in calls:
            group, resource, verb = rbac_attributes(method, path, watch)
            if group == "nonResource":
                continue  # system:discovery, granted to every authenticated user
            with self.subTest(call=(method, path, watch)):
                if (group, resource, verb) in grants:
                    continue
                # A resource only a rule of this test names (a CRD): its verbs are the lister's.
                self.assertNotEqual("", group, "a core resource deploy/ does not grant")
                self.assertIn(verb, core_verbs)


class ZzKubernetesDownTest(unittest.TestCase):
    """Runs last: it takes the fake Kubernetes API down, then brings it back."""

    def test_requests_needing_the_api_are_503_and_the_rest_keeps_working(self):
        KUBE.set_down(True)
        try:
            # ml-team was never listed, so no cached answer exists.
            status, body = ADAPTER.get_json(
                "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ml-team/pods/%2A/"
                "duty_cycle_current?labelSelector=app%3Dresnet-serving", headers=HPA_ACCEPT)
            self.assertEqual(503, status, body)
            self.assertEqual("ServiceUnavailable", body["reason"])
            self.assertIn("unable to list matching pods", body["message"])
            self.assertIn("pods/duty_cycle_current", discovered())
            pod = [p["name"] for p in PODS if p["namespace"] == "ml-team"][0]
            status, body = ADAPTER.get_json(
                "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ml-team/pods/%s/"
                "duty_cycle_current" % pod)
            self.assertEqual(200, status, body)
        finally:
            KUBE.set_down(False)
        status, body = ADAPTER.get_json(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ml-team/pods/%2A/"
            "duty_cycle_current?labelSelector=app%3Dresnet-serving", headers=HPA_ACCEPT)
        self.assertEqual(200, status, body)
        self.assertEqual(1, len(body["items"]))


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
