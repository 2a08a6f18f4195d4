"""The deployment kit without a cluster: certs/make-certs.sh into a copy of deploy/, `kubectl
kustomize` of the default install and of each overlay, and checks of what renders: every
object, TLS that verifies, RBAC that names the right subjects, a Deployment whose own flags the
binary accepts in --dry-run with the rendered Secret and ConfigMap as files, and HPA examples
whose metrics the installed rules serve from a real Prometheus scraping the simulated exporter.
Also the docs against --help, and the Dockerfile and the tree its final stage ships
(scripts/image-root.sh) against the binary's shared libraries."""

import base64
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
REPO = harness.REPO
DEPLOY = os.path.join(REPO, "deploy")
# What docs/installation.md tells users to apply; "" is deploy/ itself.
# The Debian packages whose code is compiled into the binary (static archives, header-only
# libraries) and a name each puts in its symbols.
COMPILED_IN = {"libre2-dev": "re2::RE2", "libyaml-cpp-dev": "YAML::", "libdeflate-dev":
               "libdeflate_crc32", "libspdlog-dev": "spdlog::", "libfmt-dev": "fmt::v9::",
               "nlohmann-json3-dev": "nlohmann::"}
INSTALLS = ["", "overlays/dcgm", "overlays/alibaba", "overlays/llm-inference"]
API_SERVICES = {("custom.metrics.k8s.io", "v1beta1"), ("custom.metrics.k8s.io", "v1beta2"),
                ("external.metrics.k8s.io", "v1beta1")}

WORK = None
RENDERED = {}  # install -> [objects]
PROCS = PROMETHEUS = None


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, **kwargs)


def checked(argv, **kwargs):
    result = run(argv, **kwargs)
    if result.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (argv, result.returncode, result.stderr))
    return result.stdout


def json_objects(yaml_path):
    """The objects of a YAML file or directory as JSON, converted by kubectl without a cluster
    (`label --local` only prints; the label to remove does not exist)."""
    text = checked(["kubectl", "label", "--local", "-o", "json", "-f", yaml_path,
                    "ma-test-nothing-"], env=offline_env())
    decoder, objects, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        objects.extend(value.get("items", [value]) if value.get("kind") == "List" else [value])
    return objects


def offline_env():
    env = dict(os.environ)
    env.pop("KUBERNETES_SERVICE_HOST", None)
    env["KUBECONFIG"] = os.devnull
    return env


def render(install):
    path = os.path.join(WORK, "deploy", install)
    yaml_path = os.path.join(WORK, "render-%s.yaml" % (install.replace("/", "-") or "default"))
    with open(yaml_path, "w") as f:
        f.write(checked(["kubectl", "kustomize", path]))
    return json_objects(yaml_path)


def kustomize_major():
    """The major version of the kustomize inside kubectl (Debian 12's kubectl 1.20 has v2)."""
    version = json.loads(checked(["kubectl", "version", "--client", "-o", "json"],
                                 env=offline_env())).get("kustomizeVersion", "v0")
    match = re.match(r"v(\d+)", version)
    return int(match.group(1)) if match else 0


def setUpModule():
    global WORK, PROCS, PROMETHEUS
    # deploy/ uses components and replacements (kustomize v4+, kubectl 1.21+), as documented in
    # docs/installation.md; an older kubectl cannot render it at all.
    if kustomize_major() < 4:
        raise unittest.SkipTest("kubectl's kustomize is older than v4; deploy/ needs kubectl 1.21+")
    WORK = tempfile.mkdtemp(prefix="ma-deploy-")
    PROCS = harness.Processes()
    try:
        # A copy, so the repository is not written to and a user's own certificates are unused.
        shutil.copytree(DEPLOY, os.path.join(WORK, "deploy"),
                        ignore=lambda d, names: ["certs"] if os.path.basename(d) == "base" else [])
        checked(["bash", harness.MAKE_CERTS, "--out", os.path.join(WORK, "ca"),
                 "--kustomize", os.path.join(WORK, "deploy", "base", "certs")])
        for install in INSTALLS:
            RENDERED[install] = render(install)
        exporter = harness.Exporter(PROCS, mode="static")
        rules = os.path.join(PROCS.workdir, "recording-rules.yml")
        with open(rules, "w") as f:  # JSON is YAML
            json.dump({"groups": recording_rule()["spec"]["groups"]}, f)
        PROMETHEUS = harness.Prometheus(PROCS, exporter.port, rule_files=[rules])
        gpus = sum(1 for name, _, _ in exporter.samples() if name == "DCGM_FI_DEV_GPU_UTIL")
        PROMETHEUS.wait_for_series("DCGM_FI_DEV_GPU_UTIL", gpus)
        PROMETHEUS.wait_for_series("nvidia_gpu_duty_cycle", gpus)
        for rule in recording_rule()["spec"]["groups"][0]["rules"]:
            PROMETHEUS.wait_for_series(rule["record"], 1)
    except Exception:
        tearDownModule()
        raise


def tearDownModule():
    if PROCS:
        PROCS.stop_all()
    if WORK and not os.environ.get("KEEP_TEST_DIRS"):
        shutil.rmtree(WORK, ignore_errors=True)


@functools.lru_cache(maxsize=None)
def example_objects():
    return json_objects(os.path.join(DEPLOY, "examples"))


def recording_rule():
    return one(example_objects(), "PrometheusRule")


def one(objects, kind, predicate=lambda o: True):
    found = [o for o in objects if o["kind"] == kind and predicate(o)]
    if len(found) != 1:
        raise AssertionError("expected one %s, found %d" % (kind, len(found)))
    return found[0]


def all_of(objects, kind):
    return [o for o in objects if o["kind"] == kind]


def deployment(objects):
    return one(objects, "Deployment")


def container(objects):
    containers = deployment(objects)["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, containers
    return containers[0]


def flag_values(args):
    """{name: value} of `--name=value` arguments."""
    values = {}
    for arg in args:
        name, _, value = arg[2:].partition("=")
        values[name] = value
    return values


def volume_files(objects, volume_name):
    """{file name: bytes} a volume of the Deployment holds: the rendered Secret's or ConfigMap's
    data under its keys."""
    volumes = deployment(objects)["spec"]["template"]["spec"]["volumes"]
    volume = next(v for v in volumes if v["name"] == volume_name)
    if "secret" in volume:
        source = one(objects, "Secret",
                     lambda o: o["metadata"]["name"] == volume["secret"]["secretName"])
        return {k: base64.b64decode("".join(v.split())) for k, v in source["data"].items()}
    source = one(objects, "ConfigMap",
                 lambda o: o["metadata"]["name"] == volume["configMap"]["name"])
    return {k: v.encode() for k, v in source["data"].items()}


def materialize(objects, install):
    """Writes every volume the container mounts into a directory of its own and returns the
    container's args with mount paths rewritten to those directories."""
    args = list(container(objects)["args"])
    root = os.path.join(WORK, "mounts-" + (install.replace("/", "-") or "default"))
    for mount in container(objects)["volumeMounts"]:
        directory = os.path.join(root, mount["name"])
        os.makedirs(directory, exist_ok=True)
        for name, content in volume_files(objects, mount["name"]).items():
            with open(os.path.join(directory, name), "wb") as f:
                f.write(content)
        prefix = mount["mountPath"].rstrip("/") + "/"
        args = [re.sub("=" + re.escape(prefix), "=" + directory + "/", arg) for arg in args]
    return args


def config_text(objects):
    files = volume_files(objects, "config")
    assert list(files) == ["config.yaml"], list(files)
    return files["config.yaml"].decode()


def pod_labels(objects):
    return deployment(objects)["spec"]["template"]["metadata"]["labels"]


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def help_flags():
    return set(re.findall(r"^  --([a-z0-9_-]+)", checked([ARGS.binary, "--help"]), re.M))


def served(config, *extra):
    """check-config's list of what the config exposes from the test's Prometheus: custom
    metrics as "resource/name", external ones by name."""
    with tempfile.NamedTemporaryFile("w", dir=WORK, suffix=".yaml", delete=False) as f:
        f.write(config)
    out = checked([ARGS.binary, "check-config", f.name, *extra])
    return {line.strip() for line in out.splitlines() if line.startswith("  ")}


class RenderTest(unittest.TestCase):
    def test_every_install_renders_every_object(self):
        for install, objects in RENDERED.items():
            with self.subTest(install=install or "deploy/"):
                kinds = sorted({o["kind"] for o in objects})
                self.assertEqual(kinds, sorted([
                    "APIService", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment",
                    "Namespace", "PodDisruptionBudget", "RoleBinding", "Secret", "Service",
                    "ServiceAccount"]))
                namespace = one(objects, "Namespace")["metadata"]["name"]
                for o in objects:
                    if o["kind"] in ("ServiceAccount", "Deployment", "Service", "ConfigMap",
                                     "Secret", "PodDisruptionBudget"):
                        self.assertEqual(o["metadata"]["namespace"], namespace, o["kind"])
                self.assertEqual(deployment(objects)["spec"]["replicas"], 2)

    def test_default_install_is_the_dcgm_overlay(self):
        self.assertEqual(RENDERED[""], RENDERED["overlays/dcgm"])
        self.assertNotEqual(config_text(RENDERED[""]), config_text(RENDERED["overlays/alibaba"]))

    def test_apiservices_verify_the_serving_certificate_for_the_service_name(self):
        for install, objects in RENDERED.items():
            service = one(objects, "Service")
            secret_files = volume_files(objects, "serving-cert")
            cert = os.path.join(WORK, "serving-%s.crt" % install.replace("/", "-"))
            with open(cert, "wb") as f:
                f.write(secret_files["tls.crt"])
            apiservices = all_of(objects, "APIService")
            self.assertEqual({(a["spec"]["group"], a["spec"]["version"]) for a in apiservices},
                             API_SERVICES)
            for apiservice in apiservices:
                spec = apiservice["spec"]
                with self.subTest(install=install, apiservice=apiservice["metadata"]["name"]):
                    self.assertEqual(apiservice["metadata"]["name"],
                                     "%s.%s" % (spec["version"], spec["group"]))
                    self.assertNotIn("insecureSkipTLSVerify", spec)
                    self.assertEqual(spec["service"]["name"], service["metadata"]["name"])
                    self.assertEqual(spec["service"]["namespace"],
                                     service["metadata"]["namespace"])
                    self.assertIn(spec["service"]["port"],
                                  [p["port"] for p in service["spec"]["ports"]])
                    ca_pem = base64.b64decode("".join(spec["caBundle"].split()))
                    ca = os.path.join(WORK, "cabundle.pem")
                    with open(ca, "wb") as f:
                        f.write(ca_pem)
                    self.assertIn("CA:TRUE", checked(["openssl", "x509", "-in", ca, "-noout",
                                                      "-ext", "basicConstraints"]))
                    # The name the aggregator dials: <service>.<namespace>.svc.
                    host = "%s.%s.svc" % (spec["service"]["name"], spec["service"]["namespace"])
                    verified = run(["openssl", "verify", "-CAfile", ca, "-purpose", "sslserver",
                                    "-verify_hostname", host, cert])
                    self.assertEqual(verified.returncode, 0, verified.stdout + verified.stderr)

    def test_service_reaches_the_secure_port(self):
        for install, objects in RENDERED.items():
            service = one(objects, "Service")
            self.assertTrue(selects(service["spec"]["selector"], pod_labels(objects)))
            ports = {p["name"]: p["containerPort"] for p in container(objects)["ports"]}
            secure_port = int(flag_values(container(objects)["args"])["secure-port"])
            for port in service["spec"]["ports"]:
                self.assertEqual(ports[port["targetPort"]], secure_port, install)

    def test_rbac_for_delegated_auth_the_lister_and_the_hpa(self):
        for install, objects in RENDERED.items():
            spec = deployment(objects)["spec"]["template"]["spec"]
            account = {"kind": "ServiceAccount", "name": spec["serviceAccountName"],
                       "namespace": deployment(objects)["metadata"]["namespace"]}
            self.assertEqual(one(objects, "ServiceAccount")["metadata"]["name"], account["name"])

            def bound(kind, role_kind, role, subject):
                return [b for b in all_of(objects, kind)
                        if b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io",
                                            "kind": role_kind, "name": role}
                        and subject in b["subjects"]]

            with self.subTest(install=install):
                self.assertEqual(len(bound("ClusterRoleBinding", "ClusterRole",
                                           "system:auth-delegator", account)), 1)
                reader = bound("RoleBinding", "Role", "extension-apiserver-authentication-reader",
                               account)
                self.assertEqual([b["metadata"]["namespace"] for b in reader], ["kube-system"])
                # The resources the installed rules serve, from check-config: the lister and
                # Object metrics read them.
                resources = {name.split("/")[0] for name in
                             served(config_text(objects), *series_source(install))
                             if "/" in name}
                self.assertIn("pods", resources)
                granted = self.granted(objects, account)
                for resource in resources:
                    for verb in ("list", "watch"):  # what the object lister does
                        self.assertIn(("", resource, verb), granted, install)
                    # least privilege: no GET of single objects, the code never makes one
                    self.assertNotIn(("", resource, "get"), granted, install)
                hpa = {"kind": "ServiceAccount", "name": "horizontal-pod-autoscaler",
                       "namespace": "kube-system"}
                hpa_grants = self.granted(objects, hpa)
                for group in ("custom.metrics.k8s.io", "external.metrics.k8s.io"):
                    for verb in ("get", "list"):
                        self.assertIn((group, "*", verb), hpa_grants)

    def granted(self, objects, subject):
        """(group, resource, verb) the cluster roles bound to `subject` grant."""
        roles = {r["metadata"]["name"]: r for r in all_of(objects, "ClusterRole")}
        grants = set()
        for binding in all_of(objects, "ClusterRoleBinding"):
            if subject in binding["subjects"] and binding["roleRef"]["name"] in roles:
                for rule in roles[binding["roleRef"]["name"]]["rules"]:
                    for group in rule["apiGroups"]:
                        for resource in rule["resources"]:
                            grants.update((group, resource, v) for v in rule["verbs"])
        return grants

    def test_pod_is_hardened_and_probed_over_https(self):
        always_allowed = re.search(r"--authorization-always-allow-paths=VALUE\s.*\(default ([^)]*)\)",
                                   checked([ARGS.binary, "--help"])).group(1).split(",")
        for install, objects in RENDERED.items():
            pod = deployment(objects)["spec"]["template"]["spec"]
            main = container(objects)
            with self.subTest(install=install):
                self.assertEqual(pod["securityContext"]["seccompProfile"],
                                 {"type": "RuntimeDefault"})
                self.assertTrue(pod["securityContext"]["runAsNonRoot"])
                self.assertGreater(pod["securityContext"]["runAsUser"], 0)
                context = main["securityContext"]
                self.assertTrue(context["readOnlyRootFilesystem"])
                self.assertFalse(context["allowPrivilegeEscalation"])
                self.assertEqual(context["capabilities"]["drop"], ["ALL"])
                for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
                    get = main[probe]["httpGet"]
                    self.assertEqual((get["scheme"], get["path"], get["port"]),
                                     ("HTTPS", path, "https"))
                    self.assertIn(path, always_allowed)  # the kubelet has no credentials
                for resource in ("cpu", "memory"):
                    self.assertIn(resource, main["resources"]["requests"])
                self.assertIn("memory", main["resources"]["limits"])
                for mount in main["volumeMounts"]:
                    self.assertTrue(mount["readOnly"], mount)

    def test_replicas_spread_and_survive_drains(self):
        for install, objects in RENDERED.items():
            labels = pod_labels(objects)
            pdb = one(objects, "PodDisruptionBudget")
            self.assertTrue(selects(pdb["spec"]["selector"]["matchLabels"], labels))
            self.assertLess(pdb["spec"]["minAvailable"], deployment(objects)["spec"]["replicas"])
            self.assertGreaterEqual(pdb["spec"]["minAvailable"], 1)
            spread = deployment(objects)["spec"]["template"]["spec"]["topologySpreadConstraints"]
            self.assertIn("kubernetes.io/hostname", [c["topologyKey"] for c in spread])
            for constraint in spread:
                self.assertTrue(selects(constraint["labelSelector"]["matchLabels"], labels))


def render_with_component(component):
    """The default install (base + dcgm) with deploy/components/<component> added: its objects
    and its APIServices' specs by (group, version)."""
    overlay = os.path.join(WORK, "deploy", "overlays", component + "-check")
    os.makedirs(overlay, exist_ok=True)
    with open(os.path.join(overlay, "kustomization.yaml"), "w") as f:
        f.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                "resources:\n- ../../base\ncomponents:\n- ../../components/dcgm\n"
                "- ../../components/%s\n" % component)
    objects = render("overlays/%s-check" % component)
    return objects, {(a["spec"]["group"], a["spec"]["version"]): a["spec"]
                     for a in all_of(objects, "APIService")}


class ForecastObserverComponentTest(unittest.TestCase):
    """deploy/components/forecast-observer added to the default install: one more APIService,
    for our group, verified with the same CA, and a ClusterRole to read the pages."""

    def test_component_adds_the_observer_apiservice(self):
        objects, apiservices = render_with_component("forecast-observer")
        self.assertEqual(set(apiservices),
                         API_SERVICES | {("forecast.metrics-adapter.io", "v1alpha1")})
        observer = apiservices[("forecast.metrics-adapter.io", "v1alpha1")]
        external = apiservices[("external.metrics.k8s.io", "v1beta1")]
        self.assertEqual(observer["caBundle"], external["caBundle"])
        self.assertEqual(observer["service"], external["service"])
        self.assertNotIn("insecureSkipTLSVerify", observer)
        role = one(objects, "ClusterRole",
                   lambda o: o["metadata"]["name"] == "metrics-adapter-forecast-observer")
        self.assertEqual(role["rules"], [{"apiGroups": ["forecast.metrics-adapter.io"],
                                          "resources": ["observer"], "verbs": ["get"]}])


class ResourceMetricsComponentTest(unittest.TestCase):
    """deploy/components/resource-metrics added to the default install: the metrics.k8s.io
    APIService, verified with the same CA, the aggregated reader role, and a config with the
    preset resourceRules that loads."""

    def test_component_adds_the_metrics_apiservice(self):
        objects, apiservices = render_with_component("resource-metrics")
        self.assertEqual(set(apiservices), API_SERVICES | {("metrics.k8s.io", "v1beta1")})
        metrics = apiservices[("metrics.k8s.io", "v1beta1")]
        external = apiservices[("external.metrics.k8s.io", "v1beta1")]
        self.assertEqual(metrics["caBundle"], external["caBundle"])
        self.assertEqual(metrics["service"], external["service"])
        role = one(objects, "ClusterRole", lambda o: o["metadata"]["name"] ==
                   "metrics-adapter-aggregated-metrics-reader")
        self.assertEqual(role["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"],
                         "true")
        # The adapter's own account lists and watches the pods and nodes it reports on.
        reader = one(objects, "ClusterRole", lambda o: o["metadata"]["name"] ==
                     "metrics-adapter-resource-reader")
        self.assertTrue({"pods", "nodes"} <= set(reader["rules"][0]["resources"]))
        self.assertTrue({"list", "watch"} <= set(reader["rules"][0]["verbs"]))

    def test_the_preset_resource_rules_load(self):
        out = checked([ARGS.binary, "check-config",
                       os.path.join(REPO, "config", "resource-rules.yaml")])
        self.assertIn("valid", out)


class DeploymentFlagsTest(unittest.TestCase):
    def test_the_binary_accepts_the_deployments_flags_and_files(self):
        for install, objects in RENDERED.items():
            args = materialize(objects, install)
            flags = flag_values(args)
            for name, value in flags.items():
                if value.startswith("/"):
                    self.assertTrue(value.startswith(WORK),
                                    "--%s=%s is not on a mounted volume" % (name, value))
            self.assertEqual(flags.get("authentication-mode", "delegated"), "delegated")
            result = run([ARGS.binary, "--dry-run"] + args, env=offline_env())
            with self.subTest(install=install):
                self.assertEqual(result.returncode, 0, result.stderr)
                # The only warnings allowed: rules waiting for a CRD the built-in resource
                # table lacks (the LLM rules' InferencePool), enabled once the cluster has it.
                lines = result.stdout.splitlines()
                for line in lines:
                    if line.startswith("warning:"):
                        self.assertRegex(line, r'unknown resource "[a-z]+\.[a-z0-9.-]+"; the rule is '
                                               r'disabled until it exists')
                lines = [line for line in lines if not line.startswith("warning:")]
                self.assertTrue(lines[0].startswith("dry run OK: config " + flags["config"]),
                                result.stdout)
                self.assertIn("authentication delegated", result.stdout)

    def test_dry_run_fails_when_a_mounted_file_is_missing(self):
        args = materialize(RENDERED[""], "")
        key = flag_values(args)["tls-private-key-file"]
        broken = [a.replace(key, key + ".missing") for a in args]
        result = run([ARGS.binary, "--dry-run"] + broken, env=offline_env())
        self.assertEqual(result.returncode, 1)
        self.assertIn(key + ".missing", result.stderr)

    def test_the_prometheus_url_is_the_line_the_installation_guide_names(self):
        url_args = [a for a in container(RENDERED[""])["args"] if a.startswith("--prometheus-url=")]
        self.assertEqual(len(url_args), 1)
        with open(os.path.join(REPO, "docs", "installation.md")) as f:
            self.assertIn("        - " + url_args[0] + "\n", f.read())

    def test_the_configmap_config_loads_and_is_the_presets(self):
        for install, objects in RENDERED.items():
            config = config_text(objects)
            path = os.path.join(WORK, "config-check.yaml")
            with open(path, "w") as f:
                f.write(config)
            out = checked([ARGS.binary, "check-config", path])
            self.assertRegex(out, r"valid: [1-9]\d* rules, \d+ externalRules")
            component = os.path.join(DEPLOY, "components", install.split("/")[-1] or "dcgm")
            with open(os.path.join(component, "kustomization.yaml")) as f:
                # The comment names the presets the copy is made of, in order, and whether they
                # are concatenated or merged (presets that each have a `rules:` list).
                comment = f.read()
            presets = list(dict.fromkeys(re.findall(r"\b(config/[a-z0-9-]+\.yaml)", comment)))
            self.assertTrue(presets)
            if "scripts/merge_presets.py" in comment:
                expected = checked([os.path.join(REPO, "scripts", "merge_presets.py")] + presets,
                                   cwd=REPO)
            else:
                expected = ""
                for preset in presets:
                    with open(os.path.join(REPO, preset)) as f:
                        expected += f.read()
            self.assertEqual(config, expected, "%s is out of step with %s: run the command in "
                             "its kustomization.yaml" % (component, presets))


LLM_INSTALLS = {"overlays/llm-inference"}


@functools.lru_cache(maxsize=None)
def llm_series_file(directory=None):
    """A series file of every series test_llm_inference.py's simulated vLLM, gateway and Triton
    exporters serve (one line per series, as check-config --series-file reads them), in
    `directory` (default: this test's)."""
    import test_llm_inference
    path = os.path.join(directory or WORK, "llm-series.txt")
    with open(path, "w") as f:
        for family, kind, labels, _ in test_llm_inference.series_at(0):
            f.write("%s%s{%s}\n" % (family, test_llm_inference.SUFFIX.get(kind, ""), labels))
    return path


def series_source(install):
    """check-config's arguments for the series an install's rules are checked against: the LLM
    rules' come from test_llm_inference.py's simulators, the GPU rules' from the test's
    Prometheus."""
    if install in LLM_INSTALLS:
        return ["--series-file", llm_series_file()]
    return ["--prometheus-url", PROMETHEUS.url]


class ExamplesTest(unittest.TestCase):
    def install_for(self, example):
        """The install docs/installation.md names for an example: `deploy/...` in its row; None
        when the row names a chart values file instead (its forecastRule is the chart's own:
        test_scale_to_zero_examples.py checks those against the rendered chart)."""
        with open(os.path.join(REPO, "docs", "installation.md")) as f:
            rows = [line for line in f if line.startswith("|") and example in line]
        self.assertEqual(len(rows), 1, example)
        if "charts/metrics-adapter/examples/" in rows[0]:
            return None
        install = re.findall(r"`deploy/([a-z/-]*)`", rows[0])
        self.assertEqual(len(install), 1, rows[0])
        return install[0].rstrip("/")

    def test_every_hpa_metric_is_served_by_the_install_its_docs_name(self):
        deployments = {(o["metadata"]["namespace"], o["metadata"]["name"]): o
                       for o in example_objects() if o["kind"] == "Deployment"}
        hpas = 0
        for name in sorted(os.listdir(os.path.join(DEPLOY, "examples"))):
            path = os.path.join(DEPLOY, "examples", name)
            for hpa in [o for o in json_objects(path) if o["kind"] == "HorizontalPodAutoscaler"]:
                hpas += 1
                with self.subTest(example=name):
                    self.assertEqual(hpa["apiVersion"], "autoscaling/v2")
                    target = hpa["spec"]["scaleTargetRef"]
                    self.assertEqual((target["apiVersion"], target["kind"]),
                                     ("apps/v1", "Deployment"))
                    # The Deployment it scales is one of the examples, in the HPA's namespace.
                    self.assertIn((hpa["metadata"]["namespace"], target["name"]), deployments)
                    install = self.install_for(name)
                    if install is None:
                        continue
                    # The LLM rules' series come from the series the simulator of
                    # test_llm_inference.py serves, the GPU rules' from the test's Prometheus.
                    exposed = served(config_text(RENDERED[install]), *series_source(install))
                    for metric in hpa["spec"]["metrics"]:
                        self.assertIn(self.exposed_name(metric), exposed)
        self.assertGreaterEqual(hpas, 5)

    @staticmethod
    def exposed_name(metric):
        """How check-config lists the metric an HPA metric spec asks for."""
        if metric["type"] == "Pods":
            return "pods/" + metric["pods"]["metric"]["name"]
        if metric["type"] == "Object":
            kind = metric["object"]["describedObject"]["kind"]
            return "%ss/%s" % (kind.lower(), metric["object"]["metric"]["name"])
        return metric["external"]["metric"]["name"]

    def test_the_brief_three_are_there(self):
        # The brief's three scale the GPU example; the LLM examples scale vllm-llama.
        specs = [m for o in example_objects() if o["kind"] == "HorizontalPodAutoscaler"
                 and o["spec"]["scaleTargetRef"]["name"] == "bert-intent-detection"
                 for m in o["spec"]["metrics"]]
        self.assertIn({"type": "Pods", "pods": {
            "metric": {"name": "duty_cycle_current"},
            "target": {"type": "AverageValue", "averageValue": "40"}}}, specs)
        objects = [m["object"] for m in specs if m["type"] == "Object"]
        self.assertEqual([o["describedObject"] for o in objects],
                         [{"apiVersion": "v1", "kind": "Service", "name": "dcgm-exporter"}])
        external = [m["external"]["metric"]["name"] for m in specs if m["type"] == "External"]
        self.assertEqual(external, [r["record"] for r in
                                    recording_rule()["spec"]["groups"][0]["rules"]])

    def test_mig_metric_named_in_the_docs_is_served(self):
        series = os.path.join(WORK, "mig-series.txt")
        with open(series, "w") as f:
            f.write('DCGM_FI_PROF_GR_ENGINE_ACTIVE{namespace="default",pod="p-1",GPU_I_ID="1"}\n')
        exposed = served(config_text(RENDERED[""]), "--series-file", series)
        with open(os.path.join(REPO, "docs", "gpu-autoscaling.md")) as f:
            named = set(re.findall(r"DCGM_FI_PROF_GR_ENGINE_ACTIVE\w*", f.read()))
        self.assertIn("DCGM_FI_PROF_GR_ENGINE_ACTIVE_AVG", named)
        for metric in named:
            self.assertIn("pods/" + metric, exposed)


class CertificatesTest(unittest.TestCase):
    def make(self, out, *extra):
        return run(["bash", harness.MAKE_CERTS, "--out", out, *extra])

    def test_idempotent_and_the_ca_is_kept_unless_forced(self):
        out = os.path.join(WORK, "idempotent")
        kustomize = os.path.join(WORK, "idempotent-kustomize")

        def contents():
            """{"<dir>/<file>": bytes} of what the script wrote."""
            files = {}
            for directory in (out, kustomize):
                for name in os.listdir(directory):
                    with open(os.path.join(directory, name), "rb") as f:
                        files[os.path.basename(directory) + "/" + name] = f.read()
            return files

        first = self.make(out, "--kustomize", kustomize)
        self.assertEqual(first.returncode, 0, first.stderr)
        before = contents()
        second = self.make(out, "--kustomize", kustomize)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("reusing the CA", second.stderr)
        self.assertEqual(contents(), before)
        self.assertEqual(first.stdout, second.stdout)  # the same caBundle
        self.assertEqual(before["idempotent-kustomize/tls.crt"], before["idempotent/serving.crt"])
        self.assertEqual(before["idempotent/ca.crt"], base64.b64decode(first.stdout.split()[-1]))

        other_namespace = self.make(out, "--namespace", "elsewhere")
        self.assertEqual(contents()["idempotent/ca.crt"], before["idempotent/ca.crt"])
        self.assertNotEqual(contents()["idempotent/serving.crt"],
                            before["idempotent/serving.crt"])
        self.assertIn("metrics-adapter.elsewhere.svc", checked(
            ["openssl", "x509", "-in", os.path.join(out, "serving.crt"), "-noout", "-ext",
             "subjectAltName"]), other_namespace.stderr)

        forced = self.make(out, "--force")
        self.assertEqual(forced.returncode, 0, forced.stderr)
        self.assertNotEqual(contents()["idempotent/ca.crt"], before["idempotent/ca.crt"])
        # With --out and no --kustomize, nothing else is written.
        self.assertEqual(contents()["idempotent-kustomize/ca.crt"], before["idempotent/ca.crt"])

    def test_key_material_is_never_committed(self):
        if run(["git", "-C", REPO, "rev-parse"]).returncode != 0:
            self.skipTest("not a git checkout")
        for path in ("certs/out/ca.key", "deploy/base/certs/tls.key"):
            self.assertEqual(run(["git", "-C", REPO, "check-ignore", "-q", path]).returncode, 0,
                             path + " is not ignored by git")


class DocsTest(unittest.TestCase):
    def test_configuration_lists_exactly_the_flags_of_help(self):
        with open(os.path.join(REPO, "docs", "configuration.md")) as f:
            text = f.read()
        section = text[text.index("\n## Flags"):]
        section = section[:section.index("\n## ", 1)]
        documented = re.findall(r"^\| `--([a-z0-9_-]+)`", section, re.M)
        self.assertEqual(len(documented), len(set(documented)), "a flag is listed twice")
        self.assertEqual(set(documented), help_flags())

    def test_docs_link_to_files_that_exist(self):
        for name in ("installation.md", "configuration.md", "gpu-autoscaling.md",
                     "troubleshooting.md", "architecture.md"):
            with open(os.path.join(REPO, "docs", name)) as f:
                links = re.findall(r"\]\((\.\./[^)#]+|[a-z-]+\.md)[)#]", f.read())
            for link in links:
                self.assertTrue(os.path.exists(os.path.join(REPO, "docs", link)),
                                "%s links to missing %s" % (name, link))


class DockerfileTest(unittest.TestCase):
    """The Dockerfile's shape, and the tree its final stage ships: scripts/image-root.sh run on
    the host's binary, as the build stage runs it on the image's."""

    @staticmethod
    def dockerfile():
        with open(os.path.join(REPO, "Dockerfile")) as f:
            return re.sub(r"\\\n", " ", f.read())

    @classmethod
    def stages(cls):
        """(what comes before the first FROM, [each stage from its FROM on])."""
        preamble, *stages = re.split(r"^FROM ", cls.dockerfile(), flags=re.M)
        return preamble, stages

    @staticmethod
    def installed(stage):
        packages = set()
        for command in re.findall(r"apt-get install ([^&\n]*)", stage):
            packages.update(w for w in command.split() if not w.startswith("-"))
        return packages

    @classmethod
    def image_root(cls):
        """The tree scripts/image-root.sh makes from the tested binary (made once)."""
        if shutil.which("dpkg") is None:
            raise unittest.SkipTest("image-root.sh needs dpkg (Debian) for the libraries' licences")
        root = os.path.join(WORK, "image-root")
        if not os.path.isdir(root):
            checked(["bash", os.path.join(REPO, "scripts", "image-root.sh"), ARGS.binary, root])
        return root

    @staticmethod
    def linked(binary):
        """The absolute paths ldd resolves for `binary`: its libraries and its loader."""
        return set(re.findall(r"(/\S+) \(0x", checked(["ldd", binary])))

    def test_build_stage_installs_the_build_dependencies(self):
        preamble, (build, _) = self.stages()
        # Debian 12 from a registry unless scripts/build-image.sh names its local base.
        self.assertRegex(preamble, r"(?m)^ARG BASE_IMAGE=debian:12$")
        self.assertTrue(build.startswith("${BASE_IMAGE} AS build"), build[:40])
        with open(os.path.join(REPO, "scripts", "install-deps.sh")) as f:
            listed = re.search(r"packages=\((.*?)\)", f.read(), re.S).group(1).split()
        # The libraries and the toolchain; clang is for the on-demand fuzz build, the rest of
        # the list (prometheus, curl, python3, ...) for tests and the demo.
        needed = {p for p in listed if "clang" not in p and (
            p.endswith("-dev") or p in ("cmake", "g++", "make", "pkg-config"))}
        # ca-certificates: the roots the final image carries.
        self.assertEqual(self.installed(build), needed | {"ca-certificates"})

    def test_build_stage_compiles_the_server_the_gate_tests(self):
        # scripts/test.sh builds the shipped server as `MA_UNITY_ALL=ON scripts/build.sh`.
        _, (build, _) = self.stages()
        with open(os.path.join(REPO, "scripts", "build.sh")) as f:
            gate = re.search(r"^cmake -S \. -B build (.*) >/dev/null$", f.read(), re.M).group(1)
        gate = gate.replace('"${MA_UNITY_ALL:-OFF}"', "ON")
        self.assertIn("RUN cmake -S . -B build %s " % gate, build)
        self.assertIn("--target metrics-adapter", build)

    def test_final_stage_is_the_image_root_tree_and_no_shell(self):
        _, (build, final) = self.stages()
        made = re.search(r"RUN image-root\.sh build/metrics-adapter (/\S+)", build)
        self.assertIsNotNone(made, "the build stage does not run image-root.sh")
        self.assertIn("strip build/metrics-adapter", build)
        self.assertTrue(final.startswith("scratch\n"), final[:40])
        self.assertEqual(re.findall(r"^(COPY .*)$", final, re.M),
                         ["COPY --from=build %s /" % made.group(1)])
        # scratch has no shell to run a RUN (or a shell-form ENTRYPOINT) with.
        self.assertNotRegex(final, r"(?m)^(RUN|CMD|SHELL)\b")
        shells = [os.path.join(d, n) for d, _, names in os.walk(self.image_root()) for n in names
                  if n in ("sh", "bash", "dash", "busybox")]
        self.assertEqual(shells, [])

    def test_image_root_holds_exactly_the_libraries_the_binary_links(self):
        root = self.image_root()
        files = set()
        for directory, _, names in os.walk(root):
            files.update("/" + os.path.relpath(os.path.join(directory, n), root) for n in names)
        libraries = self.linked(ARGS.binary)
        self.assertIn("/usr/local/bin/metrics-adapter", files)
        # upstream's path, for manifests with command: ["/adapter"]
        self.assertEqual(os.readlink(os.path.join(root, "adapter")), "/usr/local/bin/metrics-adapter")
        self.assertEqual({f for f in files if re.search(r"\.so(\.|$)", f)}, libraries)
        self.assertIn("/etc/ssl/certs/ca-certificates.crt", files)
        self.assertEqual(os.readlink(os.path.join(root, "usr/lib/ssl/cert.pem")),
                         "/etc/ssl/certs/ca-certificates.crt")
        self.assertEqual(os.stat(os.path.join(root, "tmp")).st_mode & 0o7777, 0o1777)
        # Each library's Debian package's licence, found the way dpkg -S maps files.
        for library in libraries:
            owner = run(["dpkg", "-S", library])
            if owner.returncode != 0:
                owner = run(["dpkg", "-S", os.path.realpath(library)])
            package = owner.stdout.split(":")[0]
            self.assertIn("/usr/share/doc/%s/copyright" % package, files, library)
        # And those of the libraries compiled in, which ldd does not list: each is in the
        # binary's symbols, and its licence in the tree.
        symbols = checked(["nm", "-C", ARGS.binary])
        for package, namespace in COMPILED_IN.items():
            self.assertIn(namespace, symbols, package)
            self.assertIn("/usr/share/doc/%s/copyright" % package, files, package)

    def test_binary_starts_from_the_tree_alone(self):
        root = self.image_root()
        binary = os.path.join(root, "usr/local/bin/metrics-adapter")
        loader = next(p for p in self.linked(ARGS.binary) if "/ld-linux" in p)
        # The tree's own loader with only the tree's library directories and no ld.so.cache:
        # every library must resolve inside the tree, and the binary must run from it.
        library_path = ":".join(sorted({os.path.dirname(root + p) for p in
                                        self.linked(ARGS.binary) if p != loader}))
        argv = [root + loader, "--inhibit-cache", "--library-path", library_path]
        resolved = re.findall(r"=> (/\S+)", checked(argv + ["--list", binary]))
        self.assertTrue(resolved)
        self.assertEqual([p for p in resolved if not p.startswith(root + "/")], [])
        self.assertIn("--prometheus-url", checked(argv + [binary, "--help"]))

    def test_runtime_user_is_the_pods_user_and_entrypoint_the_binary(self):
        _, (_, final) = self.stages()
        user = re.search(r"^USER (\d+):(\d+)$", final, re.M)
        pod = deployment(RENDERED[""])["spec"]["template"]["spec"]["securityContext"]
        self.assertEqual((int(user.group(1)), int(user.group(2))),
                         (pod["runAsUser"], pod["runAsGroup"]))
        with open(os.path.join(self.image_root(), "etc", "passwd")) as f:
            users = {line.split(":")[2]: line.split(":")[3] for line in f if line.strip()}
        self.assertEqual(users.get(user.group(1)), user.group(2))
        self.assertIn('ENTRYPOINT ["/usr/local/bin/metrics-adapter"]', final)
        self.assertIn("EXPOSE 6443", final)

if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
