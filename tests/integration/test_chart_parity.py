"""The chart and the kustomize kit in deploy/ make the same objects: each kit install (default,
each overlay, each opt-in component) rendered with `kubectl kustomize` after certs/make-certs.sh,
the chart rendered with the equivalent values, and every object compared field by field after
the few differences below, which are the only ones allowed. A change to one that is not made to
the other fails here."""

import base64
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

# kit install name -> (deploy/components it adds to deploy/base, the chart's --set assignments)
PAIRS = {
    "default": (["dcgm"], []),
    "alibaba": (["alibaba"], ["config.presets={alibaba}"]),
    "llm-inference": (["llm-inference"], ["config.presets={llm-inference}"]),
    "resource-metrics": (["dcgm", "resource-metrics"],
                         ["apis.resourceMetrics.enabled=true",
                          "config.presets={dcgm,resource-metrics}"]),
    "forecast-observer": (["dcgm", "forecast-observer"], ["apis.forecastObserver=true"]),
}
# What may differ, and why:
# - the kit makes its Namespace; the chart installs into the release's (--create-namespace);
# - the chart's selectors and pod labels also carry app.kubernetes.io/instance, so two releases
#   never select each other's pods; its objects carry Helm's labels (the kit: part-of);
# - the chart's pod has priorityClassName system-cluster-critical (the issue asks for it: an
#   unavailable aggregated API stalls namespace deletion and discovery);
# - kustomize's generated Secret and ConfigMap names end in a content hash;
# - the certificates differ (each side makes its own CA): both are checked to verify instead;
# - the dcgm preset is the two files concatenated in the kit, merged in the chart: the same YAML;
# - the resource-metrics component leaves the rules to the user, the chart adds the preset.
KIT_ONLY_KINDS = {"Namespace"}
INSTANCE = "app.kubernetes.io/instance"
SERVICE_HOST = "metrics-adapter.custom-metrics.svc"

WORK = None
KIT = {}  # pair -> objects
CHART = {}  # pair -> objects


def kit_render(components):
    name = "parity-" + "-".join(components)
    overlay = os.path.join(WORK, "deploy", "overlays", name)
    os.makedirs(overlay, exist_ok=True)
    with open(os.path.join(overlay, "kustomization.yaml"), "w") as f:
        f.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                "resources:\n- ../../base\ncomponents:\n%s" %
                "".join("- ../../components/%s\n" % c for c in components))
    path = os.path.join(WORK, name + ".yaml")
    with open(path, "w") as f:
        f.write(test_deploy.checked([harness.modern_tool("kubectl"), "kustomize", overlay]))
    return test_deploy.json_objects(path)


def setUpModule():
    global WORK
    WORK = tempfile.mkdtemp(prefix="ma-chart-parity-")
    shutil.copytree(os.path.join(harness.REPO, "deploy"), os.path.join(WORK, "deploy"),
                    ignore=lambda d, names: ["certs"] if os.path.basename(d) == "base" else [])
    test_deploy.checked(["bash", harness.MAKE_CERTS, "--out", os.path.join(WORK, "ca"),
                         "--kustomize", os.path.join(WORK, "deploy", "base", "certs")])
    helm = chart_support.Helm(WORK)
    for pair, (components, sets) in PAIRS.items():
        KIT[pair] = kit_render(components)
        CHART[pair] = helm.template(WORK, sets=sets)


def tearDownModule():
    if WORK and not os.environ.get("KEEP_TEST_DIRS"):
        shutil.rmtree(WORK, ignore_errors=True)


def without_hash_suffixes(objects):
    """kustomize names generated Secrets and ConfigMaps <name>-<10-character hash>; the same
    objects under their base names, references included."""
    renames = {}
    for o in objects:
        if o["kind"] in ("Secret", "ConfigMap"):
            match = re.fullmatch(r"(.+)-[a-z0-9]{10}", o["metadata"]["name"])
            if match:
                renames[o["metadata"]["name"]] = match.group(1)

    def rename(value):
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        if isinstance(value, list):
            return [rename(v) for v in value]
        return renames.get(value, value) if isinstance(value, str) else value
    return [rename(o) for o in objects]


def normalized(value, key=None):
    """An object with what may differ taken out (see the list at the top)."""
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if not isinstance(value, dict):
        return value
    result = {}
    for k, v in value.items():
        if key == "metadata" and k == "labels":
            # Labels that do something stay (the aggregated roles'); naming labels go.
            v = {name: text for name, text in v.items()
                 if not name.startswith(("app.kubernetes.io/", "helm.sh/"))}
            if not v:
                continue
        if k == INSTANCE:
            continue
        if k == "priorityClassName":
            continue
        result[k] = normalized(v, k)
    return result


def comparable(objects):
    """{(kind, namespace, name): normalized object} without secrets' key material, the CA
    bundles and the rules' text, which the tests below compare on their own terms."""
    import yaml  # as tests/integration/test_kubernetes.py
    result = {}
    for o in without_hash_suffixes(objects):
        if o["kind"] in KIT_ONLY_KINDS or "helm.sh/hook" in o["metadata"].get("annotations", {}):
            continue
        o = normalized(o)
        if o["kind"] == "Secret":
            o["data"] = sorted(o["data"])
        if o["kind"] == "APIService":
            o["spec"].pop("caBundle")
        if o["kind"] == "ConfigMap":
            o["data"] = {k: yaml.safe_load(v) for k, v in o["data"].items()}
        meta = o["metadata"]
        result[(o["kind"], meta.get("namespace", ""), meta["name"])] = o
    return result


class ParityTest(unittest.TestCase):
    maxDiff = None
    def test_the_same_objects_field_by_field(self):
        for pair in PAIRS:
            kit, chart = comparable(KIT[pair]), comparable(CHART[pair])
            if pair == "resource-metrics":  # the kit leaves these rules to the user
                kit.pop(("ConfigMap", "custom-metrics", "metrics-adapter-config"))
                chart.pop(("ConfigMap", "custom-metrics", "metrics-adapter-config"))
            with self.subTest(pair=pair):
                self.assertEqual(sorted(chart), sorted(kit))
                for key in kit:
                    self.assertEqual(chart[key], kit[key], key)

    def test_what_differs_is_what_the_list_says(self):
        # The allowed differences, seen on the default install, so the list stays true.
        kit, chart = KIT["default"], CHART["default"]
        self.assertEqual([o["kind"] for o in kit if o["kind"] in KIT_ONLY_KINDS], ["Namespace"])
        chart_pod = test_deploy.deployment(chart)["spec"]["template"]
        kit_pod = test_deploy.deployment(kit)["spec"]["template"]
        self.assertEqual(chart_pod["spec"]["priorityClassName"], "system-cluster-critical")
        self.assertNotIn("priorityClassName", kit_pod["spec"])
        self.assertEqual(chart_pod["metadata"]["labels"][INSTANCE], chart_support.RELEASE)
        self.assertEqual(set(chart_pod["metadata"]["labels"]) - set(kit_pod["metadata"]["labels"]),
                         {INSTANCE})

    def test_both_sides_verify_the_serving_certificate_for_the_service_name(self):
        for side, renders in (("kit", KIT), ("chart", CHART)):
            for pair, objects in renders.items():
                secret = test_deploy.one(objects, "Secret")
                files = {k: base64.b64decode(v) for k, v in secret["data"].items()}
                self.assertEqual(sorted(files), ["ca.crt", "tls.crt", "tls.key"])
                for apiservice in test_deploy.all_of(objects, "APIService"):
                    self.assertEqual(base64.b64decode(apiservice["spec"]["caBundle"]),
                                     files["ca.crt"], (side, pair))
                directory = os.path.join(WORK, "verify-%s-%s" % (side, pair))
                os.makedirs(directory)
                for name, content in files.items():
                    with open(os.path.join(directory, name), "wb") as f:
                        f.write(content)
                result = subprocess.run(
                    ["openssl", "verify", "-CAfile", os.path.join(directory, "ca.crt"),
                     "-purpose", "sslserver", "-verify_hostname", SERVICE_HOST,
                     os.path.join(directory, "tls.crt")], capture_output=True, text=True)
                self.assertEqual(result.returncode, 0, (side, pair, result.stderr))
                # The key is the certificate's.
                public = [subprocess.run(["openssl", kind, "-in", os.path.join(directory, name),
                                          "-noout", "-pubkey"] if kind == "x509" else
                                         ["openssl", "pkey", "-in", os.path.join(directory, name),
                                          "-pubout"], capture_output=True, text=True).stdout
                          for kind, name in (("x509", "tls.crt"), ("pkey", "tls.key"))]
                self.assertEqual(public[0], public[1], (side, pair))

    def test_the_default_rules_are_the_kits_text_merged(self):
        # Textually the chart's dcgm config is merge_presets.py's; as YAML it is the kit's.
        kit = test_deploy.config_text(KIT["default"])
        chart = test_deploy.config_text(CHART["default"])
        import yaml
        self.assertEqual(yaml.safe_load(chart), yaml.safe_load(kit))
        self.assertEqual(sorted(kit.splitlines()), sorted(chart.splitlines()))


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
