"""End to end for metrics.k8s.io from resourceRules (docs/resource-metrics.md): a real Prometheus
scraping a simulated kubelet (cAdvisor container counters and working sets) and node-exporter,
the fake Kubernetes API holding the pods (with their phase) and nodes, the adapter with the
preset config/resource-rules.yaml, and `kubectl get --raw` and `kubectl top` as clients.
Expected values are computed from what the simulator serves: CPU is a counter growing at a
known rate, so rate() over the rule's window is that rate; memory is a fixed number of bytes."""

import http.server
import json
import os
import subprocess
import threading
import time
import unittest
import ssl
import urllib.error
import urllib.parse
import urllib.request

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
RESOURCE_RULES = os.path.join(harness.REPO, "config", "resource-rules.yaml")
METRICS = "/apis/metrics.k8s.io/v1beta1"
HPA_ACCEPT = {"Accept": "application/vnd.kubernetes.protobuf, */*"}

# (namespace, pod, node, labels, phase, {container: (cores, memory bytes)}); None = no series.
PODS = [
    ("default", "web-1", "node-a", {"app": "web"}, "Running",
     {"app": (0.25, 128 * 2**20), "sidecar": (0.0125, 3100)}),
    ("default", "web-2", "node-b", {"app": "web"}, "Running", {"app": (1.5, 2 * 2**30)}),
    ("default", "web-pending", "node-b", {"app": "web"}, "Pending", None),
    ("default", "no-metrics", "node-a", {"app": "db"}, "Running", None),
    ("batch", "job-1", "node-a", {"app": "job"}, "Running", {"worker": (0.75, 1536 * 2**10)}),
    # Its memory reads NaN: left out (and counted), never served as 0.
    ("broken", "nan-1", "node-b", {"app": "nan"}, "Running", {"main": (0.1, float("nan"))}),
]
# node -> (busy cores, memory used bytes); None = node-exporter does not report it.
NODES = {"node-a": (1.75, 6 * 2**30), "node-b": (2.5, 12 * 2**30), "node-c": None}
MEM_TOTAL = 32 * 2**30
NODE_CORES = 8
START = time.time()


def series_at(t):
    """[(metric name, labels, value)] that cAdvisor and node-exporter show at time t for the
    pods and nodes above: CPU counters grow at the given rates (from well before the test),
    memory is fixed."""
    elapsed = t - START + 1000
    series = []
    for namespace, pod, node, _, _, containers in PODS:
        for container, (cores, memory) in (containers or {}).items():
            labels = 'container="%s",namespace="%s",node="%s",pod="%s"' % (
                container, namespace, node, pod)
            series.append(("container_cpu_usage_seconds_total", labels, cores * elapsed))
            series.append(("container_memory_working_set_bytes", labels, memory))
        if containers:  # the pod-level cgroup, container="": not a container of the pod
            series.append(("container_memory_working_set_bytes",
                           'container="",namespace="%s",node="%s",pod="%s"' % (
                               namespace, node, pod), 999999999))
    for node, usage in NODES.items():
        if usage is None:
            continue
        busy, used = usage
        for mode, cores in (("idle", 3.0), ("system", busy * 0.4), ("user", busy * 0.6)):
            series.append(("node_cpu_seconds_total", 'cpu="0",mode="%s",node="%s"' % (mode, node),
                           cores * elapsed))
        series.append(("node_memory_MemAvailable_bytes", 'node="%s"' % node, MEM_TOTAL - used))
        series.append(("node_memory_MemTotal_bytes", 'node="%s"' % node, MEM_TOTAL))
    return series


def kubelet_now():
    """What the simulated kubelet and node-exporter serve at each scrape."""
    return "".join("%s{%s} %r\n" % (name, labels, float(value))
                   for name, labels, value in series_at(time.time()))


def write_history(path, port):
    """The ten minutes before the test as OpenMetrics, with the labels the scrapes add, so that
    rate() over the rules' 3-minute window sees the whole window at once (promtool backfill)."""
    scrape = 'instance="127.0.0.1:%d",job="gpu",service="dcgm-exporter"' % port
    families = {}
    # One sample a second, as the scrapes: rate() extrapolates to its window's start only from
    # a sample within 1.1 average intervals of it, and 10 s between backfilled samples against
    # 1 s between scrapes left a window that starts in the backfill up to 8 % short.
    for t in range(int(START) - 600, int(START) - 20):
        for name, labels, value in series_at(t):
            families.setdefault(name, []).append(
                "%s{%s,%s} %r %d\n" % (name, labels, scrape, float(value), t))
    with open(path, "w") as f:
        for name in sorted(families):
            f.write("# TYPE %s gauge\n" % name)
            # OpenMetrics wants each series' samples together and in time order.
            f.writelines(sorted(families[name], key=lambda l: (l.split("}")[0], int(l.split()[-1]))))
        f.write("# EOF\n")


def cluster_objects():
    pods = [{"name": pod, "namespace": namespace, "labels": labels, "phase": phase}
            for namespace, pod, _, labels, phase, _ in PODS]
    nodes = [{"name": node, "labels": {"kubernetes.io/hostname": node},
              "allocatable": {"cpu": str(NODE_CORES), "memory": "%d" % MEM_TOTAL}}
             for node in NODES]
    namespaces = [{"name": n} for n in sorted({p[0] for p in PODS})]
    return {"pods": pods, "nodes": nodes, "namespaces": namespaces}


def cpu_cores(quantity):
    """A CPU quantity as metrics-server writes it (n, u, m or whole cores) in cores."""
    for suffix, scale in (("n", 1e-9), ("u", 1e-6), ("m", 1e-3)):
        if quantity.endswith(suffix):
            return float(quantity[:-1]) * scale
    return float(quantity)


def byte_quantity(value):
    """Bytes as Kubernetes' BinarySI canonical form writes them, computed independently: the
    largest power-of-1024 suffix that divides exactly; below 1024 the decimal form (1000 is
    1k), as apimachinery does."""
    value = int(value)
    if value < 1024:
        for suffix, factor in (("k", 1000),):
            if value and value % factor == 0:
                return "%d%s" % (value // factor, suffix)
        return str(value)
    for suffix, factor in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30),
                           ("Mi", 2**20), ("Ki", 2**10)):
        if value % factor == 0:
            return "%d%s" % (value // factor, suffix)
    return str(value)


PROCS = SIMULATOR = PROMETHEUS = KUBE = ADAPTER = None


def setUpModule():
    global PROCS, SIMULATOR, PROMETHEUS, KUBE, ADAPTER
    PROCS = harness.Processes()
    try:
        SIMULATOR = harness.FunctionExporter(kubelet_now)
        history = os.path.join(PROCS.workdir, "history.om")
        write_history(history, SIMULATOR.port)
        PROMETHEUS = harness.Prometheus(PROCS, SIMULATOR.port, backfill=history)
        PROMETHEUS.wait_for_scrapes()
        KUBE = harness.FakeKube(PROCS, cluster_objects())
        ADAPTER = harness.Adapter(PROCS, ARGS.binary, RESOURCE_RULES, PROMETHEUS.url,
                                  extra_args=["--lister-kubeconfig=" + KUBE.kubeconfig])
    except Exception:
        tearDownModule()
        raise


def tearDownModule():
    if SIMULATOR:
        SIMULATOR.stop()
    if PROCS:
        PROCS.stop_all()


def get(path):
    return ADAPTER.get_json(path, HPA_ACCEPT)


class DiscoveryTest(unittest.TestCase):
    def test_group_is_listed_and_described(self):
        status, groups = get("/apis")
        self.assertEqual(status, 200)
        self.assertIn("metrics.k8s.io", [g["name"] for g in groups["groups"]])
        status, resources = get(METRICS)
        self.assertEqual(status, 200)
        self.assertEqual({r["name"]: (r["kind"], r["namespaced"], r["verbs"])
                          for r in resources["resources"]},
                         {"nodes": ("NodeMetrics", False, ["get", "list"]),
                          "pods": ("PodMetrics", True, ["get", "list"])})


class PodMetricsTest(unittest.TestCase):
    def assertUsage(self, item):
        """The item's containers carry what the simulator serves for that pod."""
        pod = next(p for p in PODS if (p[0], p[1]) == (item["metadata"]["namespace"],
                                                       item["metadata"]["name"]))
        containers = {c["name"]: c["usage"] for c in item["containers"]}
        self.assertEqual(sorted(containers), sorted(pod[5]))
        for name, (cores, memory) in pod[5].items():
            self.assertAlmostEqual(cpu_cores(containers[name]["cpu"]), cores, delta=cores * 1e-3)
            self.assertEqual(containers[name]["memory"], byte_quantity(memory))
        self.assertEqual(item["window"], "3m0s")
        self.assertRegex(item["timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

    def test_the_hpa_request(self):
        # What the HPA asks for a Resource metric: the namespaced list with the scale selector.
        status, body = get(METRICS + "/namespaces/default/pods?labelSelector=" +
                           urllib.parse.quote("app=web"))
        self.assertEqual(status, 200, body)
        self.assertEqual(body["kind"], "PodMetricsList")
        self.assertEqual(body["apiVersion"], "metrics.k8s.io/v1beta1")
        # web-pending is not Running: not listed.
        self.assertEqual([i["metadata"]["name"] for i in body["items"]], ["web-1", "web-2"])
        for item in body["items"]:
            self.assertUsage(item)
            self.assertEqual(item["metadata"]["labels"], {"app": "web"})

    def test_every_namespace_sorted_bad_values_left_out(self):
        status, body = get(METRICS + "/pods")
        self.assertEqual(status, 200, body)
        names = [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in body["items"]]
        self.assertEqual(names, [("batch", "job-1"), ("default", "web-1"), ("default", "web-2")])
        for item in body["items"]:
            self.assertUsage(item)

    def test_one_pod(self):
        status, body = get(METRICS + "/namespaces/default/pods/web-1")
        self.assertEqual(status, 200, body)
        self.assertEqual(body["kind"], "PodMetrics")
        self.assertUsage(body)

    def test_pods_without_metrics_or_not_running_are_404(self):
        status, body = get(METRICS + "/namespaces/default/pods/no-metrics")
        self.assertEqual((status, body["message"]),
                         (404, 'podmetrics.metrics.k8s.io "default/no-metrics" not found'))
        status, body = get(METRICS + "/namespaces/broken/pods/nan-1")
        self.assertEqual(status, 404)
        for pod in ("web-pending", "nope"):
            status, body = get(METRICS + "/namespaces/default/pods/" + pod)
            self.assertEqual((status, body["message"]), (404, 'pods "%s" not found' % pod))

    def test_field_selectors(self):
        status, body = get(METRICS + "/pods?fieldSelector=" +
                           urllib.parse.quote("metadata.namespace!=default"))
        self.assertEqual([i["metadata"]["name"] for i in body["items"]], ["job-1"])
        status, body = get(METRICS + "/namespaces/default/pods?fieldSelector=" +
                           urllib.parse.quote("metadata.name=web-2"))
        self.assertEqual([i["metadata"]["name"] for i in body["items"]], ["web-2"])

    def test_bad_selectors_are_400(self):
        for query in ("fieldSelector=spec.nodeName%3Dnode-a", "labelSelector=app%20in%20(",
                      "fieldSelector=metadata.name"):
            status, body = get(METRICS + "/pods?" + query)
            self.assertEqual((status, body["reason"]), (400, "BadRequest"), query)

    def test_bad_values_are_counted(self):
        get(METRICS + "/pods")
        status, _, text = ADAPTER.get("/metrics")
        self.assertEqual(status, 200)
        self.assertRegex(text, r'metrics_adapter_resource_metrics_omitted_total\{[^}]*'
                               r'reason="bad_value"[^}]*\} [1-9]')


class NodeMetricsTest(unittest.TestCase):
    def assertNode(self, item):
        busy, used = NODES[item["metadata"]["name"]]
        self.assertAlmostEqual(cpu_cores(item["usage"]["cpu"]), busy, delta=busy * 1e-3)
        self.assertEqual(item["usage"]["memory"], byte_quantity(used))
        self.assertEqual(item["window"], "3m0s")

    def test_list_leaves_out_nodes_without_metrics(self):
        status, body = get(METRICS + "/nodes")
        self.assertEqual(status, 200, body)
        self.assertEqual(body["kind"], "NodeMetricsList")
        self.assertEqual([i["metadata"]["name"] for i in body["items"]], ["node-a", "node-b"])
        for item in body["items"]:
            self.assertNode(item)

    def test_get_and_404s(self):
        status, body = get(METRICS + "/nodes/node-b")
        self.assertEqual((status, body["kind"]), (200, "NodeMetrics"))
        self.assertNode(body)
        status, body = get(METRICS + "/nodes/node-c")
        self.assertEqual((status, body["message"]),
                         (404, 'nodemetrics.metrics.k8s.io "node-c" not found'))
        status, body = get(METRICS + "/nodes/node-z")
        self.assertEqual((status, body["message"]), (404, 'nodes "node-z" not found'))

    def test_label_selector(self):
        status, body = get(METRICS + "/nodes?labelSelector=" +
                           urllib.parse.quote("kubernetes.io/hostname=node-b"))
        self.assertEqual([i["metadata"]["name"] for i in body["items"]], ["node-b"])


class ToolsTest(unittest.TestCase):
    def explain(self, *args):
        return subprocess.run([ARGS.binary, "explain", "--config", RESOURCE_RULES,
                               "--prometheus-url", PROMETHEUS.url, "--resource-metrics", *args],
                              capture_output=True, text=True, timeout=120)

    def test_explain_a_pod(self):
        result = self.explain("--namespace", "default", "--name", "web-1")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn('cpu query: sum by (pod,container) (rate(container_cpu_usage_seconds_total'
                      '{namespace="default",pod="web-1",container!=""', result.stdout)
        self.assertIn('container "app": cpu 25', result.stdout)
        self.assertIn('memory 128Mi', result.stdout)

    def test_explain_says_why_a_pod_is_left_out(self):
        result = self.explain("--namespace", "broken", "--name", "nan-1")
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn("never served as 0", result.stdout)
        self.assertIn('answer: 404: podmetrics.metrics.k8s.io "broken/nan-1" not found',
                      result.stdout)

    def test_explain_a_node(self):
        result = self.explain("--resource", "nodes", "--name", "node-a")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("answer: 200: cpu 1", result.stdout)
        result = self.explain("--resource", "nodes", "--name", "node-c")
        self.assertEqual(result.returncode, 2)
        self.assertIn('nodemetrics.metrics.k8s.io "node-c" not found', result.stdout)

    def test_dry_run_says_the_group_is_served(self):
        result = subprocess.run([ARGS.binary, "--dry-run", "--config=" + RESOURCE_RULES,
                                 "--prometheus-url=" + PROMETHEUS.url,
                                 "--authentication-mode=none"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("metrics.k8s.io from resourceRules (window 3m)", result.stdout)


class Aggregator(http.server.BaseHTTPRequestHandler):
    """What kube-apiserver's aggregator does for kubectl, reduced to GETs: metrics.k8s.io goes
    to the adapter over TLS (verified with the adapter's CA); everything else to the fake
    Kubernetes API; /apis merges the adapter's metrics.k8s.io group into the fake's list, as
    the APIService registration does."""

    def forward(self, base, path, ca_file, headers):
        context = ssl.create_default_context(cafile=ca_file)
        request = urllib.request.Request(base + path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30, context=context) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def do_GET(self):
        kube = (KUBE.url, os.path.join(KUBE.dir, "ca.crt"),
                {"Authorization": "Bearer " + harness.FakeKube.TOKEN,
                 "Accept": "application/json"})
        adapter = (ADAPTER.base, ADAPTER.ca_file, {"Accept": "application/json"})
        path = self.path
        if path.split("?")[0] in ("/apis", "/apis/"):
            status, body = self.forward(kube[0], "/apis", kube[1], kube[2])
            groups = json.loads(body)
            _, group = self.forward(adapter[0], "/apis/metrics.k8s.io", adapter[1], adapter[2])
            group = json.loads(group)
            del group["kind"], group["apiVersion"]
            groups["groups"].append(group)
            body = json.dumps(groups).encode()
        elif path.startswith("/apis/metrics.k8s.io"):
            status, body = self.forward(adapter[0], path, adapter[1], adapter[2])
        else:
            status, body = self.forward(kube[0], path, kube[1], kube[2])
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class KubectlTest(unittest.TestCase):
    def kubectl(self, *args):
        aggregator = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Aggregator)
        threading.Thread(target=aggregator.serve_forever, daemon=True).start()
        try:
            return subprocess.run(
                ["kubectl", "--server", "http://127.0.0.1:%d" % aggregator.server_address[1],
                 "--kubeconfig", os.devnull, *args],
                capture_output=True, text=True, timeout=120)
        finally:
            aggregator.shutdown()
            aggregator.server_close()

    def test_kubectl_top_pod(self):
        result = self.kubectl("top", "pod", "-n", "default")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = [line.split() for line in result.stdout.splitlines()]
        self.assertEqual(rows[0], ["NAME", "CPU(cores)", "MEMORY(bytes)"])
        # kubectl sums the containers and writes millicores rounded up and whole MiB.
        expected = {}
        for namespace, pod, _, _, phase, containers in PODS:
            if namespace == "default" and containers:
                expected[pod] = (sum(c for c, _ in containers.values()) * 1000,
                                 sum(m for _, m in containers.values()) // 2**20)
        self.assertEqual([row[0] for row in rows[1:]], sorted(expected))
        for name, cpu, memory in rows[1:]:
            self.assertAlmostEqual(int(cpu.rstrip("m")), expected[name][0], delta=1.01)
            self.assertEqual(memory, "%dMi" % expected[name][1])

    def test_kubectl_top_node(self):
        result = self.kubectl("top", "node")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[1:]}
        self.assertEqual(sorted(rows), sorted(NODES))
        for node, usage in NODES.items():
            if usage is None:
                self.assertEqual(rows[node][1:], ["<unknown>"] * 4)
                continue
            busy, used = usage
            _, cpu, cpu_share, memory, memory_share = rows[node]
            self.assertAlmostEqual(int(cpu.rstrip("m")), busy * 1000, delta=1.01)
            self.assertEqual(cpu_share, "%d%%" % (int(cpu.rstrip("m")) * 100 // (NODE_CORES * 1000)))
            self.assertEqual(memory, "%dMi" % (used // 2**20))
            self.assertEqual(memory_share, "%d%%" % (used * 100 // MEM_TOTAL))

    def test_get_raw(self):
        code, out, err = ADAPTER.kubectl_raw(METRICS + "/namespaces/default/pods")
        self.assertEqual(code, 0, err)
        self.assertEqual([i["metadata"]["name"] for i in json.loads(out)["items"]],
                         ["web-1", "web-2"])


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
