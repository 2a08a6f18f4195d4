"""End to end for the LLM inference presets (docs/llm-inference.md): simulated vLLM, inference
gateway (endpoint picker) and Triton exporters serving the projects' real series names (with
`:`), label sets, counters and histograms; a real Prometheus scraping them, with ten minutes of
the same functions backfilled so rate() over the presets' 2-minute windows sees whole windows;
the fake Kubernetes API holding the pods and the InferencePool CRD; one adapter per preset,
asked through `kubectl get --raw` with the HPA's selectors. Every expected value is computed from
the simulators' definitions below. Also check-config and explain on each preset."""

import json
import os
import re
import subprocess
import time
import unittest
import urllib.parse

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG_DIR = os.path.join(harness.REPO, "config")
PRESETS = {name: os.path.join(CONFIG_DIR, name + ".yaml")
           for name in ("llm-vllm", "llm-d-epp", "triton")}
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"
POOL_RESOURCE = "inferencepools.inference.networking.k8s.io"
START = time.time()

# vLLM pods in namespace llm: (pod, Deployment label, vLLM generation, {engine: engine state}).
# Engine state: waiting, running, KV-cache usage, TTFT requests per second, mean TTFT seconds.
# "v0" pods export vllm:gpu_cache_usage_perc and only the model_name label (vllm/engine/
# metrics.py); "v1" pods vllm:kv_cache_usage_perc and model_name + engine (vllm/v1/metrics/
# loggers.py). vllm-llama-2 runs two engines (data parallelism); vllm-llama-3 is idle: its TTFT
# counters do not move, so its mean TTFT is 0, not 0/0.
VLLM = [
    ("vllm-llama-0", "vllm-llama", "v1", {"0": (3, 12, 0.41, 2.0, 0.35)}),
    ("vllm-llama-1", "vllm-llama", "v0", {"0": (7, 16, 0.83, 1.5, 1.2)}),
    ("vllm-llama-2", "vllm-llama", "v1", {"0": (1, 8, 0.25, 1.0, 0.2),
                                          "1": (4, 9, 0.64, 0.5, 0.6)}),
    ("vllm-llama-3", "vllm-llama", "v1", {"0": (0, 0, 0.0, 0.0, 0.0)}),
    ("vllm-mistral-0", "vllm-mistral", "v1", {"0": (9, 20, 0.9, 3.0, 2.5)}),
]
TTFT_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# Endpoint pickers in namespace llm: pool -> (metric prefix, queue, running, KV, ready pods).
# llama-pool's EPP is gateway-api-inference-extension's (inference_pool_*), mistral-pool's is
# llm-d-router's (llm_d_epp_*, ready_endpoints).
POOLS = {"llama-pool": ("inference_pool", 6.5, 11.25, 0.55, 4),
         "mistral-pool": ("llm_d_epp", 2.0, 20.0, 0.9, 1)}
# Flow-control queue per (pool, model, fairness id, priority), both generations of name.
FLOW_QUEUE = [("llama-pool", "llama", "tenant-a", "0", 3), ("llama-pool", "llama", "tenant-b", "1", 5),
              ("llama-pool", "llama-lora", "tenant-a", "0", 2), ("mistral-pool", "mistral", "t", "0", 7)]
# Per model: (request counter name, requests per second, running requests gauge name, running).
MODELS = {"llama": ("inference_objective_request_total", 4.0,
                    "inference_objective_running_requests", 13),
          "mistral": ("llm_d_epp_request_total", 1.5, "llm_d_epp_request_running", 6)}

# Triton pods in namespace triton: pod -> {model: (requests/s, batch size, queue us per request,
# pending)}.
TRITON = {"triton-0": {"resnet": (10.0, 4, 250.0, 3), "bert": (2.0, 1, 1800.0, 1)},
          "triton-1": {"resnet": (6.0, 8, 900.0, 0)}}


def counter(rate, t):
    """A counter that has grown at `rate` per second since well before the history starts."""
    return rate * (t - START + 1000)


def vllm_series(t):
    out = []
    for pod, _, generation, engines in VLLM:
        model = "meta-llama/Llama-3.1-8B" if "llama" in pod else "mistralai/Mistral-7B"
        for engine, (waiting, running, kv, ttft_rate, ttft_mean) in engines.items():
            labels = 'model_name="%s",namespace="llm",pod="%s"' % (model, pod)
            if generation == "v1":
                labels = 'engine="%s",' % engine + labels
            kv_name = "vllm:kv_cache_usage_perc" if generation == "v1" else \
                "vllm:gpu_cache_usage_perc"
            out += [("vllm:num_requests_waiting", "gauge", labels, waiting),
                    ("vllm:num_requests_running", "gauge", labels, running),
                    (kv_name, "gauge", labels, kv)]
            count = counter(ttft_rate, t)
            family = "vllm:time_to_first_token_seconds"
            for le in TTFT_BUCKETS + (float("inf"),):
                bound = "+Inf" if le == float("inf") else repr(le)
                out.append((family, "histogram", labels + ',le="%s"' % bound,
                            count if le >= ttft_mean else 0.0))
            out += [(family, "histogram_sum", labels, count * ttft_mean),
                    (family, "histogram_count", labels, count)]
    return out


def epp_series(t):
    out = []
    for pool, (prefix, queue, running, kv, ready) in POOLS.items():
        labels = 'name="%s",namespace="llm",pod="epp-%s-0"' % (pool, pool)
        ready_name = "ready_pods" if prefix == "inference_pool" else "ready_endpoints"
        out += [(prefix + "_average_queue_size", "gauge", labels, queue),
                (prefix + "_average_running_requests", "gauge", labels, running),
                (prefix + "_average_kv_cache_utilization", "gauge", labels, kv),
                ("%s_%s" % (prefix, ready_name), "gauge", labels, ready)]
    for pool, model, fairness, priority, size in FLOW_QUEUE:
        prefix = POOLS[pool][0]
        name = ("inference_extension_flow_control_queue_size" if prefix == "inference_pool"
                else "llm_d_epp_flow_control_queue_size")
        labels = ('fairness_id="%s",inference_pool="%s",model_name="%s",namespace="llm",'
                  'pod="epp-%s-0",priority="%s",target_model_name="%s"'
                  % (fairness, pool, model, pool, priority, model))
        out.append((name, "gauge", labels, size))
    for model, (requests, rate, running_name, running) in MODELS.items():
        pool = "llama-pool" if model == "llama" else "mistral-pool"
        labels = ('model_name="%s",namespace="llm",pod="epp-%s-0",priority="0",'
                  'target_model_name="%s"' % (model, pool, model))
        out += [(requests, "counter", labels, counter(rate, t)),
                (running_name, "gauge", 'model_name="%s",namespace="llm",pod="epp-%s-0"'
                 % (model, pool), running)]
    return out


def triton_series(t):
    out = []
    for pod, models in TRITON.items():
        for model, (requests, batch, queue_us, pending) in models.items():
            labels = 'model="%s",namespace="triton",pod="%s",version="1"' % (model, pod)
            out += [("nv_inference_request_success", "counter", labels, counter(requests, t)),
                    ("nv_inference_count", "counter", labels, counter(requests * batch, t)),
                    ("nv_inference_queue_duration_us", "counter", labels,
                     counter(requests * queue_us, t)),
                    ("nv_inference_pending_request_count", "gauge", labels, pending)]
    return out


def series_at(t):
    return vllm_series(t) + epp_series(t) + triton_series(t)


SUFFIX = {"histogram": "_bucket", "histogram_sum": "_sum", "histogram_count": "_count"}


def exposition():
    """What the three exporters serve at a scrape, in Prometheus text format (vLLM's histogram
    as a histogram family, Triton's counters without a _total suffix, as Triton writes them)."""
    families = {}
    for family, kind, labels, value in series_at(time.time()):
        name = family + SUFFIX.get(kind, "")
        families.setdefault(family, (kind.split("_")[0], []))[1].append(
            "%s{%s} %r\n" % (name, labels, float(value)))
    return "".join("# TYPE %s %s\n" % (family, kind) + "".join(lines)
                   for family, (kind, lines) in families.items())


def write_history(path, port):
    """The ten minutes before the test as OpenMetrics (every sample name its own gauge family,
    as promtool wants), with the labels the scrapes add."""
    scrape = 'instance="127.0.0.1:%d",job="gpu",service="dcgm-exporter"' % port
    families = {}
    # One sample a second, as the scrapes: rate() extrapolates to its window's start only from
    # a sample within 1.1 average intervals of it, and 10 s between backfilled samples against
    # 1 s between scrapes left a window that starts in the backfill up to 8 % short.
    for t in range(int(START) - 600, int(START) - 20):
        for family, kind, labels, value in series_at(t):
            name = family + SUFFIX.get(kind, "")
            families.setdefault(name, []).append(
                (labels, t, "%s{%s,%s} %r %d\n" % (name, labels, scrape, float(value), t)))
    with open(path, "w") as f:
        for name in sorted(families):
            f.write("# TYPE %s gauge\n" % name)
            f.writelines(line for _, _, line in sorted(families[name]))
        f.write("# EOF\n")


def cluster_objects():
    pods = [{"name": pod, "namespace": "llm", "labels": {"app": app}} for pod, app, _, _ in VLLM]
    pods += [{"name": pod, "namespace": "triton", "labels": {"app": "triton"}} for pod in TRITON]
    return {"pods": pods, "namespaces": [{"name": "llm"}, {"name": "triton"}]}


INFERENCE_POOL_CRD = {
    "group": "inference.networking.k8s.io", "version": "v1", "plural": "inferencepools",
    "singular": "inferencepool", "kind": "InferencePool", "namespaced": True,
    "objects": [{"name": pool, "namespace": "llm", "labels": {}} for pool in POOLS]}


PROCS = SIMULATOR = PROMETHEUS = KUBE = None
ADAPTERS = {}


def setUpModule():
    global PROCS, SIMULATOR, PROMETHEUS, KUBE
    PROCS = harness.Processes()
    try:
        SIMULATOR = harness.FunctionExporter(exposition)
        history = os.path.join(PROCS.workdir, "history.om")
        write_history(history, SIMULATOR.port)
        PROMETHEUS = harness.Prometheus(PROCS, SIMULATOR.port, backfill=history)
        PROMETHEUS.wait_for_scrapes()
        KUBE = harness.FakeKube(PROCS, cluster_objects())
        KUBE.add_crd(INFERENCE_POOL_CRD)
        for name, path in PRESETS.items():
            ADAPTERS[name] = harness.Adapter(
                PROCS, ARGS.binary, path, PROMETHEUS.url,
                extra_args=["--lister-kubeconfig=" + KUBE.kubeconfig])
    except Exception:
        tearDownModule()
        raise


def tearDownModule():
    if SIMULATOR:
        SIMULATOR.stop()
    if PROCS:
        PROCS.stop_all()


def quantity(text):
    """A Kubernetes quantity as the adapter writes it (plain, m, k or M) as a number."""
    for suffix, scale in (("m", 1e-3), ("k", 1e3), ("M", 1e6)):
        if text.endswith(suffix):
            return float(text[:-1]) * scale
    return float(text)


def raw(adapter, path):
    """The JSON answer of `kubectl get --raw path`, waiting out the first relist (404 while
    the adapter has not discovered the metric yet)."""
    answer = {}

    def served():
        code, out, err = adapter.kubectl_raw(path)
        answer.update(code=code, out=out, err=err)
        return code == 0
    harness.wait_until(served, timeout=30, what="%s to be served (%s)" % (path, answer))
    return json.loads(answer["out"])


class LlmInferenceCase(unittest.TestCase):
    def assertValue(self, text, expected):
        self.assertNumber(quantity(text), expected)

    def assertNumber(self, got, expected):
        # Quantities carry three decimals (milli units): allow that much, and 0.1 % for rates.
        self.assertAlmostEqual(got, expected, delta=0.0011 + abs(expected) * 1e-3)

    def assertPodValues(self, adapter, namespace, metric, selector, expected, metric_selector=""):
        path = "%s/namespaces/%s/pods/*/%s?labelSelector=%s" % (
            CUSTOM, namespace, metric, urllib.parse.quote(selector))
        if metric_selector:
            path += "&metricLabelSelector=" + urllib.parse.quote(metric_selector)
        body = raw(adapter, path)
        got = {i["describedObject"]["name"]: i["value"] for i in body["items"]}
        self.assertEqual(sorted(got), sorted(expected), body)
        for pod, value in expected.items():
            with self.subTest(metric=metric, pod=pod):
                self.assertValue(got[pod], value)
        for item in body["items"]:
            self.assertEqual(item["metric"]["name"], metric)
            self.assertEqual(item["describedObject"]["kind"], "Pod")


def llama_engines():
    return {pod: engines for pod, app, _, engines in VLLM if app == "vllm-llama"}


class VllmTest(LlmInferenceCase):
    def test_requests_waiting_and_running_summed_over_engines(self):
        for metric, index in (("vllm_num_requests_waiting", 0), ("vllm_num_requests_running", 1)):
            expected = {pod: sum(e[index] for e in engines.values())
                        for pod, engines in llama_engines().items()}
            self.assertPodValues(ADAPTERS["llm-vllm"], "llm", metric, "app=vllm-llama", expected)

    def test_kv_cache_usage_under_both_names_fullest_engine(self):
        expected = {pod: max(e[2] for e in engines.values())
                    for pod, engines in llama_engines().items()}
        self.assertPodValues(ADAPTERS["llm-vllm"], "llm", "vllm_kv_cache_usage_perc",
                             "app=vllm-llama", expected)

    def test_mean_time_to_first_token_from_the_histogram(self):
        expected = {}
        for pod, engines in llama_engines().items():
            requests = sum(e[3] for e in engines.values())
            seconds = sum(e[3] * e[4] for e in engines.values())
            expected[pod] = seconds / requests if requests else 0.0
        self.assertEqual(expected["vllm-llama-3"], 0.0)  # idle: 0, not left out as 0/0
        self.assertPodValues(ADAPTERS["llm-vllm"], "llm", "vllm_time_to_first_token_seconds_avg",
                             "app=vllm-llama", expected)

    def test_namespace_total_waiting(self):
        body = raw(ADAPTERS["llm-vllm"], CUSTOM + "/namespaces/llm/metrics/vllm_num_requests_waiting")
        self.assertEqual(len(body["items"]), 1)
        self.assertEqual(body["items"][0]["describedObject"]["kind"], "Namespace")
        self.assertValue(body["items"][0]["value"],
                         sum(e[0] for _, _, _, engines in VLLM for e in engines.values()))


def pool_expectations():
    """{(pool, metric): value} of every pool gauge, under the preset's names."""
    out = {}
    for pool, (prefix, queue, running, kv, ready) in POOLS.items():
        for metric, value in (("average_queue_size", queue), ("average_running_requests", running),
                              ("average_kv_cache_utilization", kv), ("ready_pods", ready)):
            out[(pool, "inference_pool_" + metric)] = value
    for pool in POOLS:
        out[(pool, "inference_pool_flow_control_queue_size")] = sum(
            q[4] for q in FLOW_QUEUE if q[0] == pool)
    return out


class GatewayTest(LlmInferenceCase):
    def test_object_metrics_on_the_inference_pool(self):
        for (pool, metric), value in sorted(pool_expectations().items()):
            with self.subTest(pool=pool, metric=metric):
                body = raw(ADAPTERS["llm-d-epp"], "%s/namespaces/llm/%s/%s/%s" % (
                    CUSTOM, POOL_RESOURCE, pool, metric))
                self.assertEqual(len(body["items"]), 1, body)
                item = body["items"][0]
                self.assertEqual(item["describedObject"], {
                    "kind": "InferencePool", "namespace": "llm", "name": pool,
                    "apiVersion": "inference.networking.k8s.io/v1"})
                self.assertValue(item["value"], value)

    def test_external_pool_metrics_selected_by_pool_name(self):
        for (pool, metric), value in sorted(pool_expectations().items()):
            label = "inference_pool" if "flow_control" in metric else "name"
            with self.subTest(pool=pool, metric=metric):
                body = raw(ADAPTERS["llm-d-epp"], "%s/namespaces/llm/%s?labelSelector=%s" % (
                    EXTERNAL, metric, urllib.parse.quote("%s=%s" % (label, pool))))
                # The HPA adds the items up (the flow-control queue has one per model).
                self.assertTrue(body["items"], body)
                self.assertNumber(sum(quantity(i["value"]) for i in body["items"]), value)
                for item in body["items"]:
                    self.assertEqual(item["metricLabels"][label], pool)

    def test_flow_control_queue_per_model(self):
        body = raw(ADAPTERS["llm-d-epp"], "%s/namespaces/llm/inference_pool_flow_control_queue_size"
                   "?labelSelector=%s" % (EXTERNAL, urllib.parse.quote("model_name=llama-lora")))
        self.assertEqual([(i["metricLabels"]["inference_pool"], quantity(i["value"]))
                          for i in body["items"]], [("llama-pool", 2.0)])

    def test_per_model_running_requests_and_request_rate(self):
        for model, (_, rate, _, running) in MODELS.items():
            selector = urllib.parse.quote("model_name=" + model)
            for metric, value in (("inference_objective_running_requests", running),
                                  ("inference_objective_requests_per_second", rate)):
                with self.subTest(model=model, metric=metric):
                    body = raw(ADAPTERS["llm-d-epp"], "%s/namespaces/llm/%s?labelSelector=%s" % (
                        EXTERNAL, metric, selector))
                    self.assertEqual(len(body["items"]), 1, body)
                    self.assertEqual(body["items"][0]["metricLabels"], {"model_name": model})
                    self.assertValue(body["items"][0]["value"], value)

    def test_another_namespace_sees_nothing(self):
        body = raw(ADAPTERS["llm-d-epp"], "%s/namespaces/triton/inference_pool_average_queue_size"
                   % EXTERNAL)
        self.assertEqual(body["items"], [])


class TritonTest(LlmInferenceCase):
    def expected(self, value_of, model=None):
        out = {}
        for pod, models in TRITON.items():
            chosen = [m for name, m in models.items() if model in (None, name)]
            if chosen:
                out[pod] = value_of(chosen)
        return out

    def test_every_metric_per_pod_and_per_model(self):
        def queue(ms):
            requests = sum(m[0] for m in ms)
            return sum(m[0] * m[2] for m in ms) / requests
        metrics = {
            "triton_queue_duration_us_avg": queue,
            "triton_inference_count_per_second": lambda ms: sum(m[0] * m[1] for m in ms),
            "triton_inference_request_success_per_second": lambda ms: sum(m[0] for m in ms),
            "triton_pending_requests": lambda ms: sum(m[3] for m in ms),
        }
        for metric, value_of in metrics.items():
            self.assertPodValues(ADAPTERS["triton"], "triton", metric, "app=triton",
                                 self.expected(value_of))
            # The HPA's metric selector picks one model.
            self.assertPodValues(ADAPTERS["triton"], "triton", metric, "app=triton",
                                 self.expected(value_of, "bert"), metric_selector="model=bert")


def run(*args):
    return subprocess.run([ARGS.binary] + list(args), capture_output=True, text=True, timeout=60)


# Every metric each preset declares: (metric, explain arguments, text its PromQL must contain).
def vllm_declared(metric, *promql):
    return (metric, ["--namespace", "llm", "--selector", "app=vllm-llama"], promql)


def triton_declared(metric, *promql):
    return (metric, ["--namespace", "triton", "--selector", "app=triton"], promql)


def epp_declared(metric, selector, *promql):
    return (metric, ["--external", "--namespace", "llm", "--metric-selector", selector], promql)


def pool_gauge(metric, old, new):
    return epp_declared(metric, "name=llama-pool", 'max(%s{name="llama-pool",namespace="llm"})'
                        % new, 'max(%s{name="llama-pool",namespace="llm"})' % old)


DECLARED = {
    "llm-vllm": [
        vllm_declared("vllm_num_requests_waiting", "sum(vllm:num_requests_waiting{"),
        vllm_declared("vllm_num_requests_running", "sum(vllm:num_requests_running{"),
        vllm_declared("vllm_kv_cache_usage_perc", "max(vllm:kv_cache_usage_perc{",
                      "or max(vllm:gpu_cache_usage_perc{"),
        vllm_declared("vllm_time_to_first_token_seconds_avg",
                      "rate(vllm:time_to_first_token_seconds_sum{",
                      "rate(vllm:time_to_first_token_seconds_count{")],
    "triton": [
        triton_declared("triton_queue_duration_us_avg", "rate(nv_inference_queue_duration_us{",
                        "rate(nv_inference_request_success{"),
        triton_declared("triton_inference_count_per_second", "rate(nv_inference_count{"),
        triton_declared("triton_inference_request_success_per_second",
                        "rate(nv_inference_request_success{"),
        triton_declared("triton_pending_requests", "sum(nv_inference_pending_request_count{")],
    "llm-d-epp": [
        pool_gauge("inference_pool_average_queue_size", "inference_pool_average_queue_size",
                   "llm_d_epp_average_queue_size"),
        pool_gauge("inference_pool_average_running_requests",
                   "inference_pool_average_running_requests", "llm_d_epp_average_running_requests"),
        pool_gauge("inference_pool_average_kv_cache_utilization",
                   "inference_pool_average_kv_cache_utilization",
                   "llm_d_epp_average_kv_cache_utilization"),
        pool_gauge("inference_pool_ready_pods", "inference_pool_ready_pods",
                   "llm_d_epp_ready_endpoints"),
        epp_declared("inference_pool_flow_control_queue_size", "inference_pool=llama-pool",
                     "sum(llm_d_epp_flow_control_queue_size{",
                     "sum(inference_extension_flow_control_queue_size{"),
        epp_declared("inference_objective_running_requests", "model_name=llama",
                     "sum(llm_d_epp_request_running{", "sum(inference_objective_running_requests{"),
        epp_declared("inference_objective_requests_per_second", "model_name=mistral",
                     "rate(llm_d_epp_request_total{", "rate(inference_objective_request_total{",
                     "rate(inference_model_request_total{")],
}


class ToolsTest(unittest.TestCase):
    def test_check_config_accepts_every_preset_and_lists_its_metrics(self):
        for preset, path in PRESETS.items():
            with self.subTest(preset=preset):
                result = run("check-config", path, "--prometheus-url", PROMETHEUS.url)
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                self.assertRegex(result.stdout, r"valid: [1-9]\d* rules")
                listed = {line.strip() for line in result.stdout.splitlines()
                          if line.startswith("  ")}
                for metric, args, _ in DECLARED[preset]:
                    self.assertIn(metric if "--external" in args else "pods/" + metric, listed)
        # The Object rules name a CRD, which check-config's built-in resource table lacks: a
        # warning that names them, not an error (the server enables them when the CRD exists).
        result = run("check-config", PRESETS["llm-d-epp"])
        self.assertEqual(result.returncode, 0, result.stderr)
        disabled = re.findall(r'warning: .*: (rules\[\d\]).* unknown resource "%s"; the rule is '
                              'disabled' % re.escape(POOL_RESOURCE), result.stdout + result.stderr)
        self.assertEqual(disabled, ["rules[%d]" % i for i in range(5)])

    def test_explain_shows_the_promql_of_every_preset_metric(self):
        for preset, declared in DECLARED.items():
            for metric, args, texts in declared:
                with self.subTest(preset=preset, metric=metric):
                    result = run("explain", "--config", PRESETS[preset], "--prometheus-url",
                                 PROMETHEUS.url, "--metric", metric, *args)
                    self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                    promql = [line for line in result.stdout.splitlines()
                              if line.startswith("PromQL: ")]
                    self.assertEqual(len(promql), 1, result.stdout)
                    for text in texts:
                        self.assertIn(text, promql[0])
                    self.assertNotIn("<<", promql[0])


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
