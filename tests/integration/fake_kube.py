#!/usr/bin/env python3
"""A small fake Kubernetes API server for integration tests. It speaks the real JSON of the
endpoints metrics-adapter calls: API discovery (/api, /api/v1, /apis, /apis/<g>/<v>) and
LISTs of objects, full or metadata-only (PartialObjectMetadataList), with limit/continue
paging. It serves HTTPS with the given certificate and requires the given bearer token.

Objects come from a JSON fixture: {"<plural>[.<group>]": [{"name", "namespace", "labels"}]},
plus an optional "auth" entry: {"tokens": {token: UserInfo}, "allow": [{"user"|"group": name,
"subresource"?: s}], "configmap": <data of kube-system/extension-apiserver-authentication>}.
TokenReview and SubjectAccessReview answer from it; SAR bodies are kept for assertions.
Test control endpoints (no auth): GET /_control/stats (LIST and review counts),
GET /_control/reviews (SubjectAccessReview specs received),
POST /_control/crd (add a CRD resource: {"group","version","plural","singular","kind",
"namespaced","objects": [...]}), POST /_control/down ({"down": true|false}: answer 503),
POST /_control/fault (one fault at a time; {"kind": "none"} clears it):
  {"kind": "slow", "seconds": s}          every authenticated GET waits s seconds first
  {"kind": "throttle", "retry_after": n}  object LISTs answer 429 with Retry-After: n
  {"kind": "cut", "continue_only": bool}  object LISTs send half their body and close the
                                          connection (only pages asked with ?continue= when
                                          continue_only).
The stats count LISTs answered ("lists", per path) and LISTs received ("list_attempts")."""

import argparse
import http.server
import json
import socket
import ssl
import sys
import threading
import time
import urllib.parse

BUILTIN = [
    # group, version, plural, singular, kind, namespaced
    ("", "v1", "pods", "pod", "Pod", True),
    ("", "v1", "services", "service", "Service", True),
    ("", "v1", "namespaces", "namespace", "Namespace", False),
    ("", "v1", "nodes", "node", "Node", False),
    ("", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", False),
    ("", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", True),
    ("apps", "v1", "deployments", "deployment", "Deployment", True),
    ("apps", "v1", "statefulsets", "statefulset", "StatefulSet", True),
    ("apps", "v1", "daemonsets", "daemonset", "DaemonSet", True),
    ("apps", "v1", "replicasets", "replicaset", "ReplicaSet", True),
    ("batch", "v1", "jobs", "job", "Job", True),
]


class State:
    def __init__(self, objects):
        self.lock = threading.Lock()
        self.auth = objects.pop("auth", {})
        self.reviews = []
        self.review_counts = {"tokenreviews": 0, "subjectaccessreviews": 0}
        self.resources = list(BUILTIN)
        self.objects = objects  # key "plural" or "plural.group" -> [object]
        self.list_calls = {}
        self.list_attempts = 0
        self.down = False
        self.fault = {}

    def groups(self):
        seen = []
        for group, version, *_ in self.resources:
            if group and (group, version) not in seen:
                seen.append((group, version))
        return seen


def api_resource(plural, singular, kind, namespaced):
    return {"name": plural, "singularName": singular, "namespaced": namespaced, "kind": kind,
            "verbs": ["get", "list", "watch"]}


def make_handler(state, token):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def send_json(self, code, body, headers=(), cut=False):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            if not cut:
                self.wfile.write(data)
                return
            # Half the announced body, then the connection ends without a TLS close_notify.
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def status(self, code, reason, message):
            self.send_json(code, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Failure", "message": message, "reason": reason,
                                  "code": code})

        def do_POST(self):
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with state.lock:
                if url.path.endswith("/tokenreviews") or url.path.endswith("/subjectaccessreviews"):
                    if self.headers.get("Authorization") != "Bearer " + token:
                        return self.status(401, "Unauthorized", "Unauthorized")
                    if state.down:
                        return self.status(503, "ServiceUnavailable", "down (test)")
                    return self.review(url.path, body)
                if url.path == "/_control/down":
                    state.down = bool(body.get("down"))
                    return self.send_json(200, {"down": state.down})
                if url.path == "/_control/fault":
                    state.fault = {} if body.get("kind", "none") == "none" else body
                    return self.send_json(200, {"fault": state.fault})
                if url.path == "/_control/crd":
                    state.resources.append((body["group"], body["version"], body["plural"],
                                            body["singular"], body["kind"], body["namespaced"]))
                    state.objects["%s.%s" % (body["plural"], body["group"])] = body["objects"]
                    return self.send_json(200, {})
            self.status(404, "NotFound", "the server could not find the requested resource")

        def review(self, path, body):
            spec = body.get("spec", {})
            if path == "/apis/authentication.k8s.io/v1/tokenreviews":
                state.review_counts["tokenreviews"] += 1
                user = state.auth.get("tokens", {}).get(spec.get("token"))
                status = {"authenticated": True, "user": user} if user else {
                    "authenticated": False, "error": "invalid token"}
                return self.send_json(201, {"apiVersion": "authentication.k8s.io/v1",
                                            "kind": "TokenReview", "spec": spec,
                                            "status": status})
            if path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
                state.review_counts["subjectaccessreviews"] += 1
                state.reviews.append(spec)
                attributes = spec.get("resourceAttributes", {})
                allowed = any(
                    (rule.get("user") == spec.get("user")
                     or rule.get("group") in spec.get("groups", []))
                    and rule.get("subresource", attributes.get("subresource"))
                    == attributes.get("subresource")
                    for rule in state.auth.get("allow", []))
                status = {"allowed": allowed}
                if not allowed:
                    status["reason"] = "no RBAC policy matched"
                return self.send_json(201, {"apiVersion": "authorization.k8s.io/v1",
                                            "kind": "SubjectAccessReview", "spec": spec,
                                            "status": status})
            self.status(404, "NotFound", "the server could not find the requested resource")

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/_control/stats":
                with state.lock:
                    return self.send_json(200, {"lists": dict(state.list_calls),
                                                "list_attempts": state.list_attempts,
                                                "reviews": dict(state.review_counts)})
            if url.path == "/_control/reviews":
                with state.lock:
                    return self.send_json(200, {"reviews": list(state.reviews)})
            if self.headers.get("Authorization") != "Bearer " + token:
                return self.status(401, "Unauthorized", "Unauthorized")
            with state.lock:
                delay = state.fault.get("seconds", 0) if state.fault.get("kind") == "slow" else 0
            time.sleep(delay)  # outside the lock: a slow API still answers other calls
            with state.lock:
                if state.down:
                    return self.status(503, "ServiceUnavailable", "the API server is down (test)")
                self.route(url)

        def route(self, url):
            parts = [p for p in url.path.split("/") if p]
            if url.path == ("/api/v1/namespaces/kube-system/configmaps/"
                            "extension-apiserver-authentication"):
                if "configmap" not in state.auth:
                    return self.status(404, "NotFound", 'configmaps "extension-apiserver-'
                                       'authentication" not found')
                return self.send_json(200, {
                    "kind": "ConfigMap", "apiVersion": "v1",
                    "metadata": {"name": "extension-apiserver-authentication",
                                 "namespace": "kube-system"},
                    "data": state.auth["configmap"]})
            query = urllib.parse.parse_qs(url.query)
            if parts == ["api"]:
                return self.send_json(200, {"kind": "APIVersions", "versions": ["v1"]})
            if parts == ["apis"]:
                groups = [{"name": g, "versions": [{"groupVersion": g + "/" + v, "version": v}],
                           "preferredVersion": {"groupVersion": g + "/" + v, "version": v}}
                          for g, v in state.groups()]
                return self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                                            "groups": groups})
            if parts[:1] == ["api"] and len(parts) >= 2:
                group, version, rest = "", parts[1], parts[2:]
            elif parts[:1] == ["apis"] and len(parts) >= 3:
                group, version, rest = parts[1], parts[2], parts[3:]
            else:
                return self.status(404, "NotFound", "the server could not find the requested resource")
            resources = [r for r in state.resources if r[0] == group and r[1] == version]
            if not resources:
                return self.status(404, "NotFound", "the server could not find the requested resource")
            if not rest:
                return self.send_json(200, {
                    "kind": "APIResourceList", "apiVersion": "v1",
                    "groupVersion": (group + "/" + version) if group else version,
                    "resources": [api_resource(*r[2:]) for r in resources]
                    + [api_resource(r[2] + "/status", "", r[4], r[5]) for r in resources]})
            namespace = None
            if len(rest) == 3 and rest[0] == "namespaces":
                namespace, rest = rest[1], rest[2:]
            if len(rest) != 1:
                return self.status(404, "NotFound", "the server could not find the requested resource")
            match = [r for r in resources if r[2] == rest[0]]
            if not match:
                return self.status(404, "NotFound", "the server could not find the requested resource")
            if "labelSelector" in query:  # the adapter filters locally; catch it if it changes
                return self.status(400, "BadRequest", "this fake does not evaluate labelSelector")
            self.list_objects(url.path, match[0], namespace, query)

        def list_objects(self, path, resource, namespace, query):
            group, version, plural, _, kind, _ = resource
            state.list_attempts += 1
            fault = state.fault
            if fault.get("kind") == "throttle":
                retry_after = int(fault.get("retry_after", 1))
                return self.send_json(429, {
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "Too many requests, please try again later.",
                    "reason": "TooManyRequests", "details": {"retryAfterSeconds": retry_after},
                    "code": 429}, headers=[("Retry-After", str(retry_after))])
            cut = fault.get("kind") == "cut" and (not fault.get("continue_only")
                                                  or "continue" in query)
            state.list_calls[path] = state.list_calls.get(path, 0) + 1
            key = plural + ("." + group if group else "")
            objects = [o for o in state.objects.get(key, [])
                       if namespace is None or o.get("namespace") == namespace]
            start = int(query.get("continue", ["0"])[0])
            limit = int(query.get("limit", ["0"])[0]) or len(objects) or 1
            page = objects[start:start + limit]
            more = start + limit < len(objects)
            metadata = {"resourceVersion": "1000"}
            if more:
                metadata["continue"] = str(start + limit)
            api_version = (group + "/" + version) if group else version
            if "as=PartialObjectMetadataList" in (self.headers.get("Accept") or ""):
                items = [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                          "metadata": self.meta(o)} for o in page]
                return self.send_json(200, {"kind": "PartialObjectMetadataList",
                                            "apiVersion": "meta.k8s.io/v1",
                                            "metadata": metadata, "items": items}, cut=cut)
            items = [{"metadata": self.meta(o), "spec": {}, "status": {}} for o in page]
            self.send_json(200, {"kind": kind + "List", "apiVersion": api_version,
                                 "metadata": metadata, "items": items}, cut=cut)

        @staticmethod
        def meta(o):
            meta = {"name": o["name"], "uid": "uid-" + o["name"], "resourceVersion": "1000",
                    "labels": o.get("labels", {})}
            if o.get("namespace"):
                meta["namespace"] = o["namespace"]
            return meta

        def log_message(self, *unused):
            pass

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--objects", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    with open(args.objects) as f:
        state = State(json.load(f))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(state, args.token))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("fake Kubernetes API listening on 127.0.0.1:%d" % args.port, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
