"""End to end: the real adapter, a real Prometheus scraping the simulated GPU exporter, real
TLS, kubectl and curl as clients. Expected values are computed from what the exporter serves
(or, where upstream semantics pick one of several series, from what Prometheus answers)."""

import json
import math
import os
import socket
import ssl
import subprocess
import sys
import unittest
from collections import defaultdict

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG_DIR = os.path.join(harness.REPO, "config")
PROCS = None
EXPORTER = None
PROMETHEUS = None
ALIBABA = None
DCGM = None


def setUpModule():
    global PROCS, EXPORTER, PROMETHEUS, ALIBABA, DCGM
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        PROMETHEUS = harness.Prometheus(PROCS, EXPORTER.port)
        gpus = sum(1 for name, _, _ in EXPORTER.samples() if name == "nvidia_gpu_duty_cycle")
        PROMETHEUS.wait_for_series("nvidia_gpu_duty_cycle", gpus)
        PROMETHEUS.wait_for_series("DCGM_FI_DEV_GPU_UTIL", gpus)
        ALIBABA = harness.Adapter(PROCS, ARGS.binary,
                                  os.path.join(CONFIG_DIR, "gpu-alibaba-exporter.yaml"),
                                  PROMETHEUS.url)
        DCGM = harness.Adapter(PROCS, ARGS.binary,
                               os.path.join(CONFIG_DIR, "gpu-dcgm-exporter.yaml"), PROMETHEUS.url)
        for adapter, entry in ((ALIBABA, "pods/duty_cycle_current"),
                               (DCGM, "pods/DCGM_FI_DEV_GPU_UTIL")):
            harness.wait_until(lambda: entry in discovered_names(adapter, "v1beta1"), timeout=60,
                               what="discovery of " + entry)
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


def discovered_names(adapter, version):
    status, body = adapter.get_json("/apis/custom.metrics.k8s.io/" + version)
    return {r["name"]: r["namespaced"] for r in body["resources"]} if status == 200 else {}


def exporter_values(series, by):
    return EXPORTER.grouped(series, by)


def last_sample_per(promql, label):
    """Prometheus's answer to promql, keeping the last sample per label value (upstream rule)."""
    result = {}
    for sample in PROMETHEUS.query(promql):
        result[sample["metric"][label]] = float(sample["value"][1])
    return result


def items_by_name(body):
    return {item["describedObject"]["name"]: item for item in body["items"]}


class DiscoveryTest(unittest.TestCase):
    def test_discovery_lists_every_metric_with_a_consistent_scope(self):
        series = sorted({name[len("nvidia_gpu_"):] for name, _, _ in EXPORTER.samples()
                         if name.startswith("nvidia_gpu_")})
        for version in ("v1beta1", "v1beta2"):
            names = discovered_names(ALIBABA, version)
            for base in series:
                for suffix in ("_current", "_over_time"):
                    metric = base + suffix
                    self.assertIs(names.get("pods/" + metric), True, metric)
                    self.assertIs(names.get("nodes/" + metric), False, metric)
                    self.assertIs(names.get("namespaces/" + metric), False, metric)
            # The same resource prefix never has two scopes (aggregated discovery needs that).
            scopes = defaultdict(set)
            for name, namespaced in names.items():
                scopes[name.split("/")[0]].add(namespaced)
            self.assertTrue(all(len(s) == 1 for s in scopes.values()), scopes)

    def test_group_documents(self):
        status, body = ALIBABA.get_json("/apis")
        self.assertEqual(200, status)
        self.assertEqual("APIGroupList", body["kind"])
        group = body["groups"][0]
        self.assertEqual("custom.metrics.k8s.io", group["name"])
        self.assertEqual(["v1beta1", "v1beta2"], [v["version"] for v in group["versions"]])
        status, body = ALIBABA.get_json("/apis/custom.metrics.k8s.io")
        self.assertEqual((200, "APIGroup"), (status, body["kind"]))
        status, body = ALIBABA.get_json("/apis/custom.metrics.k8s.io/v1beta1/")
        self.assertEqual((200, "custom.metrics.k8s.io/v1beta1"), (status, body["groupVersion"]))

    def test_kubectl_reads_discovery(self):
        code, out, err = ALIBABA.kubectl_raw("/apis/custom.metrics.k8s.io/v1beta1")
        self.assertEqual(0, code, err)
        body = json.loads(out)
        self.assertIn("pods/duty_cycle_current", [r["name"] for r in body["resources"]])


class PodMetricsTest(unittest.TestCase):
    def expected_pods(self, namespace, series="nvidia_gpu_duty_cycle", pod_label="pod_name",
                      ns_label="namespace_name", combine=lambda values: values[-1]):
        groups = exporter_values(series, pod_label)
        return {pod: harness.milli_quantity(combine([v for _, v in samples]))
                for pod, samples in groups.items() if samples[0][0][ns_label] == namespace}

    def test_wildcard_pods_through_kubectl_v1beta1(self):
        code, out, err = ALIBABA.kubectl_raw(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/duty_cycle_current")
        self.assertEqual(0, code, err)
        body = json.loads(out)
        self.assertEqual(("MetricValueList", "custom.metrics.k8s.io/v1beta1"),
                         (body["kind"], body["apiVersion"]))
        expected = self.expected_pods("default")
        self.assertEqual(4, len(expected))
        got = items_by_name(body)
        self.assertEqual(expected, {name: item["value"] for name, item in got.items()})
        self.assertEqual(sorted(expected), [i["describedObject"]["name"] for i in body["items"]])
        for item in body["items"]:
            self.assertEqual("Pod", item["describedObject"]["kind"])
            self.assertEqual("default", item["describedObject"]["namespace"])
            self.assertEqual("duty_cycle_current", item["metricName"])
            self.assertIsNone(item["selector"])
            self.assertRegex(item["timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

    def test_wildcard_pods_v1beta2_shape_as_the_hpa_asks(self):
        status, content_type, text = ALIBABA.get(
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ml-team/pods/%2A/duty_cycle_current",
            headers={"Accept": "application/vnd.kubernetes.protobuf, */*"})
        self.assertEqual((200, "application/json"), (status, content_type))
        body = json.loads(text)
        self.assertEqual("custom.metrics.k8s.io/v1beta2", body["apiVersion"])
        expected = self.expected_pods("ml-team")
        self.assertEqual(1, len(expected))
        for item in body["items"]:
            self.assertNotIn("metricName", item)
            self.assertNotIn("window", item)
            self.assertEqual({"name": "duty_cycle_current", "selector": None}, item["metric"])
        self.assertEqual(expected, {n: i["value"] for n, i in items_by_name(body).items()})

    def test_named_pod_over_time_rule(self):
        pod, samples = sorted(exporter_values("nvidia_gpu_memory_used_bytes", "pod_name").items())[0]
        namespace = samples[0][0]["namespace_name"]
        code, out, err = ALIBABA.kubectl_raw(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/%s/pods/%s/memory_used_bytes_over_time"
            % (namespace, pod))
        self.assertEqual(0, code, err)
        items = json.loads(out)["items"]
        self.assertEqual(1, len(items))
        # ceil(avg_over_time(x[3m])) of a constant series is ceil(x).
        self.assertEqual(harness.milli_quantity(math.ceil(samples[0][1])), items[0]["value"])
        self.assertEqual(pod, items[0]["describedObject"]["name"])

    def test_dcgm_pods_average_their_gpus(self):
        status, body = DCGM.get_json(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/DCGM_FI_DEV_GPU_UTIL")
        self.assertEqual(200, status, body)
        expected = self.expected_pods("default", "DCGM_FI_DEV_GPU_UTIL", "pod", "namespace",
                                      combine=lambda values: sum(values) / len(values))
        self.assertEqual(expected, {n: i["value"] for n, i in items_by_name(body).items()})

    def test_curl_named_pod_with_metric_label_selector(self):
        pod, samples = sorted(exporter_values("DCGM_FI_DEV_FB_USED", "pod").items())[0]
        namespace = samples[0][0]["namespace"]
        uuid = samples[0][0]["UUID"]
        path = ("/apis/custom.metrics.k8s.io/v1beta2/namespaces/%s/pods/%s/DCGM_FI_DEV_FB_USED"
                "?metricLabelSelector=UUID%%3D%s" % (namespace, pod, uuid))
        code, text = DCGM.curl(path)
        self.assertEqual(200, code, text)
        item = json.loads(text)["items"][0]
        self.assertEqual(harness.milli_quantity(samples[0][1]), item["value"])
        self.assertEqual({"matchLabels": {"UUID": uuid}}, item["metric"]["selector"])
        # A selector no series matches: the object has no value -> 404 naming it.
        code, text = DCGM.curl(path.replace(uuid, "GPU-none"))
        self.assertEqual(404, code, text)
        self.assertIn(pod, json.loads(text)["message"])


class RootScopedMetricsTest(unittest.TestCase):
    def test_alibaba_node_metric_is_what_prometheus_holds(self):
        expected = last_sample_per('nvidia_gpu_duty_cycle{node_name="gpu-node-1"}', "node_name")
        for version in ("v1beta1", "v1beta2"):
            code, out, err = ALIBABA.kubectl_raw(
                "/apis/custom.metrics.k8s.io/%s/nodes/gpu-node-1/duty_cycle_current" % version)
            self.assertEqual(0, code, err)
            items = json.loads(out)["items"]
            self.assertEqual(1, len(items))
            self.assertEqual(harness.milli_quantity(expected["gpu-node-1"]), items[0]["value"])
            self.assertEqual({"kind": "Node", "name": "gpu-node-1", "apiVersion": "v1"},
                             items[0]["describedObject"])

    def test_dcgm_nodes_wildcard_average_every_gpu_of_the_node(self):
        status, body = DCGM.get_json(
            "/apis/custom.metrics.k8s.io/v1beta1/nodes/%2A/DCGM_FI_DEV_GPU_UTIL")
        self.assertEqual(200, status, body)
        groups = exporter_values("DCGM_FI_DEV_GPU_UTIL", "Hostname")
        expected = {node: harness.milli_quantity(sum(v for _, v in s) / len(s))
                    for node, s in groups.items()}
        self.assertEqual(2, len(expected))
        self.assertEqual(expected, {n: i["value"] for n, i in items_by_name(body).items()})

    def test_namespace_metric(self):
        expected = last_sample_per('nvidia_gpu_duty_cycle{namespace_name="default"}',
                                   "namespace_name")
        code, out, err = ALIBABA.kubectl_raw(
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/metrics/duty_cycle_current")
        self.assertEqual(0, code, err)
        items = json.loads(out)["items"]
        self.assertEqual([harness.milli_quantity(expected["default"])], [i["value"] for i in items])
        self.assertEqual({"kind": "Namespace", "name": "default", "apiVersion": "v1"},
                         items[0]["describedObject"])

    def test_dcgm_all_namespaces(self):
        status, body = DCGM.get_json(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/%2A/metrics/DCGM_FI_DEV_GPU_UTIL")
        self.assertEqual(200, status, body)
        groups = exporter_values("DCGM_FI_DEV_GPU_UTIL", "namespace")
        expected = {ns: harness.milli_quantity(sum(v for _, v in s) / len(s))
                    for ns, s in groups.items()}
        self.assertEqual({"default", "ml-team"}, set(expected))
        self.assertEqual(expected, {n: i["value"] for n, i in items_by_name(body).items()})


class BadInputTest(unittest.TestCase):
    def assertStatus(self, adapter, path, code, reason, message_part=None, **kwargs):
        status, content_type, text = adapter.get(path, **kwargs)
        self.assertEqual(code, status, text)
        self.assertEqual("application/json", content_type)
        body = json.loads(text)
        self.assertEqual(("Status", "v1", "Failure", code, reason),
                         (body["kind"], body["apiVersion"], body["status"], body["code"],
                          body["reason"]))
        if message_part:
            self.assertIn(message_part, body["message"])
        return body

    def test_malformed_label_selector_is_400(self):
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/"
                          "%2A/duty_cycle_current?labelSelector=app+in+%28web", 400, "BadRequest",
                          "labelSelector")
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/"
                          "x/duty_cycle_current?metricLabelSelector=%3D%3D", 400, "BadRequest")
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/"
                          "x/duty_cycle_current?metricLabelSelector=gpu%3E1", 400, "BadRequest")

    def test_unknown_metric_is_404_naming_it(self):
        body = self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/"
                                 "pods/%2A/duty_cycle_curent", 404, "NotFound",
                                 "the server could not find the metric duty_cycle_curent for pods")
        self.assertIn("duty_cycle_current", body["message"])  # the close name is suggested

    def test_unknown_resource_and_wrong_scope_are_404(self):
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/"
                          "widgets/%2A/duty_cycle_current", 404, "NotFound", "widgets")
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/"
                          "nodes/%2A/duty_cycle_current", 404, "NotFound",
                          "the server could not find the metric duty_cycle_current for nodes")
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/"
                          "pods/no-such-pod/duty_cycle_current", 404, "NotFound",
                          "for pods no-such-pod")

    def test_path_method_and_accept_errors(self):
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/"
                          "duty_cycle_current", 400, "BadRequest", "invalid request path")
        self.assertStatus(ALIBABA, "/api", 404, "NotFound")
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1/nodes/foo", 404, "NotFound")
        self.assertStatus(ALIBABA, "/apis/custom.metrics.k8s.io/v1beta1", 406, "NotAcceptable",
                          headers={"Accept": "application/xml"})
        code, text = ALIBABA.curl("/apis/custom.metrics.k8s.io/v1beta1", "-X", "POST")
        self.assertEqual(405, code)
        self.assertEqual("MethodNotAllowed", json.loads(text)["reason"])

    def test_wildcard_with_no_objects_is_an_empty_list(self):
        status, body = ALIBABA.get_json(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/empty-ns/pods/%2A/duty_cycle_current")
        self.assertEqual(200, status)
        self.assertEqual([], body["items"])

    def test_two_mib_header_is_refused_and_memory_stays_flat(self):
        before = ALIBABA.rss_kib()
        for _ in range(5):
            context = ALIBABA.ssl_context()
            with socket.create_connection(("127.0.0.1", ALIBABA.port), timeout=30) as raw:
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    request = (b"GET /apis HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (2 << 20)
                               + b"\r\n\r\n")
                    answer = b""
                    try:
                        tls.sendall(request)
                        answer = tls.recv(65536)
                    except (ConnectionError, ssl.SSLError, OSError):
                        pass  # closing the connection is an accepted answer
                    if answer:
                        self.assertTrue(answer.startswith(b"HTTP/1.1 431"), answer[:80])
        after = ALIBABA.rss_kib()
        self.assertLess(after - before, 8 * 1024, "RSS grew from %d to %d KiB" % (before, after))
        status, _, _ = ALIBABA.get("/readyz")
        self.assertEqual(200, status)


class BadConfigTest(unittest.TestCase):
    def test_bad_config_exits_1_naming_file_rule_and_field(self):
        path = os.path.join(PROCS.workdir, "broken.yaml")
        with open(path, "w") as f:
            f.write('rules:\n- seriesQuery: \'{uuid!=""}\'\n  metricsQuery: x\n'
                    '- seriesQuery: \'{uuid!=""}\'\n  name:\n    matches: "^nvidia_gpu_(.*$"\n'
                    '  metricsQuery: <<.Series>>\n')
        result = subprocess.run([ARGS.binary, "--config=" + path, "--secure-port=0"],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(1, result.returncode)
        self.assertIn("broken.yaml", result.stderr)
        self.assertIn("rules[1].name.matches", result.stderr)

    def test_unknown_flag_exits_1(self):
        result = subprocess.run([ARGS.binary, "--config=x", "--rate-interval=5m"],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(1, result.returncode)
        self.assertIn("--rate-interval", result.stderr)


class ZzPrometheusDownTest(unittest.TestCase):
    """Runs last (unittest sorts classes by name): it stops Prometheus."""

    def test_prometheus_down_is_503_and_discovery_is_kept(self):
        PROCS.stop(PROMETHEUS.process)
        status, body = ALIBABA.get_json(
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/duty_cycle_current")
        self.assertEqual(503, status, body)
        self.assertEqual("ServiceUnavailable", body["reason"])
        self.assertIn("Prometheus", body["message"])
        # Failed relists keep the last good discovery.
        harness.wait_until(lambda: "failed" in PROCS.log(ALIBABA.process), timeout=30,
                           what="a failed relist")
        self.assertIn("pods/duty_cycle_current", discovered_names(ALIBABA, "v1beta1"))


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
