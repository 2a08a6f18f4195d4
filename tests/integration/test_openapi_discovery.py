"""What a current kube-apiserver (1.30+) and kubectl ask of an aggregated server, against the real
binary: OpenAPI v2 and v3 (the aggregator's OpenAPI controllers download them as
system:aggregator), aggregated discovery at /apis (the aggregator's discovery manager asks for
it as system:kube-aggregator in system:masters, with If-None-Match), and kubectl 1.31 as a real
client: `kubectl explain` of our kinds and `kubectl api-resources` from one /apis request.

The adapter runs with delegated authentication and authorization against the fake Kubernetes
API, whose SubjectAccessReviews allow what RBAC's system:discovery role allows (the OpenAPI and
discovery paths, to system:authenticated). Its config serves custom metrics (the Alibaba GPU
rules), an external metric and metrics.k8s.io (resource rules), so every kind we return is
served; each live answer is checked against the schema the OpenAPI document gives its kind."""

import json
import os
import socket
import ssl
import subprocess
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
REPO = harness.REPO
EXTERNAL_METRIC = "gpu_utilization_avg"
EXTERNAL_RULE = """externalRules:
- seriesQuery: '{__name__="DCGM_FI_DEV_GPU_UTIL"}'
  resources:
    namespaced: false
  name:
    matches: ^DCGM_FI_DEV_GPU_UTIL$
    as: %s
  metricsQuery: avg(<<.Series>>{<<.LabelMatchers>>})
""" % EXTERNAL_METRIC
AGGREGATED_ACCEPT = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                     "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList")
ADMIN_TOKEN = "admin-token"

PROCS = ADAPTER = KUBE = KUBECTL = KUBECONFIG = FRONT_PROXY = None
POD_NAMESPACE = None


def write_config(workdir):
    """The Alibaba GPU rules, the resource rules and one external rule in one config."""
    result = subprocess.run(
        ["python3", os.path.join(REPO, "scripts", "merge_presets.py"),
         os.path.join(REPO, "config", "gpu-alibaba-exporter.yaml"),
         os.path.join(REPO, "config", "resource-rules.yaml")],
        capture_output=True, text=True, check=True, timeout=60)
    path = os.path.join(workdir, "config.yaml")
    with open(path, "w") as f:
        f.write(result.stdout + EXTERNAL_RULE)
    return path


def setUpModule():
    global PROCS, ADAPTER, KUBE, KUBECTL, KUBECONFIG, FRONT_PROXY, POD_NAMESPACE
    PROCS = harness.Processes()
    try:
        KUBECTL = harness.modern_tool("kubectl")
        pki = os.path.join(PROCS.workdir, "pki")
        front_proxy_ca = harness.make_ca(pki, "front-proxy-ca")
        FRONT_PROXY = harness.make_client_cert(pki, front_proxy_ca, "front-proxy",
                                               "front-proxy-client")
        exporter = harness.Exporter(PROCS, mode="static")
        prometheus = harness.Prometheus(PROCS, exporter.port)
        prometheus.wait_for_series("DCGM_FI_DEV_GPU_UTIL", 1)
        pods = sorted({(labels["namespace"], labels["pod"])
                       for name, labels, _ in exporter.samples()
                       if name == "DCGM_FI_DEV_GPU_UTIL" and labels["pod"]})
        POD_NAMESPACE = pods[0][0]
        with open(front_proxy_ca[0]) as f:
            front_proxy_pem = f.read()
        discovery = [{"group": "system:authenticated", "nonResourceURL": url}
                     for url in ("/apis", "/apis/*", "/openapi", "/openapi/*", "/version")]
        KUBE = harness.FakeKube(PROCS, {
            "pods": [{"name": pod, "namespace": ns, "labels": {"app": "gpu"}}
                     for ns, pod in pods],
            "nodes": [{"name": "gpu-node-1"}, {"name": "gpu-node-2"}],
            "namespaces": [{"name": ns} for ns in sorted({ns for ns, _ in pods})],
            "auth": {
                "tokens": {ADMIN_TOKEN: {"username": "admin", "groups": ["system:masters"]}},
                "allow": discovery,
                "configmap": {
                    "requestheader-client-ca-file": front_proxy_pem,
                    "requestheader-allowed-names": '["front-proxy-client"]',
                    "requestheader-username-headers": '["X-Remote-User"]',
                    "requestheader-group-headers": '["X-Remote-Group"]',
                    "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]'}}})
        ADAPTER = harness.Adapter(
            PROCS, ARGS.binary, write_config(PROCS.workdir), prometheus.url,
            delegated_auth=True, extra_args=["--lister-kubeconfig=" + KUBE.kubeconfig])
        KUBECONFIG = os.path.join(PROCS.workdir, "kubeconfig-admin")
        with open(ADAPTER.kubeconfig) as f:
            text = f.read()
        with open(KUBECONFIG, "w") as f:
            f.write(text.replace("token: integration-test", "token: " + ADMIN_TOKEN))
        harness.wait_until(
            lambda: "pods/duty_cycle_current" in kubectl_raw(
                "/apis/custom.metrics.k8s.io/v1beta1"),
            timeout=60, what="the first relist")
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()


def kubectl(*args, cache_dir=None):
    """kubectl 1.31 as the admin (system:masters); a fresh discovery cache unless given one."""
    cache = cache_dir or os.path.join(PROCS.workdir, "kube-cache-%d" % harness.free_port())
    result = subprocess.run([KUBECTL, "--kubeconfig", KUBECONFIG, "--cache-dir", cache]
                            + list(args), capture_output=True, text=True, timeout=60)
    return result.returncode, result.stdout, result.stderr


def kubectl_raw(path):
    code, out, err = kubectl("get", "--raw", path)
    if code != 0:
        raise AssertionError("kubectl get --raw %s: %s" % (path, err))
    return out


def as_aggregator(path, user, groups=(), headers=None):
    """(status, headers, body bytes) of a GET as the kube-aggregator sends it: through the
    front proxy (its client certificate, X-Remote-User/Group)."""
    context = ssl.create_default_context(cafile=ADAPTER.ca_file)
    context.load_cert_chain(*FRONT_PROXY)
    connection = socket.create_connection(("127.0.0.1", ADAPTER.port), timeout=30)
    tls = context.wrap_socket(connection, server_hostname="127.0.0.1")
    try:
        lines = ["GET %s HTTP/1.1" % path, "Host: 127.0.0.1", "Connection: close",
                 "X-Remote-User: " + user]
        lines += ["X-Remote-Group: " + group for group in groups]
        lines += ["%s: %s" % pair for pair in (headers or {}).items()]
        tls.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while True:
            chunk = tls.recv(1 << 16)
            if not chunk:
                break
            answer += chunk
    finally:
        tls.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), fields, body


def validate(instance, schema, definitions, where="$"):
    """The structural checks of a Swagger 2.0 schema that a client relies on: $ref resolved,
    type, required properties, array items and map values, recursively; an optional field may
    be null, as Go's decoder reads it. Returns the errors."""
    if "$ref" in schema:
        return validate(instance, definitions[schema["$ref"].split("/")[-1]], definitions, where)
    errors = []
    kind = schema.get("type")
    python_types = {"object": dict, "array": list, "string": str, "boolean": bool}
    if kind in python_types and not isinstance(instance, python_types[kind]):
        return ["%s: %r is not of type %s" % (where, instance, kind)]
    if kind == "integer" and (not isinstance(instance, int) or isinstance(instance, bool)):
        return ["%s: %r is not an integer" % (where, instance)]
    if kind == "object":
        for name in schema.get("required", []):
            if name not in instance:
                errors.append("%s: required %s is missing" % (where, name))
        properties = schema.get("properties", {})
        for name, value in instance.items():
            if value is None and name not in schema.get("required", []):
                continue  # an optional field written as null (Go's nil pointer) is absent
            if name in properties:
                errors += validate(value, properties[name], definitions, where + "." + name)
            elif "additionalProperties" in schema:
                errors += validate(value, schema["additionalProperties"], definitions,
                                   "%s[%s]" % (where, name))
            elif properties:
                errors.append("%s: %s is not in the schema" % (where, name))
    if kind == "array":
        for i, item in enumerate(instance):
            errors += validate(item, schema["items"], definitions, "%s[%d]" % (where, i))
    return errors


def client_go_split(document):
    """{groupVersion: {resource name: (namespaced, kind, verbs)}} from an aggregated discovery
    document, as client-go's SplitGroupsAndResources reads it: a resource without a kind is
    only a parent; each subresource becomes "<parent>/<sub>" with the parent's scope."""
    resources = {}
    for group in document["items"]:
        for version in group["versions"]:
            if version.get("freshness") == "Stale":
                continue
            entries = resources.setdefault(group["metadata"]["name"] + "/" + version["version"],
                                           {})
            for resource in version.get("resources", []):
                namespaced = resource["scope"] == "Namespaced"
                kind = resource["responseKind"]
                if kind and any(kind.values()):
                    entries[resource["resource"]] = (namespaced, kind["kind"],
                                                     tuple(resource["verbs"] or []))
                for sub in resource.get("subresources", []):
                    sub_kind = sub["responseKind"]
                    if sub_kind and any(sub_kind.values()):
                        entries[resource["resource"] + "/" + sub["subresource"]] = (
                            namespaced, sub_kind["kind"], tuple(sub["verbs"] or []))
    return resources


class OpenApiTest(unittest.TestCase):
    def test_swagger_v2_refs_resolve_and_every_kind_served_is_defined(self):
        status, headers, body = as_aggregator("/openapi/v2", "system:aggregator",
                                              headers={"Accept": "application/json"})
        self.assertEqual(200, status, body[:300])
        swagger = json.loads(body)
        self.assertEqual("2.0", swagger["swagger"])
        definitions = swagger["definitions"]
        refs = []

        def collect(node):
            if isinstance(node, dict):
                for key, value in node.items():
                    if key == "$ref":
                        refs.append(value)
                    else:
                        collect(value)
            elif isinstance(node, list):
                for value in node:
                    collect(value)
        collect(swagger)
        self.assertTrue(refs)
        for ref in refs:
            self.assertTrue(ref.startswith("#/definitions/"), ref)
            self.assertIn(ref[len("#/definitions/"):], definitions, ref)
        by_gvk = {}
        for name, schema in definitions.items():
            for gvk in schema.get("x-kubernetes-group-version-kind", []):
                by_gvk[(gvk["group"], gvk["version"], gvk["kind"])] = schema

        # Every kind the server answers with, as it answers now, has a schema it satisfies.
        ns = POD_NAMESPACE
        answers = [
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/%s/pods/*/duty_cycle_current" % ns,
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/%s/pods/*/duty_cycle_current" % ns,
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/%s/metrics/duty_cycle_current" % ns,
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/%s/%s" % (ns, EXTERNAL_METRIC),
            "/apis/metrics.k8s.io/v1beta1/nodes",
            "/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods" % ns,
            "/apis/custom.metrics.k8s.io/v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/%s/pods/*/no_such_metric" % ns,
        ]
        kinds = set()
        for path in answers:
            _, _, body = as_aggregator(path, "admin", ["system:masters"])
            answer = json.loads(body)
            group, _, version = answer["apiVersion"].rpartition("/")
            gvk = (group, version, answer["kind"])
            kinds.add(gvk)
            self.assertIn(gvk, by_gvk, path)
            self.assertEqual([], validate(answer, by_gvk[gvk], definitions), path)
        self.assertEqual(7, len(kinds), kinds)  # both MetricValueLists, Status, ...
        self.assertTrue(headers["etag"].startswith('"'))
        status, _, body = as_aggregator("/openapi/v2", "system:aggregator",
                                        headers={"If-None-Match": headers["etag"]})
        self.assertEqual((304, b""), (status, body))

    def test_the_aggregator_is_authorized_by_a_non_resource_review(self):
        before = len(KUBE.access_reviews())
        status, _, _ = as_aggregator("/openapi/v3", "system:aggregator")
        self.assertEqual(200, status)
        reviews = KUBE.access_reviews()[before:]
        self.assertEqual([{"path": "/openapi/v3", "verb": "get"}],
                         [r.get("nonResourceAttributes") for r in reviews])
        self.assertEqual("system:aggregator", reviews[0]["user"])
        self.assertIn("system:authenticated", reviews[0]["groups"])
        # A user RBAC does not allow the path is refused, as on every other path.
        status, _, body = as_aggregator("/openapi/v2", "someone", ["system:unauthenticated"])
        self.assertEqual(403, status, body)

    def test_v3_index_and_documents_through_kubectl(self):
        index = json.loads(kubectl_raw("/openapi/v3"))["paths"]
        self.assertEqual({"apis/custom.metrics.k8s.io/v1beta1", "apis/custom.metrics.k8s.io/v1beta2",
                          "apis/external.metrics.k8s.io/v1beta1", "apis/metrics.k8s.io/v1beta1",
                          "apis/forecast.metrics-adapter.io/v1alpha1"}, set(index))
        expected_kinds = {"apis/custom.metrics.k8s.io/v1beta1": "MetricValueList",
                          "apis/custom.metrics.k8s.io/v1beta2": "MetricValueList",
                          "apis/external.metrics.k8s.io/v1beta1": "ExternalMetricValueList",
                          "apis/metrics.k8s.io/v1beta1": "PodMetrics"}
        for path, entry in index.items():
            url = entry["serverRelativeURL"]
            document = json.loads(kubectl_raw(url))
            self.assertEqual("3.0.0", document["openapi"], url)
            for route in document["paths"]:
                self.assertTrue(route.startswith("/" + path + "/"), route)
            if path in expected_kinds:
                group, version = path.split("/")[1:]
                gvks = [g for s in document["components"]["schemas"].values()
                        for g in s.get("x-kubernetes-group-version-kind", [])]
                self.assertIn({"group": group, "kind": expected_kinds[path], "version": version},
                              gvks)
            # Immutable under its hash; 304 for the tag it carries; an old hash moves.
            status, headers, _ = as_aggregator(url, "system:aggregator")
            self.assertEqual(200, status)
            self.assertEqual("public, immutable", headers.get("cache-control"))
            status, _, _ = as_aggregator(url, "system:aggregator",
                                         headers={"If-None-Match": headers["etag"]})
            self.assertEqual(304, status)
            status, headers, _ = as_aggregator("/openapi/v3/%s?hash=00" % path,
                                               "system:aggregator")
            self.assertEqual((301, url), (status, headers.get("location")))

    def test_kubectl_explain_knows_our_kinds(self):
        for resource, kind, field in (("podmetrics", "PodMetrics", "containers"),
                                      ("nodemetrics", "NodeMetrics", "usage")):
            code, out, err = kubectl("explain", resource)
            self.assertEqual(0, code, err)
            self.assertIn("GROUP:      metrics.k8s.io", out)
            self.assertIn("KIND:       " + kind, out)
            self.assertIn(field, out)
        code, out, err = kubectl("explain", "podmetrics.containers.usage")
        self.assertEqual(0, code, err)
        self.assertIn("FIELD: usage <map[string]", out)
        code, out, err = kubectl("explain", "podmetrics", "--recursive")
        self.assertEqual(0, code, err)
        for field in ("containers", "name", "usage", "metadata", "timestamp", "window"):
            self.assertIn(field, out)


class AggregatedDiscoveryTest(unittest.TestCase):
    def test_the_aggregator_gets_the_v2_document_and_a_304_for_its_etag(self):
        status, headers, body = as_aggregator("/apis", "system:kube-aggregator",
                                              ["system:masters"],
                                              {"Accept": AGGREGATED_ACCEPT})
        self.assertEqual(200, status, body[:300])
        self.assertEqual("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
                         headers["content-type"])
        self.assertEqual("Accept", headers.get("vary"))
        document = json.loads(body)
        self.assertEqual("APIGroupDiscoveryList", document["kind"])
        # Every group-version we serve is there, with exactly the resources of its legacy list.
        split = client_go_split(document)
        self.assertEqual({"custom.metrics.k8s.io/v1beta1", "custom.metrics.k8s.io/v1beta2",
                          "external.metrics.k8s.io/v1beta1", "metrics.k8s.io/v1beta1",
                          "forecast.metrics-adapter.io/v1alpha1"}, set(split))
        for group_version, resources in split.items():
            legacy = json.loads(kubectl_raw("/apis/" + group_version))["resources"]
            self.assertEqual({r["name"]: (r["namespaced"], r["kind"], tuple(r["verbs"]))
                              for r in legacy}, resources, group_version)
        self.assertIn("pods/duty_cycle_current", split["custom.metrics.k8s.io/v1beta2"])
        self.assertIn(EXTERNAL_METRIC, split["external.metrics.k8s.io/v1beta1"])
        status, again, body = as_aggregator("/apis", "system:kube-aggregator",
                                            ["system:masters"],
                                            {"Accept": AGGREGATED_ACCEPT,
                                             "If-None-Match": headers["etag"]})
        self.assertEqual((304, b""), (status, body))
        self.assertEqual(headers["etag"], again["etag"])
        # Any other Accept: the legacy list, as before.
        status, headers, body = as_aggregator("/apis", "system:kube-aggregator",
                                              ["system:masters"], {"Accept": "application/json"})
        self.assertEqual("APIGroupList", json.loads(body)["kind"])
        self.assertNotIn("etag", headers)

    def test_kubectl_api_resources_takes_one_apis_request(self):
        with open(ADAPTER.process.log_path) as f:
            log_start = len(f.read())
        code, out, err = kubectl("api-resources")
        self.assertEqual(0, code, err)
        names = {(line.split()[0], line.split()[-1]) for line in out.splitlines()[1:]}
        self.assertIn(("pods", "PodMetrics"), names)
        self.assertIn(("nodes", "NodeMetrics"), names)
        self.assertIn((EXTERNAL_METRIC, "ExternalMetricValueList"), names)
        with open(ADAPTER.process.log_path) as f:
            requests = [line.split()[3] for line in f.read()[log_start:].splitlines()
                        if " GET /" in line]
        discovery = [r for r in requests if r.startswith("/apis")]
        self.assertEqual(["/apis"], [r.split("?")[0] for r in discovery], requests)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
