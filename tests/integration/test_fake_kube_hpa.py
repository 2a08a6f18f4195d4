"""The fake Kubernetes API validates an HPA's minReplicas as the real API server does with the
HPAScaleToZero gate on (beta and on by default from Kubernetes 1.37): 0 only with an Object or
External metric. The scale-to-zero tests rely on it to refuse what a cluster would refuse. No
adapter: the fake is asked directly."""

import json
import os
import ssl
import subprocess
import sys
import unittest
import urllib.error
import urllib.request

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
HPA_RESOURCE = ["autoscaling", "v2", "horizontalpodautoscalers", "horizontalpodautoscaler",
                "HorizontalPodAutoscaler", True]
FORBIDDEN = ("spec.metrics: Forbidden: must specify at least one Object or External metric to "
             "support scaling to zero replicas")
PROCS = KUBE = None


def metric(kind):
    """One metric of `kind`, shaped as autoscaling/v2 writes it."""
    source = {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "1"}}
    if kind == "Object":
        source["describedObject"] = {"apiVersion": "v1", "kind": "Service", "name": "gateway"}
    return {"type": kind, kind[0].lower() + kind[1:]: source}


def hpa(name, min_replicas, kinds):
    return {"name": name, "namespace": "default", "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm"},
        "minReplicas": min_replicas, "maxReplicas": 4, "metrics": [metric(k) for k in kinds]}}


def get(path):
    """An authenticated GET of the fake, as a client with the kubeconfig's token makes it."""
    context = ssl.create_default_context(cafile=os.path.join(KUBE.dir, "ca.crt"))
    request = urllib.request.Request(KUBE.url + path,
                                     headers={"Authorization": "Bearer " + KUBE.TOKEN})
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        return json.loads(response.read().decode())


def setUpModule():
    global PROCS, KUBE
    PROCS = harness.Processes()
    try:
        KUBE = harness.FakeKube(PROCS, {"extra_resources": [HPA_RESOURCE],
                                        "horizontalpodautoscalers.autoscaling": [
                                            hpa("gateway", 0, ["External"])]})
    except BaseException:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


class ScaleToZeroValidationTest(unittest.TestCase):
    def change(self, obj):
        """(HTTP status, message) of adding `obj` as an HPA."""
        try:
            KUBE.change_object("add", "horizontalpodautoscalers.autoscaling", obj)
            return 200, ""
        except urllib.error.HTTPError as e:
            body = json.loads(e.read().decode())
            self.assertEqual((body["reason"], body["code"]), ("Invalid", e.code))
            return e.code, body["message"]

    def test_zero_needs_an_object_or_external_metric(self):
        cases = [
            (0, ["External"], 200, ""),
            (0, ["Object"], 200, ""),
            (0, ["Pods", "External"], 200, ""),
            (1, ["Pods"], 200, ""),
            (0, ["Pods"], 422, FORBIDDEN),
            (0, ["Resource"], 422, FORBIDDEN),
            (0, [], 422, FORBIDDEN),
            (-1, ["External"], 422,
             "spec.minReplicas: Invalid value: -1: must be greater than or equal to 0"),
        ]
        for i, (low, kinds, code, message) in enumerate(cases):
            with self.subTest(minReplicas=low, metrics=kinds):
                name = "hpa-%d" % i
                status, text = self.change(hpa(name, low, kinds))
                self.assertEqual(status, code, text)
                if message:
                    self.assertEqual(text, 'HorizontalPodAutoscaler.autoscaling "%s" is invalid: '
                                     "%s" % (name, message))

    def test_an_accepted_hpa_at_zero_is_served_as_given(self):
        self.assertEqual(self.change(hpa("added", 0, ["Object"]))[0], 200)
        for name, kind in [("gateway", "External"), ("added", "Object")]:
            with self.subTest(name=name):
                served = get("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/"
                             + name)
                self.assertEqual(served["spec"]["minReplicas"], 0)
                self.assertEqual([m["type"] for m in served["spec"]["metrics"]], [kind])

    def test_a_fixture_the_api_would_refuse_does_not_start(self):
        objects = os.path.join(PROCS.workdir, "refused.json")
        with open(objects, "w") as f:
            json.dump({"horizontalpodautoscalers.autoscaling": [hpa("pods-only", 0, ["Pods"])]}, f)
        result = subprocess.run(
            [sys.executable, os.path.join(os.path.dirname(__file__), "fake_kube.py"),
             "--port", "0", "--objects", objects, "--cert", "none", "--key", "none",
             "--token", "t"], capture_output=True, text=True, timeout=30)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn('HorizontalPodAutoscaler.autoscaling "pods-only" is invalid: ' + FORBIDDEN,
                      result.stderr)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
