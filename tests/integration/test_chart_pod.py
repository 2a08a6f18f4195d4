"""The pod of charts/metrics-adapter started as the kubelet would start it, from what `helm
template` renders and nothing else: the image's entrypoint with the container's args, the
rendered Secret and ConfigMaps mounted read-only in kubelet's atomic-writer layout with the
Secret's defaultMode and the pod's fsGroup as the files' group, the pod's runAsUser and
runAsGroup, a read-only root with no writable path at all, the service account's token where
kubelet mounts it. bubblewrap builds that view (as test_helm_chart.py does for the
prometheus-community chart); the Kubernetes API is fake_kube.py, Prometheus a real one scraping
the simulated exporter. Checked as their callers ask: the probes as the kubelet (HTTPS, no
credentials), discovery and a pods/* answer as the aggregator (verifying the certificate with
the APIService's caBundle for the Service's name), the `helm test` hook's command, and the
self-metrics the chart's alerts use."""

import base64
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import unittest
import urllib.request

import chart_support
import harness
import test_deploy

ARGS, UNITTEST_ARGV = harness.parse_args()
HPA_USER = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
HPA_TOKEN = "hpa-token"
TEST_USER = "system:serviceaccount:custom-metrics:metrics-adapter-test"
TEST_TOKEN = "helm-test-token"
ENTRYPOINT = "/usr/local/bin/metrics-adapter"  # the Dockerfile's

PROCS = EXPORTER = POD = None


def kubelet_volume(directory, files, mode, group):
    """A Secret or ConfigMap volume as kubelet writes it: the data in a timestamped directory,
    "..data" a symlink to it, each key a symlink through "..data"; files with the volume's
    defaultMode, owned by root and by the pod's fsGroup."""
    version = "..2026_11_28_10_00_00.123456789"
    os.makedirs(os.path.join(directory, version))
    for name, content in files.items():
        path = os.path.join(directory, version, name)
        with open(path, "wb") as f:
            f.write(content)
        os.chown(path, 0, group)
        os.chmod(path, mode)
        os.symlink(os.path.join("..data", name), os.path.join(directory, name))
    os.symlink(version, os.path.join(directory, "..data"))


class ChartPod:
    """The adapter in the file-system view the chart's pod spec describes."""

    def __init__(self, procs, kube, objects):
        self.objects = objects
        spec = test_deploy.deployment(objects)["spec"]["template"]["spec"]
        container = test_deploy.container(objects)
        context = spec["securityContext"]
        self.uid, self.gid = context["runAsUser"], context["runAsGroup"]
        root = os.path.join(procs.workdir, "chart-pod")
        sandbox = ["bwrap",
                   "--ro-bind", "/usr", "/usr",
                   "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                   "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
                   "--tmpfs", "/usr/local", "--perms", "0755", "--dir", "/usr/local/bin",
                   "--ro-bind", ARGS.binary, ENTRYPOINT,
                   "--remount-ro", "/usr/local",
                   "--dev", "/dev", "--proc", "/proc"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        for mount in container["volumeMounts"]:
            volume = volumes[mount["name"]]
            mode = (volume.get("secret") or volume.get("configMap")).get("defaultMode", 0o644)
            directory = os.path.join(root, mount["name"])
            kubelet_volume(directory, chart_support.volume_files(objects, volume), mode,
                           context["fsGroup"])
            sandbox += self.parents(mount["mountPath"]) + ["--ro-bind", directory,
                                                            mount["mountPath"]]
        account = os.path.join(root, "serviceaccount")
        with open(os.path.join(kube.dir, "ca.crt"), "rb") as f:
            kubelet_volume(account, {"token": harness.FakeKube.TOKEN.encode(), "ca.crt": f.read()},
                           0o644, context["fsGroup"])
        sandbox += self.parents("/var/run/secrets/kubernetes.io/serviceaccount") + [
            "--ro-bind", account, "/var/run/secrets/kubernetes.io/serviceaccount",
            "--remount-ro", "/",
            "--setenv", "KUBERNETES_SERVICE_HOST", "127.0.0.1",
            "--setenv", "KUBERNETES_SERVICE_PORT", str(kube.port), "--",
            "setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid,
            "--groups=%d" % context["fsGroup"], "--inh-caps=-all", "--"]
        self.process = procs.spawn("chart-pod", sandbox + [ENTRYPOINT] + container["args"],
                                   check_exit=True)
        self.port = test_deploy.flag_values(container["args"])["secure-port"]
        self.base = "https://127.0.0.1:%s" % self.port
        harness.wait_until(lambda: self.probe("/livez")[0] == 200, timeout=60,
                           what="the chart pod's /livez (log: %s)" % self.process.log_path)
        self.ca_file = os.path.join(root, "apiservice-ca.crt")
        apiservice = next(o for o in objects if o["kind"] == "APIService")
        with open(self.ca_file, "wb") as f:
            f.write(base64.b64decode(apiservice["spec"]["caBundle"]))
        self.server_name = "%s.%s.svc" % (apiservice["spec"]["service"]["name"],
                                          apiservice["spec"]["service"]["namespace"])

    @staticmethod
    def parents(path):
        """bwrap --dir for each directory above a mount point, as the image has them."""
        parts = path.strip("/").split("/")[:-1]
        return [arg for i in range(len(parts))
                for arg in ("--perms", "0755", "--dir", "/" + "/".join(parts[:i + 1]))]

    def probe(self, path):
        """As the kubelet probes: HTTPS without verifying the certificate, no credentials."""
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.urlopen(self.base + path, timeout=10, context=context) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def kubeconfig(self, token):
        """What the aggregator does, as a kubeconfig: dial the pod, verify its certificate with
        the APIService's caBundle for the Service's DNS name."""
        path = os.path.join(PROCS.workdir, "aggregator-%s.kubeconfig" % token)
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: pod\n  cluster:\n"
                    "    server: %s\n    certificate-authority: %s\n    tls-server-name: %s\n"
                    "users:\n- name: u\n  user: {token: %s}\ncontexts:\n- name: pod\n"
                    "  context: {cluster: pod, user: u}\ncurrent-context: pod\n"
                    % (self.base, self.ca_file, self.server_name, token))
        return path

    def kubectl(self, token, *args):
        return subprocess.run([harness.modern_tool("kubectl"), "--kubeconfig",
                               self.kubeconfig(token), *args],
                              capture_output=True, text=True, timeout=60)

    def stop(self):
        """SIGTERM to the adapter (bwrap's child's child), as kubelet stops a container."""
        if self.process.poll() is None:
            with open("/proc/%d/task/%d/children" % (self.process.pid, self.process.pid)) as f:
                os.kill(int(f.read().split()[0]), signal.SIGTERM)
            self.process.wait(30)


def setUpModule():
    global PROCS, EXPORTER, POD
    if shutil.which("bwrap") is None:
        raise unittest.SkipTest("bubblewrap (scripts/install-deps.sh installs it) is missing")
    if os.geteuid() != 0:
        raise unittest.SkipTest("needs root: the pod's files belong to root and its fsGroup")
    PROCS = harness.Processes()
    try:
        EXPORTER = harness.Exporter(PROCS, mode="static")
        prometheus = harness.Prometheus(PROCS, EXPORTER.port)
        gpus = sum(1 for name, _, _ in EXPORTER.samples() if name == "nvidia_gpu_duty_cycle")
        prometheus.wait_for_series("nvidia_gpu_duty_cycle", gpus)
        groups = ["system:serviceaccounts", "system:authenticated"]
        kube = harness.FakeKube(PROCS, {"auth": {
            "tokens": {HPA_TOKEN: {"username": HPA_USER, "groups": groups},
                       TEST_TOKEN: {"username": TEST_USER, "groups": groups}},
            "allow": [{"user": HPA_USER}, {"user": TEST_USER}]}})
        # The chart's values for this cluster: its Prometheus, the Alibaba exporter's rules,
        # a port of the test's (the chart's own knob), audit on so its metrics exist.
        objects = chart_support.Helm(PROCS.workdir).template(PROCS.workdir, sets=[
            "prometheus.url=" + prometheus.url, "config.presets={alibaba}",
            "securePort=%d" % harness.free_port(), "audit.enabled=true",
            "prometheusRule.enabled=true"])
        POD = ChartPod(PROCS, kube, objects)
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    POD.stop()
    PROCS.stop_all()


class ChartPodTest(unittest.TestCase):
    def test_the_probes_answer_as_the_pod_spec_asks_them(self):
        container = test_deploy.container(POD.objects)
        for probe in ("livenessProbe", "readinessProbe"):
            get = container[probe]["httpGet"]
            self.assertEqual(get["scheme"], "HTTPS")
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            self.assertEqual(str(ports[get["port"]]), POD.port)
            harness.wait_until(lambda: POD.probe(get["path"])[0] == 200, timeout=60,
                               what=get["path"] + " to answer 200")

    def test_the_adapter_runs_as_the_pods_user_with_nothing_writable(self):
        with open("/proc/%d/task/%d/children" % (POD.process.pid, POD.process.pid)) as f:
            pid = int(f.read().split()[0])
        with open("/proc/%d/status" % pid) as f:
            status = f.read()
        self.assertRegex(status, r"\nUid:\t%d\t" % POD.uid)
        self.assertRegex(status, r"\nGid:\t%d\t" % POD.gid)
        with open("/proc/%d/mounts" % pid) as f:
            writable = [line.split()[1] for line in f
                        if line.split()[3].split(",")[0] == "rw"
                        and line.split()[1] not in ("/dev", "/proc")
                        and not line.split()[1].startswith(("/dev/", "/proc/"))]
        self.assertEqual(writable, [])

    def test_discovery_through_the_aggregators_eyes(self):
        # The Service sends the aggregator's requests only to a Ready pod: after the first relist.
        harness.wait_until(lambda: POD.probe("/readyz")[0] == 200, timeout=60,
                           what="/readyz to answer 200")
        result = POD.kubectl(HPA_TOKEN, "get", "--raw", "/apis/custom.metrics.k8s.io/v1beta1")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("pods/duty_cycle_current",
                      [r["name"] for r in json.loads(result.stdout)["resources"]])

    def test_the_hpas_pods_wildcard_answer_matches_the_exporter(self):
        groups = EXPORTER.grouped("nvidia_gpu_duty_cycle", "pod_name")
        expected = {pod: harness.milli_quantity(samples[-1][1])
                    for pod, samples in groups.items()
                    if samples[0][0]["namespace_name"] == "default"}
        self.assertTrue(expected)
        path = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/duty_cycle_current"
        harness.wait_until(lambda: POD.kubectl(HPA_TOKEN, "get", "--raw", path).returncode == 0,
                           timeout=60, what="the first pods/* answer")
        result = POD.kubectl(HPA_TOKEN, "get", "--raw", path)
        got = {item["describedObject"]["name"]: item["value"]
               for item in json.loads(result.stdout)["items"]}
        self.assertEqual(expected, got)

    def test_the_helm_test_hooks_command_succeeds(self):
        hook = next(o for o in POD.objects if o["kind"] == "Pod"
                    and o["metadata"]["annotations"].get("helm.sh/hook") == "test")
        args = hook["spec"]["containers"][0]["args"]
        result = POD.kubectl(TEST_TOKEN, *args)  # the image's entrypoint is kubectl
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["kind"], "APIResourceList")

    def test_every_self_metric_the_alerts_use_is_exported(self):
        result = POD.kubectl(HPA_TOKEN, "get", "--raw", "/metrics")
        self.assertEqual(result.returncode, 0, result.stderr)
        exported = set(re.findall(r"(?m)^# TYPE (metrics_adapter_\w+) ", result.stdout))
        rule = test_deploy.one(POD.objects, "PrometheusRule")
        used = set(re.findall(r"\bmetrics_adapter_\w+",
                              json.dumps(rule["spec"])))
        self.assertTrue(used & exported)
        # A labelled family has no lines until its first series (audit events dropped: until
        # one is); such a name must still be one the binary registers.
        with open(ARGS.binary, "rb") as f:
            binary = f.read()
        self.assertEqual({name for name in used - exported if name.encode() not in binary}, set())

    def test_the_audit_policy_from_values_is_applied(self):
        POD.kubectl(HPA_TOKEN, "get", "--raw", "/apis/custom.metrics.k8s.io/v1beta1")
        harness.wait_until(lambda: '"kind":"Event"' in PROCS.log(POD.process).replace(" ", ""),
                           timeout=30, what="an audit event on the pod's stdout")


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
