"""A controllable fake Prometheus for fault-injection tests, run inside the test process.

It speaks the real JSON of the two endpoints metrics-adapter calls, GET or POST:
/api/v1/series (match[]) and /api/v1/query (query), plus /-/ready. It holds a list of series
(labels with __name__, and a sample value as Prometheus writes it: "1.5", "NaN", "+Inf") and
evaluates only the first instant-vector selector of a query (`name{l="v",l=~"a|b"}`); functions
and aggregations around it are ignored, so configs used with it should query plain selectors.

Faults are switched by methods of FakePrometheus, per endpoint ("query" or "series"):
set_fault(endpoint, kind, **options) with kind
  "hang"         hold the answer until the fault is cleared (or the server stops)
  "status"       answer `code` with `body` (text/plain)
  "error"        answer `code` with {"status":"error","errorType":..,"error":..}
  "invalid_json" answer 200 with a document that is not JSON
  "truncated"    announce the whole answer's Content-Length, send half of it, close
  "huge"         answer 200 with a valid start and `size` bytes of samples, streamed without
                 Content-Length (or with it when content_length=True); huge_bytes_sent counts
and refuse()/accept() to close and reopen the listening socket on the same port (connections are
refused meanwhile). set_warnings() adds "warnings" to successful answers. query_counts() tells
how often each (PromQL, time) pair was asked, for tests of query sharing."""

import json
import os
import re
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import harness

ENDPOINTS = ("query", "series")
# A hanging answer is released after this long even if nobody clears the fault.
MAX_HANG_SECONDS = 300

_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?')
_SELECTOR = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)?\{([^}]*)\}')


def _unquote(text):
    return re.sub(r'\\(.)', r'\1', text)


def parse_selector(text):
    """[(label, op, value)] of the first `name{...}` selector in `text` (name as __name__=)."""
    found = _SELECTOR.search(text)
    if not found:
        name = text.strip()
        return [("__name__", "=", name)] if name else []
    matchers = [("__name__", "=", found.group(1))] if found.group(1) else []
    body, position = found.group(2), 0
    while position < len(body.strip()):
        matched = _MATCHER.match(body, position)
        if not matched:
            raise ValueError("cannot parse matchers %r" % body)
        matchers.append((matched.group(1), matched.group(2), _unquote(matched.group(3))))
        position = matched.end()
    return matchers


def selects(matchers, labels):
    for name, op, value in matchers:
        actual = labels.get(name, "")
        if op == "=" and actual != value:
            return False
        if op == "!=" and actual == value:
            return False
        if op == "=~" and not re.fullmatch(value, actual):
            return False
        if op == "!~" and re.fullmatch(value, actual):
            return False
    return True


class FakePrometheus:
    def __init__(self, series=()):
        """series: [(labels including __name__, value text)]."""
        self.port = harness.free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.lock = threading.Lock()
        self.series = [(dict(labels), value) for labels, value in series]
        self.warnings = []
        self.faults = {}
        self.calls = {endpoint: 0 for endpoint in ENDPOINTS}
        self.query_keys = {}  # (query, time) -> /api/v1/query calls with them
        self.waiting = {endpoint: 0 for endpoint in ENDPOINTS}  # requests held by "hang"
        self.huge_bytes_sent = 0
        self.connections = set()  # open client connections, closed by refuse()
        self.server = None
        self.thread = None
        self.accept()

    # --- control --------------------------------------------------------------------------

    def accept(self):
        """Listens (again) on the same port."""
        if self.server is not None:
            return
        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def refuse(self):
        """Closes the listening socket and every open connection, as a Prometheus that went
        away would: new connections are refused until accept()."""
        if self.server is None:
            return
        self.server.shutdown()
        self.server.server_close()
        self.server = None
        with self.lock:
            connections = list(self.connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        self.clear_faults()
        self.refuse()

    def set_fault(self, endpoint, kind, **options):
        assert endpoint in ENDPOINTS, endpoint
        with self.lock:
            self._release(endpoint)
            fault = dict(options, kind=kind)
            if kind == "hang":
                fault["released"] = threading.Event()
            self.faults[endpoint] = fault

    def clear_faults(self, endpoint=None):
        with self.lock:
            for name in ([endpoint] if endpoint else list(self.faults)):
                self._release(name)
                self.faults.pop(name, None)

    def _release(self, endpoint):
        fault = self.faults.get(endpoint)
        if fault and "released" in fault:
            fault["released"].set()

    def set_warnings(self, warnings):
        with self.lock:
            self.warnings = list(warnings)

    def set_value(self, name, label, label_value, value):
        """Sets the sample value (text) of every `name` series with label=label_value."""
        with self.lock:
            self.series = [(labels, value if labels.get("__name__") == name
                            and labels.get(label) == label_value else old)
                           for labels, old in self.series]

    def add_series(self, labels, value):
        with self.lock:
            self.series.append((dict(labels), value))

    def call_count(self, endpoint):
        with self.lock:
            return self.calls[endpoint]

    def query_counts(self):
        """{(PromQL, time parameter): number of /api/v1/query calls}, counted on arrival."""
        with self.lock:
            return dict(self.query_keys)

    def waiting_count(self, endpoint):
        with self.lock:
            return self.waiting[endpoint]

    # --- answers ----------------------------------------------------------------------------

    def series_answer(self, selector):
        matchers = parse_selector(selector)
        with self.lock:
            data = [labels for labels, _ in self.series if selects(matchers, labels)]
            warnings = list(self.warnings)
        return self._success(data, warnings)

    def query_answer(self, promql):
        matchers = parse_selector(promql)
        now = round(time.time(), 3)
        with self.lock:
            result = [{"metric": {k: v for k, v in labels.items() if k != "__name__"},
                       "value": [now, value]}
                      for labels, value in self.series if selects(matchers, labels)]
            warnings = list(self.warnings)
        return self._success({"resultType": "vector", "result": result}, warnings)

    @staticmethod
    def _success(data, warnings):
        answer = {"status": "success", "data": data}
        if warnings:
            answer["warnings"] = warnings
        return json.dumps(answer).encode()


def _handler(fake):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            with fake.lock:
                fake.connections.add(self.connection)

        def finish(self):
            with fake.lock:
                fake.connections.discard(self.connection)
            super().finish()

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            self.answer(url.path, urllib.parse.parse_qs(url.query))

        def do_POST(self):
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            self.answer(url.path, form)

        def answer(self, path, params):
            if path == "/-/ready":
                return self.send(200, b"Prometheus Server is Ready.\n", "text/plain")
            endpoint = {"/api/v1/query": "query", "/api/v1/series": "series"}.get(path)
            if endpoint is None:
                return self.send(404, b"404 page not found\n", "text/plain")
            with fake.lock:
                fake.calls[endpoint] += 1
                if endpoint == "query":
                    key = (params.get("query", [""])[0], params.get("time", [""])[0])
                    fake.query_keys[key] = fake.query_keys.get(key, 0) + 1
                fault = dict(fake.faults.get(endpoint) or {})
            if fault.get("kind") == "hang":
                with fake.lock:
                    fake.waiting[endpoint] += 1
                try:
                    fault["released"].wait(MAX_HANG_SECONDS)
                finally:
                    with fake.lock:
                        fake.waiting[endpoint] -= 1
                fault = {}
            try:
                if endpoint == "query":
                    body = fake.query_answer(params.get("query", [""])[0])
                else:
                    body = fake.series_answer(params.get("match[]", [""])[0])
            except ValueError as error:
                return self.send(400, json.dumps({"status": "error", "errorType": "bad_data",
                                                  "error": str(error)}).encode())
            kind = fault.get("kind")
            if kind == "status":
                return self.send(fault["code"], fault.get("body", "").encode(), "text/plain")
            if kind == "error":
                return self.send(fault["code"], json.dumps({
                    "status": "error", "errorType": fault["error_type"],
                    "error": fault["error"]}).encode())
            if kind == "invalid_json":
                return self.send(200, b'{"status":"success","data":{"resultType":"vector",'
                                      b'"result":[{"metric":{},"value":[1,"1"]},}]}}')
            if kind == "truncated":
                return self.truncated(body)
            if kind == "huge":
                return self.huge(fault["size"], fault.get("content_length", False))
            self.send(200, body)

        def send(self, code, body, content_type="application/json"):
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.write(body)

        def write(self, data):
            try:
                self.wfile.write(data)
                self.wfile.flush()
                return True
            except OSError:  # the adapter gave up on the answer
                self.close_connection = True
                return False

        def truncated(self, body):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.write(body[:len(body) // 2])
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def huge(self, size, content_length):
            head = b'{"status":"success","data":{"resultType":"vector","result":['
            item = (b'{"metric":{"namespace":"default","pod":"filler-%08d"},'
                    b'"value":[1700000000,"1"]},')
            chunk = b"".join(item % i for i in range(1000))
            tail = b'{"metric":{},"value":[1700000000,"1"]}]}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if content_length:
                self.send_header("Content-Length", str(size))
            else:
                self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            sent = 0
            ok = self.write(head)
            while ok and sent + len(chunk) + len(tail) < size:
                ok = self.write(chunk)
                if ok:
                    sent += len(chunk)
                    with fake.lock:
                        fake.huge_bytes_sent = sent
            if ok:
                self.write(tail)

        def log_message(self, *unused):
            pass

    return Handler


# The config the fault tests serve: every gpu_* series with namespace and pod labels is a pods
# metric, queried as a plain selector so the fake's evaluation is exactly Prometheus's.
POD_RULES = """rules:
- seriesQuery: '{__name__=~"gpu_.*",namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  metricsQuery: '<<.Series>>{<<.LabelMatchers>>}'
"""


def pod_series(namespace, pods, value_of=lambda index: "%d" % (10 + index),
               name="gpu_utilization"):
    """[(labels, value)] of `name` for `pods` in `namespace`."""
    return [({"__name__": name, "namespace": namespace, "pod": pod, "gpu": str(index)},
             value_of(index)) for index, pod in enumerate(pods)]


def start_adapter(procs, binary, fake, rules=POD_RULES, extra_args=()):
    """The adapter on `fake` with `rules`, ready and past its first relist."""
    config = os.path.join(procs.workdir, "fault-rules-%d.yaml" % fake.port)
    with open(config, "w") as f:
        f.write(rules)
    return harness.Adapter(procs, binary, config, fake.url, extra_args=list(extra_args))


def started_or_stopped(procs, fake, start):
    """start() (starting what a test module needs), or everything stopped if it fails."""
    try:
        return start()
    except Exception:
        stop_all(procs, fake)
        raise


def stop_all(procs, fake):
    fake.stop()
    procs.stop_all()


def discovered(adapter, version="v1beta1"):
    """The resource names of the adapter's discovery document (empty unless it answers 200)."""
    status, body = adapter.get_json("/apis/custom.metrics.k8s.io/" + version)
    return {r["name"] for r in body["resources"]} if status == 200 else set()


def self_metric(adapter, name):
    """The value of the adapter's own metric `name` (with its labels, if any, as exposed:
    'm{backend="default"}') from /metrics, or None."""
    status, _, text = adapter.get("/metrics")
    if status != 200:
        return None
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def values_by_object(body):
    """{described object name: value} of a MetricValueList."""
    return {item["describedObject"]["name"]: item["value"] for item in body["items"]}


def expected_values(fake, name, namespace):
    """{pod: quantity} the adapter must serve for `name` in `namespace`, from the fake's series
    (values that are not finite numbers or are DCGM blank sentinels have no item)."""
    result = {}
    for labels, text in fake.series:
        if labels.get("__name__") != name or labels.get("namespace") != namespace:
            continue
        value = float(text)
        # DCGM's int64 blank sentinels (9223372036854775794 and up) are all the double 2^63.
        if value != value or value in (float("inf"), float("-inf"), 2.0 ** 63):
            continue
        result[labels["pod"]] = quantity(value)
    return result


def quantity(value):
    """The canonical quantity of a sample value: harness.milli_quantity below 2^63 milli-units,
    else the exact integer of the double with trailing zeros folded into a suffix (up to E)."""
    if abs(value * 1000) < 2.0 ** 63:
        return harness.milli_quantity(value)
    digits = str(int(value)).lstrip("-")
    sign = "-" if value < 0 else ""
    zeros = min(len(digits) - len(digits.rstrip("0")), 18)
    zeros -= zeros % 3
    suffix = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}[zeros]
    return sign + digits[:len(digits) - zeros] + suffix
