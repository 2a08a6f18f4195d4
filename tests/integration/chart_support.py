"""What the tests of charts/metrics-adapter share: helm run in a home of its own, the chart
rendered into objects (parsed as test_deploy.py parses deploy/, so both sides of the parity
test go through one parser), and a small Kubernetes API that helm itself can install into,
upgrade and `lookup` against.

The API is in memory and plain HTTP on 127.0.0.1: discovery for the kinds the chart makes,
GET/LIST (with an equality labelSelector, which is what helm's release storage asks), POST, PUT,
PATCH (as an RFC 7386 merge patch, which is what a strategic merge patch of the maps the chart
changes amounts to) and DELETE. It is not fake_kube.py, which speaks the APIs the adapter uses
(watches, reviews, metadata LISTs); this one speaks what the helm client uses."""

import base64
import copy
import http.server
import itertools
import json
import os
import subprocess
import tempfile
import threading
import urllib.parse

import harness
import test_deploy

CHART = os.path.join(harness.REPO, "charts", "metrics-adapter")
RELEASE = "metrics-adapter"
NAMESPACE = "custom-metrics"


class Helm:
    """helm 3.17 (scripts/install-k8s-tools.sh) with its cache, config and data in a directory of
    its own, so a user's repositories and plugins play no part."""

    def __init__(self, workdir):
        self.binary = harness.modern_tool("helm")
        self.env = dict(test_deploy.offline_env())
        for name in ("CACHE", "CONFIG", "DATA"):
            self.env["HELM_%s_HOME" % name] = os.path.join(workdir, "helm-" + name.lower())

    def run(self, *args, kubeconfig=None):
        env = self.env if kubeconfig is None else dict(self.env, KUBECONFIG=kubeconfig)
        return subprocess.run([self.binary, *args], capture_output=True, text=True, timeout=120,
                              env=env)

    def checked(self, *args, kubeconfig=None):
        result = self.run(*args, kubeconfig=kubeconfig)
        if result.returncode != 0:
            raise AssertionError("helm %s failed (%d): %s" % (" ".join(args), result.returncode,
                                                              result.stderr))
        return result.stdout

    def template(self, workdir, values=(), sets=(), set_files=(), name=RELEASE,
                 namespace=NAMESPACE):
        """The chart's objects as JSON (the rendered YAML kept in workdir for a look after a
        failure), hooks included."""
        argv = ["template", name, CHART, "--namespace", namespace]
        for option, items in (("--values", values), ("--set", sets), ("--set-file", set_files)):
            for item in items:
                argv += [option, item]
        text = self.checked(*argv)
        with tempfile.NamedTemporaryFile("w", dir=workdir, suffix=".yaml", delete=False) as f:
            f.write(text)
        return test_deploy.json_objects(f.name)


def volume_files(objects, volume):
    """{file name: bytes} a pod volume holds: the rendered Secret's or ConfigMap's data."""
    if "secret" in volume:
        source = test_deploy.one(objects, "Secret", lambda o: o["metadata"]["name"] ==
                                 volume["secret"]["secretName"])
        return {k: base64.b64decode(v) for k, v in source["data"].items()}
    source = test_deploy.one(objects, "ConfigMap", lambda o: o["metadata"]["name"] ==
                             volume["configMap"]["name"])
    return {k: v.encode() for k, v in source["data"].items()}


def materialize(objects, root):
    """Writes each volume the container mounts into root/<volume> and returns the container's
    args with the mount paths rewritten to those directories (for --dry-run on the host)."""
    container = test_deploy.container(objects)
    volumes = {v["name"]: v for v in
               test_deploy.deployment(objects)["spec"]["template"]["spec"]["volumes"]}
    args = list(container["args"])
    for mount in container["volumeMounts"]:
        directory = os.path.join(root, mount["name"])
        os.makedirs(directory, exist_ok=True)
        for name, content in volume_files(objects, volumes[mount["name"]]).items():
            with open(os.path.join(directory, name), "wb") as f:
                f.write(content)
        prefix = mount["mountPath"].rstrip("/") + "/"
        args = [arg.replace("=" + prefix, "=" + directory + "/") for arg in args]
    return args


# (group, version, kind, plural, namespaced) of everything the chart may make, plus the Secrets
# helm keeps its releases in.
KINDS = [
    ("", "v1", "Secret", "secrets", True),
    ("", "v1", "ConfigMap", "configmaps", True),
    ("", "v1", "Service", "services", True),
    ("", "v1", "ServiceAccount", "serviceaccounts", True),
    ("", "v1", "Pod", "pods", True),
    ("", "v1", "Namespace", "namespaces", False),
    ("apps", "v1", "Deployment", "deployments", True),
    ("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    ("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    ("apiregistration.k8s.io", "v1", "APIService", "apiservices", False),
    ("monitoring.coreos.com", "v1", "ServiceMonitor", "servicemonitors", True),
    ("monitoring.coreos.com", "v1", "PrometheusRule", "prometheusrules", True),
    ("cert-manager.io", "v1", "Certificate", "certificates", True),
    ("cert-manager.io", "v1", "Issuer", "issuers", True),
]


def merge_patch(target, patch):
    """RFC 7386: null deletes, an object merges, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def selects(selector, labels):
    """An equality-only labelSelector ("a=b,c=d", as helm's release storage sends)."""
    for requirement in filter(None, selector.split(",")):
        key, _, value = requirement.partition("=")
        if labels.get(key) != value.lstrip("="):
            return False
    return True


class ClusterAPI:
    """The in-memory API server; `objects` maps (plural, namespace, name) to the stored object."""

    def __init__(self, workdir):
        self.objects = {}
        self.calls = []  # (method, path) of every call, for the tests to look at
        self.lock = threading.Lock()
        self.versions = itertools.count(1)
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                api.handle(self, "GET")

            def do_POST(self):
                api.handle(self, "POST")

            def do_PUT(self):
                api.handle(self, "PUT")

            def do_PATCH(self):
                api.handle(self, "PATCH")

            def do_DELETE(self):
                api.handle(self, "DELETE")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.kubeconfig = os.path.join(workdir, "cluster-kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %s}\n"
                    "users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n"
                    "  context: {cluster: c, user: u, namespace: %s}\ncurrent-context: c\n"
                    % (self.url, NAMESPACE))

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def put(self, plural, obj):
        """Stores an object as if someone else had created it (metrics-server's APIService)."""
        meta = obj["metadata"]
        with self.lock:
            self.objects[(plural, meta.get("namespace", ""), meta["name"])] = self.stamp(obj)

    def get(self, plural, name, namespace=""):
        with self.lock:
            found = self.objects.get((plural, namespace, name))
            return copy.deepcopy(found)

    def delete(self, plural, name, namespace=""):
        with self.lock:
            self.objects.pop((plural, namespace, name), None)

    def stamp(self, obj):
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(next(self.versions))
        obj["metadata"].setdefault("uid", "uid-%s" % obj["metadata"]["resourceVersion"])
        return obj

    # -- HTTP ---------------------------------------------------------------------------------

    def discovery(self, parts):
        """The legacy discovery documents: /api, /apis, /api/v1 and /apis/<group>/<version>."""
        if parts == ["version"]:
            return {"major": "1", "minor": "31", "gitVersion": "v1.31.9"}
        if parts == ["api"]:
            return {"kind": "APIVersions", "versions": ["v1"]}
        if parts == ["apis"]:
            groups = sorted({(g, v) for g, v, *_ in KINDS if g})
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": "%s/%s" % (g, v), "version": v}],
                 "preferredVersion": {"groupVersion": "%s/%s" % (g, v), "version": v}}
                for g, v in groups]}
        group_version = "/".join(parts[1:])
        resources = [{"name": plural, "singularName": kind.lower(), "namespaced": namespaced,
                      "kind": kind, "verbs": ["create", "delete", "get", "list", "patch",
                                              "update", "watch"]}
                     for g, v, kind, plural, namespaced in KINDS
                     if (("%s/%s" % (g, v)) if g else v) == group_version]
        if not resources:
            return None
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
                "resources": resources}

    @staticmethod
    def resource_path(parts):
        """(plural, namespace, name) of /api/v1/... or /apis/<g>/<v>/..., else None."""
        rest = parts[2:] if parts[0] == "api" else parts[3:]
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 2:
            return None
        return rest[0], namespace, rest[1] if len(rest) == 2 else None

    def handle(self, request, method):
        url = urllib.parse.urlsplit(request.path)
        query = urllib.parse.parse_qs(url.query)
        parts = [p for p in url.path.split("/") if p]
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        body = None
        if raw and method in ("POST", "PUT", "PATCH"):
            # helm's release storage writes its Secrets with client-go's typed client, in
            # protobuf; everything else comes as JSON. Answers are JSON, which client-go reads.
            if "protobuf" in request.headers.get("Content-Type", ""):
                body = secret_from_protobuf(raw)
            else:
                body = json.loads(raw)
        with self.lock:
            self.calls.append((method, url.path))
            status, answer = self.answer(method, parts, query, body)
        data = json.dumps(answer).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def answer(self, method, parts, query, body):
        if method == "GET" and (parts in (["version"], ["api"], ["apis"]) or (
                parts and parts[0] == "api" and len(parts) == 2) or (
                parts and parts[0] == "apis" and len(parts) == 3)):
            document = self.discovery(parts)
            return (200, document) if document else not_found("the server could not find "
                                                             "the requested resource")
        if len(parts) < 3 or parts[0] not in ("api", "apis"):
            return not_found("no such path")
        located = self.resource_path(parts)
        if located is None:
            return not_found("no such path")
        plural, namespace, name = located
        kind = next((k for _, _, k, p, _ in KINDS if p == plural), None)
        if kind is None:
            return not_found("no such resource " + plural)
        key = (plural, namespace, name)
        if method == "GET" and name is None:
            selector = query.get("labelSelector", [""])[0]
            items = [o for (p, ns, _), o in sorted(self.objects.items())
                     if p == plural and (not namespace or ns == namespace)
                     and selects(selector, o["metadata"].get("labels", {}))]
            return 200, {"kind": kind + "List", "apiVersion": "v1",
                         "metadata": {"resourceVersion": str(next(self.versions))},
                         "items": items}
        if method == "POST":
            key = (plural, namespace, body["metadata"]["name"])
            if key in self.objects:
                return status(409, "AlreadyExists", "%s %s already exists" % (plural, key[2]))
            if namespace:
                body["metadata"]["namespace"] = namespace
            self.objects[key] = self.stamp(body)
            return 201, self.objects[key]
        if key not in self.objects:
            return not_found('%s "%s" not found' % (plural, name))
        if method == "GET":
            return 200, self.objects[key]
        if method == "PUT":
            self.objects[key] = self.stamp(body)
        elif method == "PATCH":
            self.objects[key] = self.stamp(merge_patch(self.objects[key], body))
        elif method == "DELETE":
            return 200, self.objects.pop(key)
        return 200, self.objects[key]


def status(code, reason, message):
    return code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
                  "reason": reason, "message": message}


def not_found(message):
    return status(404, "NotFound", message)


def protobuf_fields(data):
    """[(field number, value)] of one protobuf message: ints for varints, bytes otherwise."""
    fields, at = [], 0

    def varint():
        nonlocal at
        value, shift = 0, 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while at < len(data):
        tag = varint()
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            fields.append((number, varint()))
        elif wire == 2:
            size = varint()
            fields.append((number, data[at:at + size]))
            at += size
        elif wire == 1:
            fields.append((number, data[at:at + 8]))
            at += 8
        elif wire == 5:
            fields.append((number, data[at:at + 4]))
            at += 4
        else:
            raise ValueError("protobuf wire type %d" % wire)
    return fields


def protobuf_map(entries):
    """A protobuf map's entries (messages of key = 1, value = 2) as a dict of bytes."""
    result = {}
    for entry in entries:
        fields = dict(protobuf_fields(entry))
        result[fields.get(1, b"").decode()] = fields.get(2, b"")
    return result


def secret_from_protobuf(raw):
    """A v1.Secret sent as Kubernetes protobuf ("k8s\\0", then a runtime.Unknown whose raw (2)
    is the Secret: metadata = 1, data = 2 (a map of bytes), type = 3; in ObjectMeta name = 1,
    namespace = 3, labels = 11, annotations = 12) as its JSON form. Only what helm writes."""
    if not raw.startswith(b"k8s\x00"):
        raise ValueError("not a Kubernetes protobuf body")
    unknown = dict(protobuf_fields(raw[4:]))
    secret = protobuf_fields(unknown[2])
    meta = protobuf_fields(next(v for n, v in secret if n == 1))
    metadata = {"name": next(v for n, v in meta if n == 1).decode()}
    for number, name in ((3, "namespace"), (6, "resourceVersion")):
        values = [v for n, v in meta if n == number]
        if values:
            metadata[name] = values[0].decode()
    for number, name in ((11, "labels"), (12, "annotations")):
        entries = [v for n, v in meta if n == number]
        if entries:
            metadata[name] = {k: v.decode() for k, v in protobuf_map(entries).items()}
    data = protobuf_map([v for n, v in secret if n == 2])
    types = [v.decode() for n, v in secret if n == 3]
    return {"apiVersion": "v1", "kind": "Secret", "metadata": metadata,
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
            "type": types[0] if types else "Opaque"}
