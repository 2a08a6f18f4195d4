"""The adapter started exactly as the prometheus-community Helm chart's Deployment starts
prometheus-adapter (charts/prometheus-adapter 5.3.0, its default values, only the image
changed): the image's entrypoint given the chart's args, which begin with the word "/adapter";
the ConfigMap mounted at /etc/adapter in kubelet's atomic-writer layout; a read-only root with
/tmp (an emptyDir) the only writable path; a non-root uid (10001) that no passwd file names; the
service account's token and CA where kubelet mounts them, and KUBERNETES_SERVICE_HOST/PORT.
bubblewrap builds that file system view; the Kubernetes API is the fake one. The probes, the
discovery documents and a pods/* answer are checked as the kubelet, the aggregator and the HPA
would ask."""

import json
import os
import shutil
import signal
import subprocess
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG = os.path.join(harness.REPO, "config", "gpu-alibaba-exporter.yaml")
HPA_USER = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
HPA_TOKEN = "hpa-token"
CHART_UID = 10001  # the chart's securityContext.runAsUser

PROCS = EXPORTER = POD = None


def chart_args(port, prometheus_url):
    """The container args of the chart's deployment.yaml with the default values (listenPort
    becomes a free port here; the chart's prometheus.url/port/path make one URL)."""
    return ["/adapter",
            "--secure-port=%d" % port,
            "--cert-dir=/tmp/cert",
            "--prometheus-url=" + prometheus_url,
            "--metrics-relist-interval=1m",
            "--v=4",
            "--config=/etc/adapter/config.yaml"]


def configmap_volume(directory, text):
    """A directory as kubelet mounts a ConfigMap: the data in a timestamped directory,
    "..data" a symlink to it, and each key a symlink through "..data"."""
    version = "..2026_11_27_10_00_00.123456789"
    os.makedirs(os.path.join(directory, version))
    with open(os.path.join(directory, version, "config.yaml"), "w") as f:
        f.write(text)
    os.symlink(version, os.path.join(directory, "..data"))
    os.symlink("..data/config.yaml", os.path.join(directory, "config.yaml"))


class ChartPod:
    """The adapter in the file system view of the chart's pod (bubblewrap as root)."""

    def __init__(self, procs, kube, prometheus_url):
        self.port = harness.free_port()
        pod = os.path.join(procs.workdir, "pod")
        self.tmp = os.path.join(pod, "tmp")  # the emptyDir, seen from outside
        os.makedirs(self.tmp)
        os.chmod(self.tmp, 0o1777)
        config_dir = os.path.join(pod, "config")
        with open(CONFIG) as f:
            configmap_volume(config_dir, f.read())
        account = os.path.join(pod, "serviceaccount")
        os.makedirs(account)
        with open(os.path.join(account, "token"), "w") as f:
            f.write(harness.FakeKube.TOKEN)
        shutil.copy(os.path.join(kube.dir, "ca.crt"), os.path.join(account, "ca.crt"))
        for name in ("token", "ca.crt"):
            os.chmod(os.path.join(account, name), 0o644)

        sandbox = ["bwrap",
                   "--ro-bind", "/usr", "/usr",
                   "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                   "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
                   # the image's binary at the image's path
                   "--tmpfs", "/usr/local", "--perms", "0755", "--dir", "/usr/local/bin",
                   "--ro-bind", ARGS.binary, "/usr/local/bin/metrics-adapter",
                   "--perms", "0755", "--dir", "/etc",
                   "--ro-bind", config_dir, "/etc/adapter",
                   "--perms", "0755", "--dir", "/var",
                   "--perms", "0755", "--dir", "/var/run",
                   "--perms", "0755", "--dir", "/var/run/secrets",
                   "--perms", "0755", "--dir", "/var/run/secrets/kubernetes.io",
                   "--ro-bind", account, "/var/run/secrets/kubernetes.io/serviceaccount",
                   "--bind", self.tmp, "/tmp",
                   "--dev", "/dev", "--proc", "/proc",
                   "--remount-ro", "/",
                   "--setenv", "KUBERNETES_SERVICE_HOST", "127.0.0.1",
                   "--setenv", "KUBERNETES_SERVICE_PORT", str(kube.port),
                   "--",
                   "setpriv", "--reuid=%d" % CHART_UID, "--regid=%d" % CHART_UID,
                   "--clear-groups", "--inh-caps=-all", "--"]
        # The image's ENTRYPOINT, then the chart's args.
        argv = sandbox + ["/usr/local/bin/metrics-adapter"] + chart_args(self.port,
                                                                          prometheus_url)
        self.process = procs.spawn("chart-pod", argv, check_exit=True)
        self.procs = procs
        self.ca_file = os.path.join(self.tmp, "cert", "apiserver.crt")
        self.base = "https://127.0.0.1:%d" % self.port
        harness.wait_until(lambda: os.path.exists(self.ca_file) and self.get("/healthz")[0] == 200,
                           timeout=60, what="the chart pod's /healthz (log: %s)"
                           % self.process.log_path)
        self.kubeconfig = os.path.join(pod, "hpa-kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write(harness.KUBECONFIG_WITH_TOKEN % {"server": self.base, "ca": self.ca_file,
                                                     "token": HPA_TOKEN})

    def get(self, path):
        """The kubelet's probe: HTTPS, no credentials."""
        return harness.https_get(self.base + path, self.ca_file)

    def kubectl_raw(self, path):
        result = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, "get", "--raw", path],
                                capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout, result.stderr

    def adapter_pid(self):
        """bwrap's child is the adapter (setpriv executes it)."""
        path = "/proc/%d/task/%d/children" % (self.process.pid, self.process.pid)
        with open(path) as f:
            return int(f.read().split()[0])

    def stop(self):
        """SIGTERM to the adapter, as kubelet stops a container; bwrap exits with its status."""
        if self.process.poll() is None:
            os.kill(self.adapter_pid(), signal.SIGTERM)
            self.process.wait(30)


def setUpModule():
    global PROCS, EXPORTER, POD
    if shutil.which("bwrap") is None:
        raise unittest.SkipTest("bubblewrap (scripts/install-deps.sh installs it) is missing")
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        prometheus = harness.Prometheus(PROCS, EXPORTER.port)
        gpus = sum(1 for name, _, _ in EXPORTER.samples() if name == "nvidia_gpu_duty_cycle")
        prometheus.wait_for_series("nvidia_gpu_duty_cycle", gpus)
        kube = harness.FakeKube(PROCS, {"auth": {
            "tokens": {HPA_TOKEN: {"username": HPA_USER,
                                   "groups": ["system:serviceaccounts", "system:authenticated"]}},
            "allow": [{"user": HPA_USER}]}})
        POD = ChartPod(PROCS, kube, prometheus.url)
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    POD.stop()
    PROCS.stop_all()


class HelmChartPodTest(unittest.TestCase):
    def test_the_leading_adapter_word_is_ignored_with_one_warning(self):
        log = PROCS.log(POD.process)
        self.assertEqual(1, log.count('ignoring "/adapter"'), log[-3000:])
        self.assertIn("custom.metrics.k8s.io", log)

    def test_probes_answer_on_the_https_port_without_credentials(self):
        for path in ("/healthz", "/livez", "/readyz"):
            harness.wait_until(lambda: POD.get(path)[0] == 200, timeout=60,
                               what=path + " to answer 200")

    def test_the_self_signed_certificate_is_in_the_cert_dir_on_the_emptydir(self):
        self.assertTrue(os.path.exists(os.path.join(POD.tmp, "cert", "apiserver.key")))
        self.assertEqual(CHART_UID, os.stat(POD.ca_file).st_uid)

    def test_discovery_as_the_aggregator_lists_it(self):
        code, out, err = POD.kubectl_raw("/apis/custom.metrics.k8s.io/v1beta1")
        self.assertEqual(0, code, err)
        self.assertIn("pods/duty_cycle_current", [r["name"] for r in json.loads(out)["resources"]])

    def test_the_hpas_pods_wildcard_answer_matches_the_exporter(self):
        groups = EXPORTER.grouped("nvidia_gpu_duty_cycle", "pod_name")
        expected = {pod: harness.milli_quantity(samples[-1][1])
                    for pod, samples in groups.items()
                    if samples[0][0]["namespace_name"] == "default"}
        self.assertTrue(expected)
        path = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/duty_cycle_current"
        harness.wait_until(lambda: POD.kubectl_raw(path)[0] == 0, timeout=60,
                           what="the first pods/* answer")
        code, out, err = POD.kubectl_raw(path)
        self.assertEqual(0, code, err)
        got = {item["describedObject"]["name"]: item["value"] for item in json.loads(out)["items"]}
        self.assertEqual(expected, got)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
