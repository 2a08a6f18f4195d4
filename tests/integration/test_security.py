"""Delegated authentication and authorization, and TLS, as the aggregator and other callers
meet them: front-proxy certificates with X-Remote-* headers, client certificates, bearer
tokens (TokenReview) and SubjectAccessReview against a fake Kubernetes API; certificates made
by the test; TLS versions, serving-certificate rotation and slow clients."""

import http.server
import json
import os
import re
import resource
import shutil
import socket
import ssl
import subprocess
import threading
import time
import unittest
import warnings
import urllib.request

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
CONFIG = os.path.join(harness.REPO, "config", "gpu-alibaba-exporter.yaml")
HPA_USER = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
METRIC_PATH = ("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A/"
               "duty_cycle_current")
HEADER_TIMEOUT_SECONDS = 2

PROCS = ADAPTER = KUBE = WEBHOOK = None
CERTS = {}
SERVING_DIR = None
AUDIT_LOG = None
# Probes are not audited; the metric routes with their answers; everything else by metadata.
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: [/healthz*, /livez*, /readyz*]
- level: RequestResponse
  resources:
  - group: custom.metrics.k8s.io
- level: Metadata
"""


class AuditWebhook:
    """An audit webhook on 127.0.0.1 that keeps the items of every EventList POSTed to it, and
    the kubeconfig (--audit-webhook-config-file) that sends them there. stop() closes it."""

    def __init__(self, directory):
        received = self._events = []
        lock = self._lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    received.extend(body["items"])
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.kubeconfig = os.path.join(directory, "audit-webhook.kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: audit\n  cluster:\n"
                    "    server: http://127.0.0.1:%d/audit\ncontexts:\n- name: audit\n"
                    "  context:\n    cluster: audit\n    user: audit\ncurrent-context: audit\n"
                    "users:\n- name: audit\n  user: {}\n" % self.server.server_address[1])

    def events(self):
        with self._lock:
            return list(self._events)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def setUpModule():
    global PROCS, ADAPTER, KUBE, SERVING_DIR, AUDIT_LOG, WEBHOOK
    PROCS = harness.Processes()
    try:
        certs = os.path.join(PROCS.workdir, "pki")
        front_proxy_ca = harness.make_ca(certs, "front-proxy-ca")
        other_ca = harness.make_ca(certs, "other-ca")
        client_ca = harness.make_ca(certs, "client-ca")
        CERTS["front-proxy"] = harness.make_client_cert(certs, front_proxy_ca, "front-proxy",
                                                        "front-proxy-client")
        CERTS["evil-cn"] = harness.make_client_cert(certs, front_proxy_ca, "evil-cn", "evil")
        CERTS["other-ca"] = harness.make_client_cert(certs, other_ca, "other", "front-proxy-client")
        CERTS["alice"] = harness.make_client_cert(certs, client_ca, "alice", "alice", ["devs"])

        exporter = harness.Exporter(PROCS, mode="static")
        prometheus = harness.Prometheus(PROCS, exporter.port)
        prometheus.wait_for_series("nvidia_gpu_duty_cycle", 1)
        with open(front_proxy_ca[0]) as f:
            front_proxy_pem = f.read()
        with open(client_ca[0]) as f:
            client_pem = f.read()
        KUBE = harness.FakeKube(PROCS, {"auth": {
            "tokens": {"carol-token": {"username": "carol", "groups": ["ops"]},
                       "bob-token": {"username": "bob", "groups": ["devs"]},
                       # the audit test's own, so its reviews are not in others' caches
                       "dana-token": {"username": "dana", "groups": ["ops"]},
                       "erin-token": {"username": "erin", "groups": ["devs"]}},
            "allow": [{"user": HPA_USER}, {"user": "alice"}, {"user": "carol"},
                      {"user": "dana"}],
            "configmap": {
                "client-ca-file": client_pem,
                "requestheader-client-ca-file": front_proxy_pem,
                "requestheader-allowed-names": '["front-proxy-client"]',
                "requestheader-username-headers": '["X-Remote-User"]',
                "requestheader-group-headers": '["X-Remote-Group"]',
                "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]'}}})

        AUDIT_LOG = os.path.join(PROCS.workdir, "audit", "audit.log")
        WEBHOOK = AuditWebhook(PROCS.workdir)
        policy = os.path.join(PROCS.workdir, "audit-policy.yaml")
        with open(policy, "w") as f:
            f.write(AUDIT_POLICY)
        SERVING_DIR = os.path.join(PROCS.workdir, "serving")
        subprocess.run(["bash", harness.MAKE_CERTS, "--out", SERVING_DIR], check=True,
                       capture_output=True, timeout=60)
        ADAPTER = harness.Adapter(
            PROCS, ARGS.binary, CONFIG, prometheus.url, delegated_auth=True,
            ca_file=os.path.join(SERVING_DIR, "ca.crt"),
            tls_args=["--tls-cert-file=" + os.path.join(SERVING_DIR, "serving.crt"),
                      "--tls-private-key-file=" + os.path.join(SERVING_DIR, "serving.key")],
            extra_args=["--lister-kubeconfig=" + KUBE.kubeconfig,
                        "--header-timeout=%ds" % HEADER_TIMEOUT_SECONDS,
                        "--audit-policy-file=" + policy, "--audit-log-path=" + AUDIT_LOG,
                        # blocking: the webhook has each event before its answer goes out
                        "--audit-webhook-config-file=" + WEBHOOK.kubeconfig,
                        "--audit-webhook-mode=blocking",
                        # klog's default as its --help prints it (LogBacktraceAtTest)
                        "--log_backtrace_at=:0"])
        harness.wait_until(lambda: request(METRIC_PATH, cert="front-proxy",
                                           headers={"X-Remote-User": HPA_USER})[0] == 200,
                           timeout=60, what="the first allowed metric answer")
    except Exception:
        PROCS.stop_all()
        raise


def tearDownModule():
    PROCS.stop_all()
    if WEBHOOK:
        WEBHOOK.stop()


def context(cert=None):
    ctx = ssl.create_default_context(cafile=ADAPTER.ca_file)
    if cert:
        ctx.load_cert_chain(*CERTS[cert])
    return ctx


def request(path, cert=None, headers=None):
    """(status, parsed body) for a GET over TLS, optionally presenting a client certificate.
    Repeated headers are given as a list of (name, value) pairs."""
    status, _, body = exchange(path, cert, headers)
    return status, body


def exchange(path, cert=None, headers=None):
    """(status, {lower-case header name: value}, parsed body), as request() sends it."""
    connection = socket.create_connection(("127.0.0.1", ADAPTER.port), timeout=30)
    tls = context(cert).wrap_socket(connection, server_hostname="127.0.0.1")
    try:
        pairs = headers.items() if isinstance(headers, dict) else (headers or [])
        lines = ["GET %s HTTP/1.1" % path, "Host: 127.0.0.1", "Connection: close"]
        lines += ["%s: %s" % pair for pair in pairs]
        tls.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while True:
            chunk = tls.recv(65536)
            if not chunk:
                break
            answer += chunk
    finally:
        tls.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields.setdefault(name.strip().lower(), value.strip())
    return status, fields, json.loads(body) if body.startswith(b"{") else body.decode()


class FrontProxyTest(unittest.TestCase):
    def test_the_hpa_through_the_front_proxy_is_allowed(self):
        status, body = request(METRIC_PATH, cert="front-proxy", headers=[
            ("X-Remote-User", HPA_USER), ("X-Remote-Group", "system:serviceaccounts"),
            ("X-Remote-Group", "system:authenticated")])
        self.assertEqual(200, status, body)
        self.assertEqual("MetricValueList", body["kind"])
        review = [r for r in KUBE.access_reviews() if r["user"] == HPA_USER][-1]
        self.assertEqual(["system:serviceaccounts", "system:authenticated"], review["groups"])
        attributes = review["resourceAttributes"]
        self.assertEqual({"namespace": "default", "verb": "get", "group": "custom.metrics.k8s.io",
                          "version": "v1beta2", "resource": "pods",
                          "subresource": "duty_cycle_current", "name": "*"}, attributes)

    def test_headers_with_a_certificate_from_another_ca_are_not_believed(self):
        # As upstream: a certificate no configured CA verifies is a failed credential (401).
        status, body = request(METRIC_PATH, cert="other-ca", headers={"X-Remote-User": HPA_USER})
        self.assertEqual(401, status, body)
        self.assertEqual("Unauthorized", body["reason"])

    def test_headers_without_a_certificate_are_ignored(self):
        status, body = request(METRIC_PATH, headers={"X-Remote-User": "admin",
                                                     "X-Remote-Group": "system:masters"})
        self.assertEqual(403, status, body)
        self.assertEqual("Forbidden", body["reason"])
        self.assertIn('User "system:anonymous" cannot get resource "pods/duty_cycle_current"',
                      body["message"])

    def test_a_front_proxy_ca_certificate_with_a_cn_not_allowed_is_401(self):
        status, body = request(METRIC_PATH, cert="evil-cn", headers={"X-Remote-User": HPA_USER})
        self.assertEqual(401, status, body)
        self.assertEqual("Unauthorized", body["reason"])

    def test_a_client_ca_certificate_authenticates_its_cn(self):
        status, body = request(METRIC_PATH, cert="alice", headers={"X-Remote-User": "admin"})
        self.assertEqual(200, status, body)
        review = KUBE.access_reviews()[-1]
        self.assertEqual("alice", review["user"])
        self.assertIn("devs", review["groups"])

    def test_health_needs_no_credentials(self):
        for path in ("/healthz", "/livez", "/readyz"):
            self.assertEqual((200, "ok"), request(path))


class BearerTokenTest(unittest.TestCase):
    def test_reviewed_tokens_are_allowed_or_denied_and_cached(self):
        before = KUBE.review_counts()
        for _ in range(5):
            status, body = request(METRIC_PATH, headers={"Authorization": "Bearer carol-token"})
            self.assertEqual(200, status, body)
        after = KUBE.review_counts()
        self.assertEqual(1, after["tokenreviews"] - before["tokenreviews"])
        self.assertEqual(1, after["subjectaccessreviews"] - before["subjectaccessreviews"])

        status, body = request(METRIC_PATH, headers={"Authorization": "Bearer bob-token"})
        self.assertEqual(403, status, body)
        self.assertIn('User "bob"', body["message"])

        status, body = request(METRIC_PATH, headers={"Authorization": "Bearer forged"})
        self.assertEqual(401, status, body)


class TlsTest(unittest.TestCase):
    def test_tls_1_0_and_1_1_are_refused(self):
        warnings.simplefilter("ignore", DeprecationWarning)  # Python deprecates these versions
        for version in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_ciphers("ALL:@SECLEVEL=0")
            ctx.minimum_version = version
            ctx.maximum_version = version
            with socket.create_connection(("127.0.0.1", ADAPTER.port), timeout=10) as raw:
                with self.assertRaises(ssl.SSLError):
                    ctx.wrap_socket(raw, server_hostname="127.0.0.1")

    def test_only_http_1_1_is_offered_by_alpn(self):
        ctx = context()
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        with socket.create_connection(("127.0.0.1", ADAPTER.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                self.assertEqual("http/1.1", tls.selected_alpn_protocol())
                self.assertGreaterEqual(tls.version(), "TLSv1.2")

    def test_a_rotated_serving_certificate_is_served_without_restart(self):
        def served_certificate():
            with socket.create_connection(("127.0.0.1", ADAPTER.port), timeout=10) as raw:
                with context().wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    return tls.getpeercert(binary_form=True)

        before = served_certificate()
        renewed = os.path.join(PROCS.workdir, "renewed")
        shutil.copytree(SERVING_DIR, renewed)
        os.remove(os.path.join(renewed, "serving.crt"))  # the script keeps a serving cert still valid
        subprocess.run(["bash", harness.MAKE_CERTS, "--out", renewed], check=True,
                       capture_output=True, timeout=60)  # same CA, new serving pair
        for name in ("serving.key", "serving.crt"):
            os.replace(os.path.join(renewed, name), os.path.join(SERVING_DIR, name))
        harness.wait_until(lambda: served_certificate() != before, timeout=60,
                           what="the renewed certificate to be served")
        self.assertEqual(200, request("/healthz")[0])


class SlowClientTest(unittest.TestCase):
    def test_a_thousand_half_headers_neither_block_requests_nor_stay_open(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
        idle = []
        try:
            ctx = context()
            for _ in range(1000):
                raw = socket.create_connection(("127.0.0.1", ADAPTER.port), timeout=30)
                tls = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
                tls.sendall(b"GET /apis HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")
                idle.append(tls)
            status, body = request(METRIC_PATH, cert="front-proxy",
                                   headers={"X-Remote-User": HPA_USER})
            self.assertEqual(200, status, body)
            deadline = time.monotonic() + HEADER_TIMEOUT_SECONDS + 30
            for tls in idle:
                tls.settimeout(max(0.1, deadline - time.monotonic()))
                try:
                    answer = tls.recv(1024)
                except TimeoutError:
                    self.fail("a connection with half a header was still open after the timeout")
                except (ssl.SSLError, OSError):
                    answer = b""  # reset: closed
                # Closed, possibly after a 408 answer.
                self.assertTrue(answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:60])
        finally:
            for tls in idle:
                tls.close()
        self.assertEqual(200, request("/healthz")[0])


def send_raw(data):
    """Sends `data` over TLS and returns the status code answered, or None when the adapter
    closed the connection before an answer could be read."""
    connection = socket.create_connection(("127.0.0.1", ADAPTER.port), timeout=30)
    tls = context().wrap_socket(connection, server_hostname="127.0.0.1")
    answer = b""
    try:
        try:
            tls.sendall(data)
        except (ssl.SSLError, OSError):
            pass  # refused before it read everything: the answer may still be there
        while True:
            try:
                chunk = tls.recv(65536)
            except (ssl.SSLError, OSError):
                break
            if not chunk:
                break
            answer += chunk
    finally:
        tls.close()
    return int(answer.split(b" ")[1]) if answer.startswith(b"HTTP/1.1 ") else None


def request_counts():
    """{(route, code): count} of metrics_adapter_requests_total, read as carol."""
    status, body = request("/metrics", headers={"Authorization": "Bearer carol-token"})
    assert status == 200, (status, body)
    counts = {}
    for line in body.splitlines():
        if line.startswith("metrics_adapter_requests_total{"):
            labels = dict(pair.split("=", 1) for pair in line[line.index("{") + 1:
                                                              line.index("}")].split(","))
            key = (labels["route"].strip('"'), labels["code"].strip('"'))
            counts[key] = float(line.rsplit(" ", 1)[1])
    return counts


class OneParseTest(unittest.TestCase):
    """Authorization and routing read one parse of the target: what is authorized is what is
    served, and a target that could be read two ways is refused before anything is reviewed."""

    CAROL = {"Authorization": "Bearer carol-token"}

    def test_ambiguous_targets_are_refused_and_never_reviewed(self):
        request(METRIC_PATH, headers=self.CAROL)  # carol's token review is cached from here on
        before = len(KUBE.access_reviews())
        for path in ("/apis/custom.metrics.k8s.io/v1beta1/nodes/n1//node_load",
                     "/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/../node_load",
                     "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods%2F%2A/"
                     "duty_cycle_current"):
            status, body = request(path, headers=self.CAROL)
            self.assertEqual(400, status, (path, body))
            self.assertEqual("BadRequest", body["reason"], path)
            self.assertIn("invalid request path", body["message"], path)
        self.assertEqual(before, len(KUBE.access_reviews()))

    def test_the_access_review_names_exactly_what_is_served(self):
        path = ("/apis/custom.metrics.k8s.io/v1beta1/namespaces/review-ns/pods/%2A/"
                "duty_cycle_current")
        status, body = request(path, headers=self.CAROL)
        self.assertEqual(200, status, body)
        self.assertEqual("MetricValueList", body["kind"])
        reviews = [r for r in KUBE.access_reviews()
                   if r.get("resourceAttributes", {}).get("namespace") == "review-ns"]
        self.assertEqual(1, len(reviews), reviews)
        self.assertEqual({"namespace": "review-ns", "verb": "get",
                          "group": "custom.metrics.k8s.io", "version": "v1beta1",
                          "resource": "pods", "subresource": "duty_cycle_current", "name": "*"},
                         reviews[0]["resourceAttributes"])


class EveryRequestIsCountedTest(unittest.TestCase):
    """Answers refused before the router (401, 403, 400, 413, 431) are in the request metrics
    and the access log with their codes, like the served ones."""

    def test_refused_requests_are_counted_and_logged(self):
        before = request_counts()
        self.assertEqual(401, request(METRIC_PATH, headers={"Authorization": "Bearer forged"})[0])
        self.assertEqual(403, request(METRIC_PATH, headers={"Authorization": "Bearer bob-token"})[0])
        self.assertEqual(400, request("/apis/custom.metrics.k8s.io/v1beta1/nodes//m",
                                      headers={"Authorization": "Bearer carol-token"})[0])
        self.assertIn(send_raw(b"GET /apis HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n"),
                      (413, None))
        self.assertIn(send_raw(b"GET /apis HTTP/1.1\r\nHost: a\r\nX-Big: " + b"a" * (2 << 20) +
                               b"\r\n\r\n"), (431, None))
        expected = {("custom_metric", "401"): 1, ("custom_metric", "403"): 1,
                    ("other", "400"): 1, ("other", "413"): 1, ("other", "431"): 1}

        def counted():
            after = request_counts()
            return all(after.get(key, 0) - before.get(key, 0) == n for key, n in expected.items())
        harness.wait_until(counted, timeout=10, what="the refused requests in the metrics")

        log = PROCS.log(ADAPTER.process)
        for code in ("401", "403", "400", "413", "431"):
            self.assertRegex(log, r"(?m) %s \d+\.\d+ms" % code, code)


def audit_events():
    with open(AUDIT_LOG) as f:
        return [json.loads(line) for line in f if line.strip()]


def backends():
    """(name, events) of each audit backend: the log file and the webhook."""
    return (("log", audit_events()), ("webhook", WEBHOOK.events()))


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


class AuditLogTest(unittest.TestCase):
    """--audit-policy-file with the log (--audit-log-path) and the webhook
    (--audit-webhook-config-file) backends, both blocking (each event is written before its
    answer goes out): served and refused requests, at the levels the policy gives them."""

    def test_served_and_refused_requests_are_audited_at_their_policy_level(self):
        marker = "?audit=%d" % time.time_ns()  # this test's requests, whatever ran before
        path = METRIC_PATH + marker
        served = request(path, headers={"Authorization": "Bearer dana-token",
                                        "User-Agent": "audit-test/1.0"})
        self.assertEqual(200, served[0])
        self.assertEqual(403, request(path, headers={"Authorization": "Bearer erin-token"})[0])
        self.assertEqual(401, request(path, headers={"Authorization": "Bearer forged-in-audit"})[0])
        self.assertEqual(200, request("/healthz" + marker)[0])
        self.assertEqual(200, request("/apis" + marker,
                                      headers={"Authorization": "Bearer dana-token"})[0])

        for backend, recorded in backends():
            with self.subTest(backend=backend):
                events = [e for e in recorded if e["requestURI"].endswith(marker)]
                by_code = {(e["requestURI"].split("?")[0], e["responseStatus"]["code"]): e
                           for e in events}
                self.assertEqual({(METRIC_PATH, 200), (METRIC_PATH, 403), (METRIC_PATH, 401),
                                  ("/apis", 200)}, set(by_code))  # /healthz: level None
                self.assertEqual(4, len(events))  # the 401 once, at ResponseStarted
                for event in events:
                    stage = ("ResponseStarted" if event["responseStatus"]["code"] == 401
                             else "ResponseComplete")
                    self.assertEqual(("Event", "audit.k8s.io/v1", stage),
                                     (event["kind"], event["apiVersion"], event["stage"]))
                    self.assertEqual(["127.0.0.1"], event["sourceIPs"])

                allowed = by_code[(METRIC_PATH, 200)]
                self.assertEqual("RequestResponse", allowed["level"])
                self.assertEqual({"username": "dana", "groups": ["ops", "system:authenticated"]},
                                 allowed["user"])
                self.assertEqual("audit-test/1.0", allowed["userAgent"])
                self.assertEqual("get", allowed["verb"])
                self.assertEqual({"resource": "pods", "namespace": "default", "name": "*",
                                  "apiGroup": "custom.metrics.k8s.io", "apiVersion": "v1beta2",
                                  "subresource": "duty_cycle_current"}, allowed["objectRef"])
                self.assertEqual("allow", allowed["annotations"]["authorization.k8s.io/decision"])
                self.assertEqual(served[1], allowed["responseObject"])  # the answer itself

                denied = by_code[(METRIC_PATH, 403)]
                self.assertEqual("erin", denied["user"]["username"])
                self.assertEqual("forbid", denied["annotations"]["authorization.k8s.io/decision"])
                self.assertEqual("Failure", denied["responseStatus"]["status"])

                unknown = by_code[(METRIC_PATH, 401)]
                self.assertNotIn("authorization.k8s.io/decision", unknown.get("annotations", {}))
                self.assertEqual("", unknown["user"].get("username", ""))

                discovery = by_code[("/apis", 200)]
                self.assertEqual("Metadata", discovery["level"])
                self.assertNotIn("responseObject", discovery)
                self.assertNotIn("objectRef", discovery)
        self.assertEqual(0o600, os.stat(AUDIT_LOG).st_mode & 0o777)


class AuditAsUpstreamWritesItTest(unittest.TestCase):
    """What a kube-apiserver (and prometheus-adapter) writes that an auditor follows a request
    by: the Audit-Id header, the aggregator's Audit-ID taken on, sourceIPs through proxies, a
    failed authentication once at ResponseStarted, the authorizer's reason. Each check is made
    on both backends' events."""

    def events_of(self, audit_id):
        """{backend: the events with this auditID}."""
        return {backend: [e for e in recorded if e["auditID"] == audit_id]
                for backend, recorded in backends()}

    def test_every_answer_carries_its_audit_id_and_the_events_share_it(self):
        for what, path, headers, code in (
                ("served", METRIC_PATH, {"Authorization": "Bearer dana-token"}, 200),
                ("forbidden", METRIC_PATH, {"Authorization": "Bearer erin-token"}, 403),
                ("unauthenticated", METRIC_PATH, {"Authorization": "Bearer forged-id"}, 401),
                ("discovery", "/apis", {"Authorization": "Bearer dana-token"}, 200)):
            with self.subTest(what=what):
                status, fields, _ = exchange(path, headers=headers)
                self.assertEqual(code, status)
                audit_id = fields.get("audit-id", "")
                self.assertRegex(audit_id, UUID)
                for backend, events in self.events_of(audit_id).items():
                    self.assertEqual([code], [e["responseStatus"]["code"] for e in events],
                                     backend)
        # Upstream's WithAuditInit sets it whatever the policy says, so unaudited answers too.
        status, fields, _ = exchange("/healthz")
        self.assertEqual(200, status)
        self.assertRegex(fields.get("audit-id", ""), UUID)
        self.assertEqual({"log": [], "webhook": []}, self.events_of(fields["audit-id"]))

    def test_the_aggregators_audit_id_becomes_the_events_id(self):
        # What the kube-apiserver's proxy forwards: its own event's ID, any text (not checked,
        # as upstream takes it), spaces around it dropped as Go's header parser drops them.
        audit_id = "aggregator-%d" % time.time_ns()
        status, fields, _ = exchange(METRIC_PATH, headers={
            "Authorization": "Bearer dana-token", "Audit-ID": "  %s " % audit_id})
        self.assertEqual(200, status)
        self.assertEqual(audit_id, fields.get("audit-id"))
        for backend, events in self.events_of(audit_id).items():
            self.assertEqual(1, len(events), backend)  # the policy omits RequestReceived
            self.assertEqual("ResponseComplete", events[0]["stage"], backend)
        # An empty one is none: a fresh ID.
        status, fields, _ = exchange(METRIC_PATH, headers={
            "Authorization": "Bearer dana-token", "Audit-ID": ""})
        self.assertEqual(200, status)
        self.assertRegex(fields.get("audit-id", ""), UUID)

    def test_source_ips_list_the_proxies_addresses_first(self):
        client, proxy = "192.168.7.7", "10.20.30.40"
        audit_id = "source-ips-%d" % time.time_ns()
        self.assertEqual(200, request(METRIC_PATH, headers={
            "Authorization": "Bearer dana-token", "Audit-ID": audit_id,
            "X-Forwarded-For": "%s, not-an-address ,%s" % (client, proxy),
            "X-Real-Ip": proxy})[0])
        # The chain in order without its invalid entry, the real IP already in it, then us.
        for backend, events in self.events_of(audit_id).items():
            self.assertEqual([[client, proxy, "127.0.0.1"]], [e["sourceIPs"] for e in events],
                             backend)

    def test_a_failed_authentication_is_recorded_once_at_response_started(self):
        for what, cert, headers, message in (
                ("a forged token", None, {"Authorization": "Bearer forged-once"},
                 "Authentication failed, attempted: bearer"),
                ("a certificate of another CA", "other-ca", {},
                 "Authentication failed, attempted: x509")):
            with self.subTest(what=what):
                audit_id = "failed-authn-%d" % time.time_ns()
                status, fields, _ = exchange(METRIC_PATH, cert=cert,
                                             headers=dict(headers, **{"Audit-ID": audit_id}))
                self.assertEqual(401, status)
                self.assertEqual(audit_id, fields.get("audit-id"))
                for backend, events in self.events_of(audit_id).items():
                    self.assertEqual(1, len(events), backend)
                    self.assertEqual("ResponseStarted", events[0]["stage"], backend)
                    self.assertEqual({"metadata": {}, "message": message, "code": 401},
                                     events[0]["responseStatus"], backend)

    def test_the_authorization_reason_is_beside_the_decision(self):
        # fake_kube.py answers a denial with the reason "no RBAC policy matched" and an allowed
        # review with none.
        for token, decision, reason in (("dana-token", "allow", ""),
                                        ("erin-token", "forbid", "no RBAC policy matched")):
            with self.subTest(decision=decision):
                audit_id = "reason-%s-%d" % (decision, time.time_ns())
                request(METRIC_PATH, headers={"Authorization": "Bearer " + token,
                                              "Audit-ID": audit_id})
                for backend, events in self.events_of(audit_id).items():
                    self.assertEqual([{"authorization.k8s.io/decision": decision,
                                       "authorization.k8s.io/reason": reason}],
                                     [e["annotations"] for e in events], backend)


class LogBacktraceAtTest(unittest.TestCase):
    """--log_backtrace_at as klog reads it: the server of this module runs with ":0", the value
    klog's --help prints as the default; what klog refuses is refused, naming the flag."""

    def test_klogs_printed_default_runs_and_a_bad_value_names_the_flag(self):
        self.assertIn("--log_backtrace_at=:0", ADAPTER.process.args)
        self.assertEqual(200, request("/healthz")[0])
        for value in ("relist:3", "relist.cpp:0", "a.cpp:b.cpp:3"):
            with self.subTest(value=value):
                result = subprocess.run([ARGS.binary, "--log_backtrace_at=" + value, "--help"],
                                        capture_output=True, text=True, timeout=30)
                self.assertNotEqual(0, result.returncode)
                self.assertIn("--log_backtrace_at: ", result.stderr)
        result = subprocess.run([ARGS.binary, "--log_backtrace_at=relist.cpp:+3", "--help"],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(0, result.returncode, result.stderr)  # Go's Atoi reads "+3"


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
