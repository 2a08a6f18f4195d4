"""charts/metrics-adapter without a cluster: `helm lint --strict` of the default values and of
each example, `helm template` over a matrix of values (each TLS mode, each API switch, each
preset, hostNetwork, monitoring, the examples) with structural checks on every render (kinds
Kubernetes 1.25-1.32 serve, every reference resolving, no insecureSkipTLSVerify), the binary's
--dry-run on the rendered flags and files, the presets and the dashboard kept in step with
config/ and docs/, and the alerts checked by promtool. The parity with deploy/ is in
test_chart_parity.py, the chart in a cluster (helm install/upgrade, lookup) in
test_chart_cluster.py, its pod started as the kubelet would in test_chart_pod.py."""

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import chart_support
import harness
import test_deploy

ARGS, UNITTEST_ARGV = harness.parse_args()
CHART = chart_support.CHART
NAMESPACE = chart_support.NAMESPACE

# Every apiVersion/kind the chart may render: each served by Kubernetes 1.25 through 1.32 (none
# of the APIs removed in that span, e.g. policy/v1beta1 or autoscaling/v2beta2), plus the CRDs
# of prometheus-operator and cert-manager, which only their switches render.
BUILT_IN = {("v1", k) for k in ("ConfigMap", "Pod", "Secret", "Service", "ServiceAccount")} | {
    ("apps/v1", "Deployment"), ("policy/v1", "PodDisruptionBudget"),
    ("apiregistration.k8s.io/v1", "APIService")} | {
    ("rbac.authorization.k8s.io/v1", k) for k in ("ClusterRole", "ClusterRoleBinding",
                                                 "RoleBinding")}
CRDS = {("monitoring.coreos.com/v1", "ServiceMonitor"), ("monitoring.coreos.com/v1", "PrometheusRule"),
        ("cert-manager.io/v1", "Certificate"), ("cert-manager.io/v1", "Issuer")}
# Roles every cluster has, which the chart binds without making them.
BUILT_IN_ROLES = {("ClusterRole", "system:auth-delegator"),
                  ("Role", "extension-apiserver-authentication-reader")}
# Accounts outside the chart that it binds roles to: the HPA controller's, and the scraping
# Prometheus's that the monitoring case and examples/monitoring.yaml name.
OUTSIDE_ACCOUNTS = {("kube-system", "horizontal-pod-autoscaler"), ("monitoring", "prometheus"),
                    ("monitoring", "kube-prometheus-stack-prometheus")}
DEFAULT_APIS = {("custom.metrics.k8s.io", "v1beta1"), ("custom.metrics.k8s.io", "v1beta2"),
                ("external.metrics.k8s.io", "v1beta1")}
MONITORING = ["serviceMonitor.enabled=true", "prometheusRule.enabled=true",
              "grafanaDashboard.enabled=true",
              "serviceMonitor.scraperServiceAccount.name=prometheus",
              "serviceMonitor.scraperServiceAccount.namespace=monitoring"]
PRESETS = ["dcgm", "alibaba", "llm-inference", "resource-metrics", "forecast"]


def matrix():
    """{case: --set assignments}, plus {"example-<name>": values file} for each example."""
    existing = ["tls.mode=existingSecret", "tls.existingSecret.name=my-tls"]
    cases = {
        "default": [],
        "tls-certManager": ["tls.mode=certManager"],
        "tls-certManager-issuer": ["tls.mode=certManager", "tls.certManager.issuerRef.name=ca",
                                   "tls.certManager.issuerRef.kind=ClusterIssuer"],
        "tls-existingSecret": existing,
        "api-resourceMetrics": ["apis.resourceMetrics.enabled=true",
                                "config.presets={dcgm,resource-metrics}"],
        "api-forecastObserver": ["apis.forecastObserver=true"],
        "hostNetwork": ["hostNetwork=true", "securePort=10260"],
        "monitoring": MONITORING,
        "monitoring-certManager": MONITORING + ["tls.mode=certManager"],
        "monitoring-existingSecret": MONITORING + existing,
        "one-replica": ["replicas=1"],
        "existing-config": ["config.existingConfigMap=my-rules", "config.presets=null"],
        "own-account": ["serviceAccount.create=false", "serviceAccount.name=adapter"],
        "audit-json": ["audit.enabled=true", "logging.format=json", "logging.verbosity=6"],
    }
    for switch in ("customMetrics.v1beta1", "customMetrics.v1beta2", "externalMetrics"):
        cases["api-%s-off" % switch] = ["apis.%s=false" % switch]
    for preset in PRESETS:
        cases["preset-" + preset] = ["config.presets={%s}" % preset]
    return cases


def examples():
    directory = os.path.join(CHART, "examples")
    return {"example-" + name[:-5]: os.path.join(directory, name)
            for name in sorted(os.listdir(directory)) if name.endswith(".yaml")}


WORK = HELM = None
RENDERS = {}  # case -> objects
SETS = {}  # case -> --set assignments


def setUpModule():
    global WORK, HELM
    WORK = tempfile.mkdtemp(prefix="ma-chart-")
    HELM = chart_support.Helm(WORK)
    # The existing-Secret mode's caBundle: a real CA's PEM, given with --set-file as a user would.
    ca, _ = harness.make_ca(WORK, "user-ca")
    jobs = {}
    for case, sets in matrix().items():
        set_files = ["tls.existingSecret.caBundle=" + ca] if "tls.mode=existingSecret" in sets \
            else []
        SETS[case] = sets
        jobs[case] = {"sets": sets, "set_files": set_files}
    for case, path in examples().items():
        SETS[case] = []
        jobs[case] = {"values": [path]}
    # helm spends its time making RSA keys for the generated certificate: two at a time.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {case: pool.submit(HELM.template, WORK, **job) for case, job in jobs.items()}
        for case, future in futures.items():
            RENDERS[case] = future.result()


def tearDownModule():
    if WORK and not os.environ.get("KEEP_TEST_DIRS"):
        shutil.rmtree(WORK, ignore_errors=True)


def all_of(objects, kind):
    return [o for o in objects if o["kind"] == kind]


def named(objects, kind, name):
    return [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]


def hooks(objects):
    return [o for o in objects if "helm.sh/hook" in o["metadata"].get("annotations", {})]


def workload(objects):
    """The objects the chart installs (the `helm test` hook's are made by `helm test` only)."""
    hooked = [id(o) for o in hooks(objects)]
    return [o for o in objects if id(o) not in hooked]


def pod_spec(objects):
    return test_deploy.deployment(objects)["spec"]["template"]["spec"]


def flags(objects):
    return test_deploy.flag_values(test_deploy.container(objects)["args"])


def config_text(objects):
    return test_deploy.config_text(objects)


class LintTest(unittest.TestCase):
    def test_lint_strict_passes_on_the_defaults_and_every_example(self):
        for values in [None] + list(examples().values()):
            argv = ["lint", "--strict", CHART] + (["--values", values] if values else [])
            with self.subTest(values=values):
                result = HELM.run(*argv)
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_the_packaged_chart_carries_its_presets_and_dashboard(self):
        # What `helm package` ships (.helmignore applied) renders the same rules and dashboard.
        out = os.path.join(WORK, "package")
        HELM.checked("package", CHART, "--destination", out)
        package = os.path.join(out, os.listdir(out)[0])
        for case, sets in (("preset-llm-inference", ["config.presets={llm-inference}"]),
                           ("monitoring", MONITORING)):
            argv = ["template", chart_support.RELEASE, package, "--namespace", NAMESPACE]
            for assignment in sets:
                argv += ["--set", assignment]
            path = os.path.join(WORK, "from-package-%s.yaml" % case)
            with open(path, "w") as f:
                f.write(HELM.checked(*argv))
            packaged = [o for o in test_deploy.json_objects(path) if o["kind"] == "ConfigMap"]
            self.assertEqual(packaged, all_of(RENDERS[case], "ConfigMap"), case)

    def test_the_schema_refuses_a_typo_and_a_wrong_type(self):
        for assignment, complaint in (("replica=3", "replica"),
                                      ("tls.mode=insecure", "tls.mode"),
                                      ("config.presets={gpu}", "config.presets"),
                                      ("securePort=https", "securePort")):
            with self.subTest(assignment=assignment):
                result = HELM.run("template", "x", CHART, "--set", assignment)
                self.assertNotEqual(result.returncode, 0)
                self.assertIn(complaint, result.stderr)


class StructureTest(unittest.TestCase):
    def test_every_kind_is_one_kubernetes_1_25_to_1_32_serves(self):
        for case, objects in RENDERS.items():
            kinds = {(o["apiVersion"], o["kind"]) for o in objects}
            with self.subTest(case=case):
                self.assertEqual(kinds - BUILT_IN - CRDS, set())
                if case == "default":
                    self.assertEqual(kinds & CRDS, set())

    def test_no_insecure_skip_tls_verify_and_every_apiservice_has_its_ca(self):
        for case, objects in RENDERS.items():
            self.assertNotIn("insecureSkipTLSVerify", json.dumps(objects), case)
            for apiservice in all_of(objects, "APIService"):
                inject = apiservice["metadata"].get("annotations", {}).get(
                    "cert-manager.io/inject-ca-from")
                with self.subTest(case=case, apiservice=apiservice["metadata"]["name"]):
                    if "tls.mode=certManager" in SETS[case] or case == "example-cert-manager":
                        self.assertNotIn("caBundle", apiservice["spec"])
                        namespace, name = inject.split("/")
                        self.assertEqual(namespace, NAMESPACE)
                        self.assertEqual(len(named(objects, "Certificate", name)), 1)
                    else:
                        self.assertIsNone(inject)
                        self.assertTrue(apiservice["spec"]["caBundle"])

    def test_every_reference_resolves(self):
        for case, objects in RENDERS.items():
            with self.subTest(case=case):
                self.check_references(case, objects)

    def check_references(self, case, objects):
        sets = SETS[case]
        accounts = {(o["metadata"]["namespace"], o["metadata"]["name"])
                    for o in all_of(objects, "ServiceAccount")}
        spec = pod_spec(objects)
        if "serviceAccount.create=false" in sets:
            self.assertEqual(spec["serviceAccountName"], "adapter")
            accounts.add((NAMESPACE, "adapter"))  # the user's own, named in values
        self.assertIn((NAMESPACE, spec["serviceAccountName"]), accounts)
        for pod in all_of(objects, "Pod"):
            self.assertIn((NAMESPACE, pod["spec"]["serviceAccountName"]), accounts)

        # Secrets: rendered, issued by a rendered Certificate, or the user's named in values.
        secrets = {o["metadata"]["name"] for o in all_of(objects, "Secret")}
        secrets |= {c["spec"]["secretName"] for c in all_of(objects, "Certificate")}
        secrets |= {s.split("=", 1)[1] for s in sets if s.startswith("tls.existingSecret.name=")}
        configmaps = {o["metadata"]["name"] for o in all_of(objects, "ConfigMap")}
        configmaps |= {s.split("=", 1)[1] for s in sets
                       if s.startswith("config.existingConfigMap=")}
        for volume in spec["volumes"]:
            if "secret" in volume:
                self.assertIn(volume["secret"]["secretName"], secrets)
            if "configMap" in volume:
                self.assertIn(volume["configMap"]["name"], configmaps)
        main = test_deploy.container(objects)
        self.assertEqual({m["name"] for m in main["volumeMounts"]},
                         {v["name"] for v in spec["volumes"]})

        labels = test_deploy.pod_labels(objects)
        service = test_deploy.one(objects, "Service")
        self.assertTrue(test_deploy.selects(service["spec"]["selector"], labels))
        port_names = {p["name"] for p in main["ports"]}
        for port in service["spec"]["ports"]:
            self.assertIn(port["targetPort"], port_names)
        for pdb in all_of(objects, "PodDisruptionBudget"):
            self.assertTrue(test_deploy.selects(pdb["spec"]["selector"]["matchLabels"], labels))
        for apiservice in all_of(objects, "APIService"):
            target = apiservice["spec"]["service"]
            self.assertEqual((target["namespace"], target["name"]),
                             (service["metadata"]["namespace"], service["metadata"]["name"]))
            self.assertIn(target["port"], [p["port"] for p in service["spec"]["ports"]])

        roles = {(o["kind"], o["metadata"]["name"]) for o in objects
                 if o["kind"] in ("ClusterRole", "Role")} | BUILT_IN_ROLES
        for binding in all_of(objects, "ClusterRoleBinding") + all_of(objects, "RoleBinding"):
            self.assertIn((binding["roleRef"]["kind"], binding["roleRef"]["name"]), roles)
            for subject in binding["subjects"]:
                self.assertEqual(subject["kind"], "ServiceAccount")
                self.assertIn((subject["namespace"], subject["name"]),
                              accounts | OUTSIDE_ACCOUNTS)

        for monitor in all_of(objects, "ServiceMonitor"):
            self.assertTrue(test_deploy.selects(monitor["spec"]["selector"]["matchLabels"],
                                                service["metadata"]["labels"]))
            service_ports = {p["name"] for p in service["spec"]["ports"]}
            for endpoint in monitor["spec"]["endpoints"]:
                self.assertIn(endpoint["port"], service_ports)
                ca = endpoint["tlsConfig"]["ca"]
                if "secret" in ca:
                    self.assertIn(ca["secret"]["name"], secrets)
                else:
                    self.assertIn(ca["configMap"]["name"], configmaps)
                self.assertEqual(endpoint["tlsConfig"]["serverName"],
                                 "%s.%s.svc" % (service["metadata"]["name"], NAMESPACE))
        issuers = {o["metadata"]["name"] for o in all_of(objects, "Issuer")}
        for certificate in all_of(objects, "Certificate"):
            issuer = certificate["spec"]["issuerRef"]
            if issuer.get("kind", "Issuer") == "Issuer":
                self.assertIn(issuer["name"], issuers)
        for issuer in all_of(objects, "Issuer"):
            if "ca" in issuer["spec"]:
                self.assertIn(issuer["spec"]["ca"]["secretName"], secrets)

    def test_the_pod_is_hardened_probed_and_spread(self):
        for case, objects in RENDERS.items():
            spec = pod_spec(objects)
            main = test_deploy.container(objects)
            with self.subTest(case=case):
                self.assertEqual(spec["securityContext"]["seccompProfile"],
                                 {"type": "RuntimeDefault"})
                self.assertTrue(spec["securityContext"]["runAsNonRoot"])
                self.assertGreater(spec["securityContext"]["runAsUser"], 0)
                self.assertTrue(main["securityContext"]["readOnlyRootFilesystem"])
                self.assertFalse(main["securityContext"]["allowPrivilegeEscalation"])
                self.assertEqual(main["securityContext"]["capabilities"]["drop"], ["ALL"])
                self.assertEqual(spec["priorityClassName"], "system-cluster-critical")
                for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
                    get = main[probe]["httpGet"]
                    self.assertEqual((get["scheme"], get["path"], get["port"]),
                                     ("HTTPS", path, "https"))
                for mount in main["volumeMounts"]:
                    self.assertTrue(mount["readOnly"], mount)
                replicas = test_deploy.deployment(objects)["spec"]["replicas"]
                pdbs = all_of(objects, "PodDisruptionBudget")
                if replicas > 1:
                    self.assertEqual(len(pdbs), 1)
                    self.assertLess(pdbs[0]["spec"]["minAvailable"], replicas)
                    keys = [c["topologyKey"] for c in spec["topologySpreadConstraints"]]
                    self.assertIn("kubernetes.io/hostname", keys)
                else:
                    self.assertEqual(pdbs, [])  # it would block every node drain
        self.assertEqual(test_deploy.deployment(RENDERS["default"])["spec"]["replicas"], 2)

    def test_kubernetes_1_25_to_1_32_install_it_and_1_24_is_refused(self):
        for version, accepted in (("1.24.17", False), ("1.25.0", True), ("1.32.3", True)):
            result = HELM.run("template", "x", CHART, "--kube-version", version)
            self.assertEqual(result.returncode == 0, accepted, (version, result.stderr))

    def test_the_cert_manager_certificate_names_the_service(self):
        for case in ("tls-certManager", "tls-certManager-issuer", "example-cert-manager"):
            certificate = named(RENDERS[case], "Certificate", "metrics-adapter-serving-cert")[0]
            self.assertIn("metrics-adapter.%s.svc" % NAMESPACE, certificate["spec"]["dnsNames"])
            self.assertEqual(all_of(RENDERS[case], "Secret"), [])  # cert-manager writes it
        issuer = named(RENDERS["tls-certManager-issuer"], "Certificate",
                       "metrics-adapter-serving-cert")[0]["spec"]["issuerRef"]
        self.assertEqual((issuer["name"], issuer["kind"]), ("ca", "ClusterIssuer"))
        self.assertEqual(all_of(RENDERS["tls-certManager-issuer"], "Issuer"), [])

    def test_host_network_serves_on_the_port_it_names(self):
        objects = RENDERS["hostNetwork"]
        spec = pod_spec(objects)
        self.assertTrue(spec["hostNetwork"])
        self.assertEqual(spec["dnsPolicy"], "ClusterFirstWithHostNet")
        port = int(flags(objects)["secure-port"])
        self.assertEqual(port, 10260)
        self.assertEqual([p["containerPort"] for p in test_deploy.container(objects)["ports"]],
                         [port])
        self.assertNotIn("hostNetwork", pod_spec(RENDERS["default"]))


class ApiSwitchTest(unittest.TestCase):
    def served(self, case):
        return {(a["spec"]["group"], a["spec"]["version"])
                for a in all_of(RENDERS[case], "APIService")}

    def test_each_switch_registers_or_drops_its_apiservice(self):
        self.assertEqual(self.served("default"), DEFAULT_APIS)
        for version in ("v1beta1", "v1beta2"):
            self.assertEqual(self.served("api-customMetrics.%s-off" % version),
                             DEFAULT_APIS - {("custom.metrics.k8s.io", version)})
        self.assertEqual(self.served("api-externalMetrics-off"),
                         DEFAULT_APIS - {("external.metrics.k8s.io", "v1beta1")})
        self.assertEqual(self.served("api-resourceMetrics"),
                         DEFAULT_APIS | {("metrics.k8s.io", "v1beta1")})
        self.assertEqual(self.served("api-forecastObserver"),
                         DEFAULT_APIS | {("forecast.metrics-adapter.io", "v1alpha1")})

    def test_the_hpa_may_read_exactly_the_groups_served(self):
        for case in ("default", "api-externalMetrics-off", "api-customMetrics.v1beta1-off"):
            role = named(RENDERS[case], "ClusterRole", "metrics-adapter-metrics-reader")[0]
            groups = {g for g, _ in self.served(case)}
            self.assertEqual(set(role["rules"][0]["apiGroups"]), groups, case)

    def test_resource_metrics_without_resource_rules_is_refused(self):
        result = HELM.run("template", "x", CHART, "--set", "apis.resourceMetrics.enabled=true")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no resourceRules", result.stderr)

    def test_the_resource_metrics_apiservice_comes_with_kubectl_tops_reader_role(self):
        role = named(RENDERS["api-resourceMetrics"], "ClusterRole",
                     "metrics-adapter-aggregated-metrics-reader")[0]
        self.assertEqual(role["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"],
                         "true")
        self.assertEqual(named(RENDERS["default"], "ClusterRole",
                               "metrics-adapter-aggregated-metrics-reader"), [])


class ConfigTest(unittest.TestCase):
    def component_presets(self, component):
        """The config/ files deploy/components/<component>'s comment names, in order."""
        with open(os.path.join(harness.REPO, "deploy", "components", component,
                               "kustomization.yaml")) as f:
            return list(dict.fromkeys(re.findall(r"\b(config/[a-z0-9-]+\.yaml)", f.read())))

    def test_the_chart_copies_of_the_presets_are_config_byte_for_byte(self):
        copies = os.path.join(CHART, "files", "config")
        compared = 0
        for name in sorted(os.listdir(copies)):
            original = os.path.join(harness.REPO, "config", name)
            if not os.path.exists(original):
                continue  # the chart's own forecast preset; test_each_preset_loads checks it
            with open(original, "rb") as a, open(os.path.join(copies, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), "charts/metrics-adapter/files/config/%s "
                                 "is out of step: cp config/%s there" % (name, name))
            compared += 1
        self.assertEqual(compared, len(os.listdir(os.path.join(harness.REPO, "config"))))
        with open(os.path.join(harness.REPO, "docs", "grafana-dashboard.json"), "rb") as a, \
                open(os.path.join(CHART, "files", "grafana-dashboard.json"), "rb") as b:
            self.assertEqual(a.read(), b.read(), "cp docs/grafana-dashboard.json "
                             "charts/metrics-adapter/files/")

    def test_each_preset_is_merged_as_merge_presets_does(self):
        # The same files deploy/components names for the same preset, merged by the script.
        sources = {"dcgm": self.component_presets("dcgm"),
                   "alibaba": self.component_presets("alibaba"),
                   "llm-inference": self.component_presets("llm-inference"),
                   "resource-metrics": self.component_presets("resource-metrics"),
                   "forecast": ["config/forecast-gpu.yaml"]}
        for preset, files in sources.items():
            paths = [os.path.join(CHART, "files", "config", os.path.basename(f)) for f in files]
            expected = test_deploy.checked(
                [os.path.join(harness.REPO, "scripts", "merge_presets.py")] + paths)
            with self.subTest(preset=preset):
                self.assertEqual(config_text(RENDERS["preset-" + preset]), expected)
        # Two presets that both have rules: one `rules:` key, the second's after the first's.
        both = HELM.template(WORK, sets=["config.presets={alibaba,llm-inference}"])
        text = config_text(both)
        self.assertEqual(len(re.findall(r"(?m)^rules:", text)), 1)
        self.assertLess(text.index("nvidia_gpu_"), text.index("vllm:"))

    def test_values_blocks_follow_the_presets_blocks(self):
        import yaml  # as tests/integration/test_kubernetes.py; both sides parsed the same way
        objects = RENDERS["example-own-rules"]
        config = yaml.safe_load(config_text(objects))
        with open(os.path.join(CHART, "files", "config", "gpu-alibaba-exporter.yaml")) as f:
            preset = yaml.safe_load(f)
        with open(examples()["example-own-rules"]) as f:
            values = yaml.safe_load(f)["config"]
        self.assertEqual(config["rules"], preset["rules"] + values["rules"])
        for key in ("externalRules", "forecastRules", "backends"):
            self.assertEqual(config[key], values[key], key)

    def test_a_second_resource_rules_block_is_refused(self):
        result = HELM.run("template", "x", CHART, "--set", "config.presets={resource-metrics}",
                          "--set", "config.resourceRules.window=1m")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("config.resourceRules: a preset already has resourceRules", result.stderr)

    def test_an_existing_configmap_replaces_the_chart_config(self):
        objects = RENDERS["existing-config"]
        self.assertEqual(all_of(objects, "ConfigMap"), [])
        volume = next(v for v in pod_spec(objects)["volumes"] if v["name"] == "config")
        self.assertEqual(volume["configMap"]["name"], "my-rules")

    def test_no_checksum_restarts_pods_on_a_config_change(self):
        # The adapter re-reads the config and the certificate: a values change that only edits
        # rules must leave the pod template as it was, so `helm upgrade` restarts nothing.
        before = test_deploy.deployment(RENDERS["preset-dcgm"])["spec"]["template"]
        after = test_deploy.deployment(RENDERS["preset-alibaba"])["spec"]["template"]
        self.assertNotEqual(config_text(RENDERS["preset-dcgm"]),
                            config_text(RENDERS["preset-alibaba"]))
        self.assertEqual(before, after)


class DryRunTest(unittest.TestCase):
    """The binary's --dry-run (flags, config, certificate files) on what each render mounts."""

    def test_the_binary_accepts_every_renders_flags_and_files(self):
        checked = 0
        for case, objects in RENDERS.items():
            if not all_of(objects, "Secret") or not all_of(objects, "ConfigMap"):
                continue  # the certificate or the config comes from outside the chart
            args = chart_support.materialize(objects, os.path.join(WORK, "mounts-" + case))
            result = test_deploy.run([ARGS.binary, "--dry-run"] + args,
                                     env=test_deploy.offline_env())
            with self.subTest(case=case):
                self.assertEqual(result.returncode, 0, result.stderr)
                lines = [line for line in result.stdout.splitlines()
                         if not line.startswith("warning:")]
                self.assertTrue(lines[0].startswith("dry run OK: config "), result.stdout)
                self.assertIn("authentication delegated", result.stdout)
                for line in result.stdout.splitlines():
                    if line.startswith("warning:"):  # only rules waiting for a CRD
                        self.assertRegex(line, r'unknown resource "[a-z]+\.[a-z0-9.-]+"')
            checked += 1
        self.assertGreaterEqual(checked, len(PRESETS) + 5)

    def test_the_audit_policy_and_the_log_flags_reach_the_binary(self):
        objects = RENDERS["audit-json"]
        values = flags(objects)
        self.assertEqual((values["v"], values["log-format"]), ("6", "json"))
        policy = chart_support.materialize(objects, os.path.join(WORK, "mounts-audit-check"))
        path = test_deploy.flag_values(policy)["audit-policy-file"]
        with open(path) as f:
            self.assertIn("kind: Policy", f.read())
        self.assertNotIn("v", flags(RENDERS["default"]))  # the binary's default unless set


class MonitoringTest(unittest.TestCase):
    def test_each_monitoring_object_is_off_by_default_and_a_switch(self):
        kinds = {"ServiceMonitor", "PrometheusRule"}
        self.assertEqual({o["kind"] for o in RENDERS["default"]} & kinds, set())
        self.assertEqual({o["kind"] for o in RENDERS["monitoring"]} & kinds, kinds)
        dashboards = [o for o in RENDERS["monitoring"] if o["kind"] == "ConfigMap"
                      and o["metadata"]["labels"].get("grafana_dashboard") == "1"]
        self.assertEqual(len(dashboards), 1)
        with open(os.path.join(harness.REPO, "docs", "grafana-dashboard.json")) as f:
            self.assertEqual(json.loads(dashboards[0]["data"]["metrics-adapter.json"]),
                             json.load(f))

    def test_the_alerts_pass_promtool(self):
        if shutil.which("promtool") is None:
            self.skipTest("promtool (Debian's prometheus package) is missing")
        for case in ("monitoring", "example-monitoring"):
            rule = test_deploy.one(RENDERS[case], "PrometheusRule")
            path = os.path.join(WORK, "rules-%s.json" % case)
            with open(path, "w") as f:  # JSON is YAML
                json.dump({"groups": rule["spec"]["groups"]}, f)
            result = subprocess.run(["promtool", "check", "rules", path], capture_output=True,
                                    text=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            alerts = {r["alert"] for g in rule["spec"]["groups"] for r in g["rules"]}
            self.assertTrue({"MetricsAdapterAPIServiceUnavailable",
                             "MetricsAdapterBackendUnreachable", "MetricsAdapterErrors",
                             "MetricsAdapterForecastStale",
                             "MetricsAdapterAuditEventsDropped"} <= alerts, alerts)

    def test_the_unavailable_alert_names_exactly_the_registered_apiservices(self):
        for case in ("monitoring", "example-llm-inference", "example-resource-metrics"):
            objects = RENDERS[case]
            if not all_of(objects, "PrometheusRule"):
                objects = HELM.template(WORK, values=[examples()[case]], sets=MONITORING)
            rule = test_deploy.one(objects, "PrometheusRule")
            expr = next(r["expr"] for r in rule["spec"]["groups"][0]["rules"]
                        if r["alert"] == "MetricsAdapterAPIServiceUnavailable")
            pattern = re.search(r'name=~"([^"]*)"', expr).group(1).replace("\\\\", "\\")
            every = ["v1beta1.custom.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io",
                     "v1beta1.external.metrics.k8s.io", "v1beta1.metrics.k8s.io",
                     "v1alpha1.forecast.metrics-adapter.io"]
            registered = {a["metadata"]["name"] for a in all_of(objects, "APIService")}
            matched = {name for name in every if re.fullmatch(pattern, name)}
            self.assertEqual(matched, registered, case)

    def test_the_scrape_verifies_the_serving_certificate(self):
        monitor = test_deploy.one(RENDERS["monitoring"], "ServiceMonitor")
        endpoint = monitor["spec"]["endpoints"][0]
        self.assertEqual(endpoint["scheme"], "https")
        self.assertNotIn("insecureSkipVerify", endpoint["tlsConfig"])
        secret = test_deploy.one(RENDERS["monitoring"], "Secret")
        self.assertEqual(endpoint["tlsConfig"]["ca"]["secret"],
                         {"name": secret["metadata"]["name"], "key": "ca.crt"})


class ReadmeTest(unittest.TestCase):
    def test_the_value_table_is_the_schemas(self):
        with open(os.path.join(CHART, "README.md")) as f:
            readme = f.read()
        table = readme[readme.index("| value | default | meaning |"):]
        printed = test_deploy.checked([os.path.join(harness.REPO, "scripts",
                                                    "chart_values_table.py")])
        self.assertEqual(table, printed, "paste scripts/chart_values_table.py's output over "
                         "the table in charts/metrics-adapter/README.md")
        documented = re.findall(r"(?m)^\| `([A-Za-z0-9_.]+)` \|", table)
        schema_paths = set()

        def walk(schema, prefix):
            for name, child in schema.get("properties", {}).items():
                schema_paths.add(prefix + name)
                walk(child, prefix + name + ".")
        with open(os.path.join(CHART, "values.schema.json")) as f:
            walk(json.load(f), "")
        self.assertTrue(set(documented) <= schema_paths)
        # Every default in values.yaml is documented: itself, the block holding it, or (an
        # empty block such as tls.certManager.issuerRef) its fields.
        import yaml
        with open(os.path.join(CHART, "values.yaml")) as f:
            values = yaml.safe_load(f)

        def paths(value, prefix):
            if isinstance(value, dict) and value:
                for name, child in value.items():
                    yield from paths(child, prefix + name + ".")
            else:
                yield prefix[:-1]
        for path in paths(values, ""):
            self.assertTrue(any(path == d or path.startswith(d + ".") or d.startswith(path + ".")
                                for d in documented), path)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
