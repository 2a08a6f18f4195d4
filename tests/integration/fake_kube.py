#!/usr/bin/env python3
"""A small fake Kubernetes API server for integration tests. It speaks the real JSON of the
endpoints metrics-adapter calls: API discovery (/api, /api/v1, /apis, /apis/<g>/<v>) and
LISTs of objects, full or metadata-only (PartialObjectMetadataList), with limit/continue
paging. It serves HTTPS with the given certificate and requires the given bearer token.

Objects come from a JSON fixture: {"<plural>[.<group>]": [{"name", "namespace", "labels",
"phase"?, "creationTimestamp"?}]}: "phase" is a pod's status.phase ("Running" when left out, as
the pods of a fixture are meant to run; give "" for a pod with no phase yet, which, as in the
real API, is not Running); "creationTimestamp" defaults to when the fake took the object; a
node's "allocatable" ({"cpu": "4", "memory": "32Gi"}) is its status.capacity and allocatable.
An object may carry "spec", "status" and "data" (returned as given: an HPA's, a ConfigMap's), and a pod "ready"
(true/false: its Ready condition). An optional "extra_resources" entry lists more resources
[group, version, plural, singular, kind, namespaced] (HPAs, APIServices). HPAs are validated as
the API server validates minReplicas with HPAScaleToZero on (Kubernetes >= 1.37): 0 only with an
Object or External metric; a fixture that breaks it is refused at start, a change with 422
Invalid and the API server's message. One object is answered
by GET .../<plural>/<name>, and .../<name>/scale answers the Scale of an object whose "spec" has
"replicas" (status.selector from spec.selector.matchLabels), as for Deployments;
plus an optional "auth" entry: {"tokens": {token: UserInfo}, "allow": [{"user"|"group": name,
"subresource"?: s, "nonResourceURL"?: u}] (u as RBAC reads it: a path, or a prefix ending in *,
and then the rule allows only non-resource requests), "configmap": <data of kube-system/extension-apiserver-authentication>}.
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
The stats count LISTs answered ("lists", per path) and LISTs received ("list_attempts").

LISTs and watches honour fieldSelector as the API server does: comma-separated requirements
field=value, field==value or field!=value on metadata.name and metadata.namespace (any
resource) and status.phase (pods only); any other field is a 400 "field label not supported".
A watch with a fieldSelector sees a change that makes an object match as ADDED and one that
makes it stop matching (a pod going from Running to Succeeded) as DELETED, carrying the object
as it was with the new resourceVersion, as the API server's watch cache sends it.

Watches (?watch=1) stream newline-delimited JSON events over a chunked answer, as the API server
does: every change gets the next resourceVersion (one counter for the whole fake, started from
the clock so a restarted fake never reuses versions), a watch from version v first replays the
changes after v, then streams live ones; with allowWatchBookmarks a BOOKMARK carrying the current
version is sent every --bookmark-interval seconds; the stream ends at timeoutSeconds. A version
older than the kept history (the last 1000 changes, or everything before a compaction) is 410
Gone: an ERROR event with a 410 Status (what the API server's watch cache sends), or an HTTP 410
answer after POST /_control/compact {"as": "status"}. More test control:
POST /_control/objects {"op": "add"|"modify"|"delete", "resource": "pods" (or "plural.group"),
  "object": {"name", "namespace", "labels",     one change, streamed to the matching watches
             "phase"?, "creationTimestamp"?}}   (a modify keeps the creationTimestamp)
POST /_control/cut_watches                      every open watch stream breaks off (no final
                                                chunk; so does /_control/down)
POST /_control/compact {"as": "event"|"status"} forget the history and break the open watches
                                                (as an API server restart does): every older
                                                version is Gone
GET /_control/stats also has "watches" (per path), "watch_versions" (per path: the
resourceVersion each watch asked for) and "resource_version" (the current one)."""

import argparse
import http.server
import json
import socket
import ssl
import sys
import threading
import time
import urllib.parse

HISTORY = 1000  # changes kept for watches; older versions are 410 Gone


def non_resource_url_matches(rule_url, path):
    """RBAC's NonResourceURLs match: no rule URL matches anything; "*" at the end of one is a
    prefix; otherwise the path must be equal."""
    if rule_url is None:
        return True
    if path is None:
        return False
    if rule_url.endswith("*"):
        return path.startswith(rule_url[:-1])
    return path == rule_url


def now_timestamp():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


HPA_KEY = "horizontalpodautoscalers.autoscaling"


def hpa_invalid(o):
    """The real API's validation of an HPA's minReplicas with the HPAScaleToZero gate on (the
    default from Kubernetes 1.37): 0 is allowed only with an Object or External metric, the one
    kind of metric that can exist while no pod runs. The 422's message, or None when valid."""
    spec = o.get("spec") or {}
    low = spec.get("minReplicas", 1)
    errors = []
    if low < 0:
        errors.append("spec.minReplicas: Invalid value: %d: must be greater than or equal to 0"
                      % low)
    if low == 0 and not any(m.get("type") in ("Object", "External")
                            for m in spec.get("metrics") or []):
        errors.append("spec.metrics: Forbidden: must specify at least one Object or External "
                      "metric to support scaling to zero replicas")
    if not errors:
        return None
    return 'HorizontalPodAutoscaler.autoscaling "%s" is invalid: %s' % (o.get("name"),
                                                                         ", ".join(errors))


def pod_phase(o):
    return o.get("phase", "Running")


def field_selector(text, key):
    """The predicate of a fieldSelector for objects of `key` ("pods", "plural.group"); raises
    ValueError with the API server's message for a field it does not support."""
    fields = {"metadata.name": lambda o: o["name"],
              "metadata.namespace": lambda o: o.get("namespace", "")}
    if key == "pods":
        fields["status.phase"] = pod_phase
    requirements = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        for op in ("!=", "==", "="):
            if op in part:
                field, value = (x.strip() for x in part.split(op, 1))
                break
        else:
            raise ValueError("invalid selector: '%s'; can't understand '%s'" % (text, part))
        if field not in fields:
            raise ValueError('field label not supported: %s' % field)
        requirements.append((fields[field], op == "!=", value))
    return lambda o: all((get(o) == value) != negated for get, negated, value in requirements)


def selected_event(kind, obj, prev, rv, matches):
    """What a watch with selector `matches` sees of one change (None: nothing)."""
    if kind == "MODIFIED" and prev is not None:
        now, before = matches(obj), matches(prev)
        if now:
            return ("MODIFIED" if before else "ADDED"), obj
        return ("DELETED", dict(prev, rv=rv)) if before else None
    return (kind, obj) if matches(obj) else None

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
        self.resources = list(BUILTIN) + [tuple(r) for r in objects.pop("extra_resources", [])]
        self.objects = objects  # key "plural" or "plural.group" -> [object]
        for o in objects.get(HPA_KEY, []):
            if hpa_invalid(o):
                raise SystemExit("fake_kube.py: fixture HPA refused, as the API would: "
                                 + hpa_invalid(o))
        self.list_calls = {}
        self.list_attempts = 0
        self.down = False
        self.fault = {}
        self.changed = threading.Condition(self.lock)
        # One version counter for everything, from the clock: a restarted fake's versions are
        # newer than any its predecessor handed out, and those are outside its history.
        self.resource_version = int(time.time() * 1000)
        for group_objects in objects.values():
            for o in group_objects:
                o["rv"] = self.resource_version
                o.setdefault("creationTimestamp", now_timestamp())
        self.history = []  # (rv, resource key, event type, object, previous object or None)
        self.oldest_watchable = self.resource_version
        self.gone_as = "event"
        self.cut_generation = 0
        self.watch_calls = {}
        self.watch_versions = {}
        self.calls = set()  # (method, path, watch) of every authenticated call
        self.bookmark_interval = 1.0

    def change(self, op, key, obj):
        """Applies one change (under the lock) and wakes the watches."""
        self.resource_version += 1
        obj = dict(obj, rv=self.resource_version)
        objects = self.objects.setdefault(key, [])
        same = [i for i, o in enumerate(objects)
                if o["name"] == obj["name"] and o.get("namespace") == obj.get("namespace")]
        prev = None
        if op == "delete":
            for i in reversed(same):
                prev = objects.pop(i)
                obj = dict(prev, rv=self.resource_version)
            kind = "DELETED"
        elif same:
            prev = objects[same[0]]
            obj.setdefault("creationTimestamp", prev.get("creationTimestamp"))
            objects[same[0]] = obj
            kind = "MODIFIED"
        else:
            obj.setdefault("creationTimestamp", now_timestamp())
            objects.append(obj)
            kind = "ADDED" if op == "add" else "MODIFIED"
        self.history.append((self.resource_version, key, kind, obj, prev))
        if len(self.history) > HISTORY:
            dropped = self.history[:len(self.history) - HISTORY]
            self.history = self.history[len(dropped):]
            self.oldest_watchable = dropped[-1][0]
        self.changed.notify_all()
        return self.resource_version

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
        # Headers and body leave in two writes; with Nagle on, the body waits for the client's
        # delayed ACK of the headers (40 ms on Linux) on every keep-alive reply. The real API
        # server (Go) sets TCP_NODELAY, and so does this one.
        disable_nagle_algorithm = True

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
                    state.calls.add(("POST", url.path, False))
                    if state.down:
                        return self.status(503, "ServiceUnavailable", "down (test)")
                    return self.review(url.path, body)
                if url.path == "/_control/down":
                    state.down = bool(body.get("down"))
                    if state.down:  # a server going down drops its watch streams
                        state.cut_generation += 1
                        state.changed.notify_all()
                    return self.send_json(200, {"down": state.down})
                if url.path == "/_control/objects":
                    invalid = body["resource"] == HPA_KEY and body["op"] != "delete" and \
                        hpa_invalid(body["object"])
                    if invalid:
                        return self.status(422, "Invalid", invalid)
                    rv = state.change(body["op"], body["resource"], body["object"])
                    return self.send_json(200, {"resourceVersion": str(rv)})
                if url.path == "/_control/cut_watches":
                    state.cut_generation += 1
                    state.changed.notify_all()
                    return self.send_json(200, {})
                if url.path == "/_control/compact":
                    # All at once, so no watch can see a version newer than the ones forgotten.
                    state.resource_version += 1
                    state.oldest_watchable = state.resource_version
                    state.history = []
                    state.gone_as = body.get("as", "event")
                    state.cut_generation += 1
                    state.changed.notify_all()
                    return self.send_json(200, {})
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
                path = spec.get("nonResourceAttributes", {}).get("path")
                allowed = any(
                    (rule.get("user") == spec.get("user")
                     or rule.get("group") in spec.get("groups", []))
                    and rule.get("subresource", attributes.get("subresource"))
                    == attributes.get("subresource")
                    and non_resource_url_matches(rule.get("nonResourceURL"), path)
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
                                                "watches": dict(state.watch_calls),
                                                "watch_versions": dict(state.watch_versions),
                                                "resource_version": str(state.resource_version),
                                                "reviews": dict(state.review_counts),
                                                "calls": sorted(state.calls)})
            if url.path == "/_control/reviews":
                with state.lock:
                    return self.send_json(200, {"reviews": list(state.reviews)})
            if self.headers.get("Authorization") != "Bearer " + token:
                return self.status(401, "Unauthorized", "Unauthorized")
            query = urllib.parse.parse_qs(url.query)
            with state.lock:
                state.calls.add(("GET", url.path, query.get("watch", [""])[0] in ("1", "true")))
                delay = state.fault.get("seconds", 0) if state.fault.get("kind") == "slow" else 0
            time.sleep(delay)  # outside the lock: a slow API still answers other calls
            self.watch_request = None
            with state.lock:
                if state.down:
                    return self.status(503, "ServiceUnavailable", "the API server is down (test)")
                self.route(url)
            if self.watch_request:  # streamed outside the lock
                self.stream_watch(*self.watch_request)

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
            if len(rest) >= 3 and rest[0] == "namespaces":
                namespace, rest = rest[1], rest[2:]
            if len(rest) in (2, 3) and not (len(rest) == 3 and rest[2] != "scale"):
                return self.get_object(resources, namespace, rest)
            if len(rest) != 1:
                return self.status(404, "NotFound", "the server could not find the requested resource")
            match = [r for r in resources if r[2] == rest[0]]
            if not match:
                return self.status(404, "NotFound", "the server could not find the requested resource")
            if "labelSelector" in query:  # the adapter filters locally; catch it if it changes
                return self.status(400, "BadRequest", "this fake does not evaluate labelSelector")
            group, _, plural, _, _, _ = match[0]
            key = plural + ("." + group if group else "")
            try:
                selected = field_selector(query.get("fieldSelector", [""])[0], key)
            except ValueError as e:
                return self.status(400, "BadRequest", str(e))

            def matches(o):
                return (namespace is None or o.get("namespace") == namespace) and selected(o)
            if query.get("watch", [""])[0] in ("1", "true"):
                return self.start_watch(url.path, key, matches, query)
            self.list_objects(url.path, match[0], matches, query)

        def get_object(self, resources, namespace, rest):
            """GET of one object, or of its scale subresource."""
            match = [r for r in resources if r[2] == rest[0]]
            if not match:
                return self.status(404, "NotFound", "the server could not find the requested resource")
            group, version, plural, _, kind, _ = match[0]
            key = plural + ("." + group if group else "")
            found = [o for o in state.objects.get(key, [])
                     if o["name"] == rest[1] and (namespace is None or o.get("namespace") == namespace)]
            if not found:
                return self.status(404, "NotFound", '%s "%s" not found' % (key, rest[1]))
            o = found[0]
            if len(rest) == 3:
                spec = o.get("spec", {})
                if "replicas" not in spec:
                    return self.status(404, "NotFound", "the server could not find the requested resource")
                match_labels = spec.get("selector", {}).get("matchLabels", {})
                return self.send_json(200, {
                    "kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": self.meta(o),
                    "spec": {"replicas": spec["replicas"]},
                    "status": {"replicas": o.get("status", {}).get("replicas", spec["replicas"]),
                               "selector": ",".join("%s=%s" % kv for kv in sorted(match_labels.items()))}})
            api_version = (group + "/" + version) if group else version
            answer = {"kind": kind, "apiVersion": api_version, "metadata": self.meta(o),
                      "spec": o.get("spec", {}), "status": self.object_status(key, o)}
            if "data" in o:  # a ConfigMap's
                answer["data"] = o["data"]
            self.send_json(200, answer)

        def start_watch(self, path, key, matches, query):
            """Under the lock: counts the watch and answers what needs no stream."""
            state.watch_calls[path] = state.watch_calls.get(path, 0) + 1
            asked = query.get("resourceVersion", [""])[0]
            state.watch_versions.setdefault(path, []).append(asked)
            since = int(asked) if asked.isdigit() and asked != "0" else None
            gone = since is not None and since < state.oldest_watchable
            if gone and state.gone_as == "status":
                return self.status(410, "Expired",
                                   "too old resource version: %d (%d)"
                                   % (since, state.oldest_watchable))
            replay = []
            if since is None:  # no version: the current objects as ADDED, then changes
                replay = [("ADDED", o) for o in state.objects.get(key, []) if matches(o)]
                since = state.resource_version
            self.watch_request = (key, matches, since, gone, replay, query)

        def stream_watch(self, key, matches, since, gone, replay, query):
            timeout = float(query.get("timeoutSeconds", ["1800"])[0])
            bookmarks = query.get("allowWatchBookmarks", [""])[0] == "true"
            metadata_only = "as=PartialObjectMetadata" in (self.headers.get("Accept") or "")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                if gone:
                    self.write_event("ERROR", {
                        "kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Failure", "reason": "Expired", "code": 410,
                        "message": "too old resource version: %d (%d)"
                        % (since, state.oldest_watchable)})
                    return self.end_chunks()
                for kind, o in replay:
                    self.write_event(kind, self.watch_object(key, o, metadata_only))
                with state.lock:
                    generation = state.cut_generation
                ends = time.monotonic() + timeout
                next_bookmark = time.monotonic() + state.bookmark_interval
                while True:
                    with state.lock:
                        state.changed.wait(timeout=0.05)
                        if state.cut_generation != generation:
                            return self.cut()
                        events = [(rv, selected_event(kind, o, prev, rv, matches))
                                  for rv, k, kind, o, prev in state.history
                                  if rv > since and k == key]
                        current = state.resource_version
                    for rv, selected in events:
                        if selected:
                            self.write_event(selected[0],
                                             self.watch_object(key, selected[1], metadata_only))
                        since = rv
                    now = time.monotonic()
                    if now >= ends:
                        return self.end_chunks()
                    if bookmarks and now >= next_bookmark:
                        since = max(since, current)
                        self.write_event("BOOKMARK", {
                            "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                            "metadata": {"resourceVersion": str(since)}})
                        next_bookmark = now + state.bookmark_interval
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                self.close_connection = True

        def write_event(self, kind, obj):
            data = json.dumps({"type": kind, "object": obj}).encode() + b"\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def end_chunks(self):
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def cut(self):
            """The stream breaks off: no final chunk, the connection just ends."""
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def watch_object(self, key, o, metadata_only):
            if metadata_only:
                return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                        "metadata": self.meta(o)}
            return {"metadata": self.meta(o), "spec": {}, "status": self.object_status(key, o)}

        def list_objects(self, path, resource, matches, query):
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
            objects = [o for o in state.objects.get(key, []) if matches(o)]
            start = int(query.get("continue", ["0"])[0])
            limit = int(query.get("limit", ["0"])[0]) or len(objects) or 1
            page = objects[start:start + limit]
            more = start + limit < len(objects)
            metadata = {"resourceVersion": str(state.resource_version)}
            if more:
                metadata["continue"] = str(start + limit)
            api_version = (group + "/" + version) if group else version
            if "as=PartialObjectMetadataList" in (self.headers.get("Accept") or ""):
                items = [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                          "metadata": self.meta(o)} for o in page]
                return self.send_json(200, {"kind": "PartialObjectMetadataList",
                                            "apiVersion": "meta.k8s.io/v1",
                                            "metadata": metadata, "items": items}, cut=cut)
            items = [{"metadata": self.meta(o), "spec": o.get("spec", {}),
                      "status": self.object_status(key, o)}
                     for o in page]
            self.send_json(200, {"kind": kind + "List", "apiVersion": api_version,
                                 "metadata": metadata, "items": items}, cut=cut)

        @staticmethod
        def meta(o):
            meta = {"name": o["name"], "uid": "uid-" + o["name"],
                    "resourceVersion": str(o.get("rv", 1)),
                    "labels": o.get("labels", {})}
            if o.get("namespace"):
                meta["namespace"] = o["namespace"]
            if o.get("creationTimestamp"):
                meta["creationTimestamp"] = o["creationTimestamp"]
            return meta

        @staticmethod
        def object_status(key, o):
            if "status" in o:
                return o["status"]
            if key == "pods":
                status = {"phase": pod_phase(o)}
                if "ready" in o:
                    status["conditions"] = [{"type": "Ready",
                                             "status": "True" if o["ready"] else "False"}]
                return status
            # A node's capacity, for clients that show usage as a share of it (kubectl top).
            if key == "nodes" and "allocatable" in o:
                return {"capacity": o["allocatable"], "allocatable": o["allocatable"]}
            return {}

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
    parser.add_argument("--bookmark-interval", type=float, default=1.0)
    args = parser.parse_args()
    with open(args.objects) as f:
        state = State(json.load(f))
    state.bookmark_interval = args.bookmark_interval
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(state, args.token))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("fake Kubernetes API listening on 127.0.0.1:%d" % args.port, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
