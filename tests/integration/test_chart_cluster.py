"""The chart installed and upgraded by helm itself (not `helm template`), against the in-memory
Kubernetes API of chart_support.py, so its `lookup` calls read what the API holds: the generated
CA and certificate kept by `helm upgrade` (the Secret and every caBundle unchanged), and
v1beta1.metrics.k8s.io refused while another service owns it, with a message naming it."""

import base64
import os
import shutil
import tempfile
import unittest

import chart_support
import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
NAMESPACE = chart_support.NAMESPACE
RELEASE = chart_support.RELEASE
SECRET = "metrics-adapter-serving-cert"
RESOURCE_METRICS = os.path.join(chart_support.CHART, "examples", "resource-metrics.yaml")
# helm 3.17 validates against the server's OpenAPI unless told not to; the API here has none.
NO_OPENAPI = "--disable-openapi-validation"

WORK = HELM = None


def setUpModule():
    global WORK, HELM
    WORK = tempfile.mkdtemp(prefix="ma-chart-cluster-")
    HELM = chart_support.Helm(WORK)


def tearDownModule():
    if WORK and not os.environ.get("KEEP_TEST_DIRS"):
        shutil.rmtree(WORK, ignore_errors=True)


class ClusterTestCase(unittest.TestCase):
    def setUp(self):
        self.api = chart_support.ClusterAPI(tempfile.mkdtemp(dir=WORK))
        self.addCleanup(self.api.stop)

    def helm(self, verb, *args):
        return HELM.run(verb, RELEASE, chart_support.CHART, "--namespace", NAMESPACE,
                        NO_OPENAPI, *args, kubeconfig=self.api.kubeconfig)

    def installed(self, verb, *args):
        result = self.helm(verb, *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def serving_secret(self):
        return self.api.get("secrets", SECRET, NAMESPACE)["data"]

    def ca_bundles(self):
        return {name: self.api.get("apiservices", name)["spec"]["caBundle"]
                for plural, _, name in self.api.objects if plural == "apiservices"}


class GeneratedCertificateTest(ClusterTestCase):
    def test_upgrade_keeps_the_ca_the_certificate_and_every_ca_bundle(self):
        notes = self.installed("install")
        secret = self.serving_secret()
        bundles = self.ca_bundles()
        self.assertEqual(len(bundles), 3)
        self.assertEqual(set(bundles.values()), {secret["ca.crt"]})
        self.assertIn("kubectl get --raw /apis/custom.metrics.k8s.io/v1beta1", notes)
        self.assertIn("kubectl get apiservices", notes)

        # An upgrade that changes something (replicas, the rules): the upgrade is applied, the
        # certificate is not touched.
        self.installed("upgrade", "--set", "replicas=3", "--set", "config.presets={alibaba}")
        self.assertEqual(self.api.get("deployments", RELEASE, NAMESPACE)["spec"]["replicas"], 3)
        self.assertIn("nvidia_gpu_", self.api.get("configmaps", "metrics-adapter-config",
                                                  NAMESPACE)["data"]["config.yaml"])
        self.assertEqual(self.serving_secret(), secret)
        self.assertEqual(self.ca_bundles(), bundles)
        secret_path = "/api/v1/namespaces/%s/secrets/%s" % (NAMESPACE, SECRET)
        self.assertEqual([m for m, p in self.api.calls if p == secret_path and m != "GET"], [])
        # ... and the chart asked for it: lookup read the Secret during the upgrade's render.
        self.assertIn(("GET", secret_path), self.api.calls)

        # A second upgrade that turns on one more API: its APIService gets the same CA.
        self.installed("upgrade", "--set", "apis.forecastObserver=true")
        bundles_after = self.ca_bundles()
        self.assertEqual(len(bundles_after), 4)
        self.assertEqual(set(bundles_after.values()), {secret["ca.crt"]})
        self.assertEqual(self.serving_secret(), secret)

    def test_without_the_secret_in_the_cluster_each_render_makes_a_new_ca(self):
        # What the lookup saves us from: two renders with nothing to read back differ, so the
        # test above would fail if the chart did not read the Secret.
        first = HELM.template(WORK)
        second = HELM.template(WORK)
        ca = [next(o for o in r if o["kind"] == "Secret")["data"]["ca.crt"]
              for r in (first, second)]
        self.assertNotEqual(ca[0], ca[1])

    def test_deleting_the_secret_and_upgrading_makes_a_new_ca_everywhere(self):
        self.installed("install")
        old = self.serving_secret()
        self.api.delete("secrets", SECRET, NAMESPACE)
        self.installed("upgrade")
        new = self.serving_secret()
        self.assertNotEqual(new["ca.crt"], old["ca.crt"])
        self.assertEqual(set(self.ca_bundles().values()), {new["ca.crt"]})

    def test_a_secret_without_a_ca_is_replaced_not_half_reused(self):
        # e.g. one left from a kubectl-created kubernetes.io/tls Secret: no ca.crt to give the
        # APIServices, so the chart makes a complete new set.
        self.api.put("secrets", {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                                 "metadata": {"name": SECRET, "namespace": NAMESPACE},
                                 "data": {"tls.crt": "eA==", "tls.key": "eA=="}})
        rendered = HELM.checked("template", RELEASE, chart_support.CHART, "--namespace",
                                NAMESPACE, "--dry-run=server", kubeconfig=self.api.kubeconfig)
        self.assertNotIn("tls.crt: eA==", rendered)
        self.assertIn("ca.crt: ", rendered)


def metrics_apiservice(service=None, adopted=False):
    """v1beta1.metrics.k8s.io as metrics-server's chart leaves it, or as the API server's own
    (service None), optionally with the metadata that lets Helm adopt it into our release."""
    obj = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": "v1beta1.metrics.k8s.io"},
           "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
                    "versionPriority": 100, "service": service}}
    if adopted:
        obj["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "Helm"}
        obj["metadata"]["annotations"] = {"meta.helm.sh/release-name": RELEASE,
                                          "meta.helm.sh/release-namespace": NAMESPACE}
    return obj


class MetricsOwnerTest(ClusterTestCase):
    METRICS_SERVER = {"name": "metrics-server", "namespace": "kube-system", "port": 443}

    def test_installing_over_metrics_server_is_refused_naming_it(self):
        self.api.put("apiservices", metrics_apiservice(self.METRICS_SERVER))
        result = self.helm("install", "--values", RESOURCE_METRICS)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("v1beta1.metrics.k8s.io is served by service kube-system/metrics-server",
                      result.stderr)
        self.assertIn("apis.resourceMetrics.replaceExisting=true", result.stderr)
        # Nothing was installed, and metrics-server keeps its API.
        self.assertIsNone(self.api.get("deployments", RELEASE, NAMESPACE))
        self.assertEqual(self.api.get("apiservices", "v1beta1.metrics.k8s.io")["spec"]["service"],
                         self.METRICS_SERVER)

    def test_a_local_apiservice_is_named_as_the_api_servers_own(self):
        self.api.put("apiservices", metrics_apiservice(None))
        result = self.helm("install", "--values", RESOURCE_METRICS)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("served by the Kubernetes API server itself", result.stderr)

    def test_replacing_takes_the_api_with_take_ownership_and_force(self):
        # README.md's procedure. Adoption alone would leave metrics-server's spec in place: helm
        # patches an APIService (not a type it knows) with a two-way merge of our old and new
        # manifests, which are the same on install; --force replaces it with ours instead.
        self.api.put("apiservices", metrics_apiservice(self.METRICS_SERVER))
        self.installed("install", "--values", RESOURCE_METRICS,
                       "--set", "apis.resourceMetrics.replaceExisting=true",
                       "--take-ownership", "--force")
        spec = self.api.get("apiservices", "v1beta1.metrics.k8s.io")["spec"]
        self.assertEqual((spec["service"]["namespace"], spec["service"]["name"]),
                         (NAMESPACE, RELEASE))
        self.assertEqual(spec["caBundle"], self.serving_secret()["ca.crt"])
        # Ours now: later upgrades need no override.
        self.installed("upgrade", "--values", RESOURCE_METRICS)

    def test_adopting_without_force_keeps_the_other_owners_spec(self):
        # Why the procedure needs --force (and so why the chart cannot promise more by itself).
        self.api.put("apiservices", metrics_apiservice(self.METRICS_SERVER, adopted=True))
        self.installed("install", "--values", RESOURCE_METRICS,
                       "--set", "apis.resourceMetrics.replaceExisting=true")
        self.assertEqual(self.api.get("apiservices", "v1beta1.metrics.k8s.io")["spec"]["service"],
                         self.METRICS_SERVER)

    def test_an_empty_cluster_and_our_own_release_pass(self):
        self.installed("install", "--values", RESOURCE_METRICS)
        self.assertEqual(base64.b64decode(self.ca_bundles()["v1beta1.metrics.k8s.io"]),
                         base64.b64decode(self.serving_secret()["ca.crt"]))
        self.installed("upgrade", "--values", RESOURCE_METRICS, "--set", "replicas=3")


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
