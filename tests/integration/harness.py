"""Starts the real processes an integration test needs (simulated GPU exporter, Prometheus,
metrics-adapter) on 127.0.0.1 and offers the clients (kubectl get --raw, curl, Python TLS).
Every process is stopped by stop_all(), also when a test fails."""

import argparse
import functools
import http.server
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPORTER = os.path.join(REPO, "scripts", "gpu_exporter_sim.py")


def parse_args():
    """--binary PATH (from CMake); the rest goes to unittest."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "metrics-adapter"))
    args, rest = parser.parse_known_args()
    return args, [sys.argv[0]] + rest


def modern_tool(name):
    """The path of kubectl 1.31 or helm 3.17 from scripts/install-k8s-tools.sh (installed there
    on first use): Debian's kubectl is 1.20, too old for aggregated discovery and OpenAPI v3."""
    tools = os.path.join(REPO, ".tools", "bin")
    if not os.access(os.path.join(tools, name), os.X_OK):
        subprocess.run([os.path.join(REPO, "scripts", "install-k8s-tools.sh")], check=True,
                       stdout=subprocess.DEVNULL)
    return os.path.join(tools, name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout=60.0, interval=0.2, what="condition"):
    """Polls predicate() until it returns a truthy value; raises with `what` on timeout."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as error:  # the thing polled for may not be up yet
            last_error = error
        time.sleep(interval)
    raise AssertionError("timed out waiting for %s (last error: %r)" % (what, last_error))


def http_get_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read().decode())


class Processes:
    def __init__(self):
        self.workdir = tempfile.mkdtemp(prefix="ma-it-")
        self.children = []

    def spawn(self, name, argv, check_exit=False, **kwargs):
        """check_exit: stop_all() fails unless the process exits with status 0 (the
        sanitizer build's leak and error reports end the adapter with a non-zero status)."""
        log = open(os.path.join(self.workdir, name + ".log"), "w+")
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True, **kwargs)
        process.name = name
        process.check_exit = check_exit
        process.log_path = log.name
        process.log_file = log
        self.children.append(process)
        return process

    def log(self, process):
        with open(process.log_path) as f:
            return f.read()

    def stop(self, process, sig=signal.SIGTERM, timeout=10):
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.log_file.close()

    def stop_all(self):
        failures = []
        for process in reversed(self.children):
            self.stop(process)
            if process.check_exit and process.returncode != 0:
                failures.append("%s exited with status %d; its log ends:\n%s" % (
                    process.name, process.returncode, self.log(process)[-6000:]))
        if os.environ.get("KEEP_TEST_DIRS"):
            print("kept", self.workdir)
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)
        if failures:
            raise AssertionError("\n".join(failures))


class Exporter:
    def __init__(self, procs, mode="static"):
        self.port = free_port()
        self.process = procs.spawn("exporter", [sys.executable, EXPORTER, "--port", str(self.port),
                                                "--mode", mode])
        wait_until(lambda: self.metrics_text(), timeout=20, what="the GPU exporter")

    def metrics_text(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.port, timeout=5) as r:
            return r.read().decode()

    def samples(self):
        """[(name, {label: value}, float value)] parsed from what the exporter serves."""
        result = []
        for line in self.metrics_text().splitlines():
            if not line or line.startswith("#"):
                continue
            name, rest = line.split("{", 1)
            label_text, value = rest.rsplit("} ", 1)
            labels = {}
            for pair in split_labels(label_text):
                key, raw = pair.split("=", 1)
                labels[key] = raw[1:-1]
            result.append((name, labels, float(value)))
        return result


    def grouped(self, series, label):
        """{label value: [(labels, value)]} of the samples of `series` that carry `label`."""
        groups = {}
        for name, labels, value in self.samples():
            if name == series and labels.get(label):
                groups.setdefault(labels[label], []).append((labels, value))
        return groups


class FunctionExporter:
    """A /metrics endpoint on 127.0.0.1 that serves `exposition()` (Prometheus text format) at
    each scrape, for tests whose series are functions of time. stop() closes it."""

    def __init__(self, exposition):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = exposition().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def split_labels(text):
    parts, current, quoted = [], "", False
    for c in text:
        if c == '"':
            quoted = not quoted
        if c == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += c
    if current:
        parts.append(current)
    return parts


def scrape_configs(scrape_port):
    """The scrape_configs section both engines read: the exporter as job `gpu`. The target
    label `service` names the exporter's Service, as a ServiceMonitor would, so Object metrics
    on services/dcgm-exporter can be tested."""
    return ("scrape_configs:\n  - job_name: gpu\n    static_configs:\n"
            "      - targets: ['127.0.0.1:%d']\n"
            "        labels: {service: dcgm-exporter}\n" % scrape_port)


class Prometheus:
    def __init__(self, procs, scrape_port, rule_files=(), backfill=None):
        """backfill: an OpenMetrics file whose samples promtool turns into TSDB blocks before
        Prometheus starts, as history older than what it scrapes."""
        self.port = free_port()
        self.dir = os.path.join(procs.workdir, "prometheus-%d" % self.port)
        os.makedirs(self.dir)
        if backfill:
            subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", "--quiet",
                            backfill, self.dir + "/data"], check=True, timeout=600,
                           capture_output=True)
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n")
            if rule_files:
                f.write("rule_files:\n" + "".join("  - %s\n" % r for r in rule_files))
            f.write(scrape_configs(scrape_port))
        self.url = "http://127.0.0.1:%d" % self.port
        self.process = procs.spawn("prometheus-%d" % self.port, [
            "prometheus", "--config.file=" + config, "--storage.tsdb.path=" + self.dir + "/data",
            "--web.listen-address=127.0.0.1:%d" % self.port, "--log.level=warn"])
        wait_until(lambda: urllib.request.urlopen(self.url + "/-/ready", timeout=2).status == 200,
                   timeout=60, what="Prometheus to be ready")

    def query(self, promql):
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        answer = http_get_json(url)
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def wait_for_scrapes(self):
        """Until the exporter has been scraped once: target discovery starts the first scrape a
        few seconds after Prometheus is ready, and backfilled history shows series before."""
        wait_until(lambda: [r for r in self.query("up") if r["value"][1] == "1"], timeout=60,
                   what="Prometheus to scrape the exporter")

    def wait_for_series(self, promql, count):
        wait_until(lambda: len(self.query(promql)) >= count, timeout=60,
                   what="%d series of %s in Prometheus" % (count, promql))


class VictoriaMetrics:
    """A single-node VictoriaMetrics scraping the exporter every second with its own scraper
    (-promscrape.config), on a free port with its own data directory.

    VictoriaMetrics evaluates an instant query whose time is within -search.latencyOffset (30 s)
    of now at now - 30 s, unless the query carries nocache=1 (docs/victoriametrics.md). The flag
    keeps its default here, as in most clusters; query() and adapter_url() add nocache=1, so
    what a test sees is the last scrape."""

    def __init__(self, procs, scrape_port, flags=()):
        self.port = free_port()
        self.dir = os.path.join(procs.workdir, "victoria-metrics-%d" % self.port)
        os.makedirs(self.dir)
        config = os.path.join(self.dir, "scrape.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n" + scrape_configs(scrape_port))
        self.url = "http://127.0.0.1:%d" % self.port
        self.process = procs.spawn("victoria-metrics-%d" % self.port, [
            "victoria-metrics", "-storageDataPath=" + self.dir + "/data",
            "-httpListenAddr=127.0.0.1:%d" % self.port, "-promscrape.config=" + config,
            "-loggerLevel=WARN"] + list(flags))
        wait_until(lambda: urllib.request.urlopen(self.url + "/health", timeout=2).status == 200,
                   timeout=60, what="VictoriaMetrics to be ready")

    def adapter_url(self):
        """--prometheus-url for an adapter that sees the last scrape: the base URL's query
        goes with every call the adapter makes."""
        return self.url + "/?nocache=1"

    def query(self, promql):
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql,
                                                                   "nocache": "1"})
        answer = http_get_json(url)
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def wait_for_scrapes(self):
        """Until the exporter has been scraped once (the scraper starts within one interval)."""
        wait_until(lambda: [r for r in self.query("up") if r["value"][1] == "1"], timeout=60,
                   what="VictoriaMetrics to scrape the exporter")

    def wait_for_series(self, promql, count):
        wait_until(lambda: len(self.query(promql)) >= count, timeout=60,
                   what="%d series of %s in VictoriaMetrics" % (count, promql))

    def import_text(self, exposition):
        """Stores samples given in the Prometheus text format, each with its timestamp in
        milliseconds (/api/v1/import/prometheus), e.g. history older than what is scraped.
        They become searchable within about a second; callers poll."""
        request = urllib.request.Request(self.url + "/api/v1/import/prometheus",
                                         data=exposition.encode(), method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 204, response.status


def openssl(*args, cwd=None):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, timeout=60, cwd=cwd)


def make_ca(directory, name):
    """An ECDSA P-256 CA: returns (cert path, key path)."""
    os.makedirs(directory, exist_ok=True)
    cert, key = os.path.join(directory, name + ".crt"), os.path.join(directory, name + ".key")
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
    openssl("req", "-x509", "-new", "-sha256", "-days", "30", "-key", key, "-out", cert,
            "-subj", "/CN=" + name, "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return cert, key


def make_client_cert(directory, ca, name, common_name, organizations=(), usage="clientAuth"):
    """A leaf certificate signed by `ca` (cert, key) with extended key usage `usage`."""
    cert, key = os.path.join(directory, name + ".crt"), os.path.join(directory, name + ".key")
    csr, ext = cert + ".csr", cert + ".ext"
    subject = "/CN=" + common_name + "".join("/O=" + o for o in organizations)
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
    openssl("req", "-new", "-sha256", "-key", key, "-out", csr, "-subj", subject)
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=%s\n" % usage)
    openssl("x509", "-req", "-sha256", "-days", "30", "-in", csr, "-CA", ca[0], "-CAkey", ca[1],
            "-CAcreateserial", "-out", cert, "-extfile", ext)
    return cert, key


FAKE_KUBE = os.path.join(REPO, "tests", "integration", "fake_kube.py")
MAKE_CERTS = os.path.join(REPO, "certs", "make-certs.sh")


class FakeKube:
    """The fake Kubernetes API (fake_kube.py) over TLS with a CA made by certs/make-certs.sh,
    plus a kubeconfig that reaches it with a bearer token."""

    TOKEN = "lister-token"

    def __init__(self, procs, objects):
        self.port = free_port()
        self.dir = os.path.join(procs.workdir, "kube-%d" % self.port)
        os.makedirs(self.dir)
        subprocess.run(["bash", MAKE_CERTS, "--out", self.dir, "--service", "kubernetes"],
                       check=True, capture_output=True, timeout=60)
        objects_file = os.path.join(self.dir, "objects.json")
        with open(objects_file, "w") as f:
            json.dump(objects, f)
        self.process = procs.spawn("fake-kube-%d" % self.port, [
            sys.executable, FAKE_KUBE, "--port", str(self.port), "--objects", objects_file,
            "--cert", os.path.join(self.dir, "serving.crt"),
            "--key", os.path.join(self.dir, "serving.key"), "--token", self.TOKEN])
        self.url = "https://127.0.0.1:%d" % self.port
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write(KUBECONFIG_WITH_TOKEN % {"server": self.url, "ca": "ca.crt",
                                             "token": self.TOKEN})
        wait_until(lambda: self.stats() is not None, timeout=30, what="the fake Kubernetes API")

    def _call(self, method, path, body=None):
        context = ssl.create_default_context(cafile=os.path.join(self.dir, "ca.crt"))
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return json.loads(response.read().decode())

    def stats(self):
        return self._call("GET", "/_control/stats")["lists"]

    def calls(self):
        """[(method, path, watch)] of every authenticated call the fake answered."""
        return [tuple(c) for c in self._call("GET", "/_control/stats")["calls"]]

    def review_counts(self):
        return self._call("GET", "/_control/stats")["reviews"]

    def access_reviews(self):
        return self._call("GET", "/_control/reviews")["reviews"]

    def list_calls(self, path):
        return self.stats().get(path, 0)

    def add_crd(self, crd):
        self._call("POST", "/_control/crd", crd)

    def set_down(self, down):
        self._call("POST", "/_control/down", {"down": down})

    def set_fault(self, kind, **options):
        """One of fake_kube.py's faults ("slow", "throttle", "cut"); "none" clears it."""
        self._call("POST", "/_control/fault", dict(options, kind=kind))

    def list_attempts(self):
        return self._call("GET", "/_control/stats")["list_attempts"]

    def change_object(self, op, resource, obj):
        """"add", "modify" or "delete" one object (e.g. a pod); returns the new
        resourceVersion. Open watches of the resource receive the event."""
        return self._call("POST", "/_control/objects",
                          {"op": op, "resource": resource, "object": obj})["resourceVersion"]

    def cut_watches(self):
        """Every open watch stream breaks off mid-stream."""
        self._call("POST", "/_control/cut_watches", {})

    def compact(self, gone_as="event"):
        """Forgets the change history and breaks the open watches: watches from older versions
        get 410 Gone (an ERROR event, or an HTTP 410 answer with gone_as="status")."""
        self._call("POST", "/_control/compact", {"as": gone_as})

    def watch_calls(self, path):
        return self._call("GET", "/_control/stats")["watches"].get(path, 0)

    def watch_stats(self):
        """{path: WATCHes answered} over every path."""
        return self._call("GET", "/_control/stats")["watches"]

    def watch_versions(self, path):
        """The resourceVersion each watch of `path` asked for, in order."""
        return self._call("GET", "/_control/stats")["watch_versions"].get(path, [])


# A relative certificate-authority path: resolved against the kubeconfig's directory.
KUBECONFIG_WITH_TOKEN = """apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: %(server)s
    certificate-authority: %(ca)s
users:
- name: lister
  user:
    token: %(token)s
contexts:
- name: fake
  context: {cluster: fake, user: lister}
current-context: fake
"""


def https_get(url, ca_file, headers=None, timeout=30):
    """(status, content type, body text) of a GET over TLS verified against ca_file (real TLS,
    no skip-verify)."""
    request = urllib.request.Request(url, headers=headers or {})
    context = ssl.create_default_context(cafile=ca_file)
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), error.read().decode()


class Adapter:
    def __init__(self, procs, binary, config, prometheus_url, extra_args=(), delegated_auth=False,
                 tls_args=None, ca_file=None):
        self.port = free_port()
        self.cert_dir = os.path.join(procs.workdir, "certs-%d" % self.port)
        self.binary = binary
        self.process = procs.spawn("adapter-%d" % self.port, check_exit=True, argv=[
            binary, "--config=" + config, "--prometheus-url=" + prometheus_url,
            "--secure-port=%d" % self.port, "--bind-address=127.0.0.1",
            "--metrics-relist-interval=2s", "--v=6"]
            + (tls_args if tls_args is not None else ["--cert-dir=" + self.cert_dir])
            + ([] if delegated_auth else ["--authentication-mode=none"])
            + list(extra_args))
        self.procs = procs
        # What one answer may take: the sanitizer build computes the forecast observer page
        # (a backtest over days of history) ten times slower than Release, near 30 s.
        self.answer_timeout = 120 if is_sanitized(binary) else 30
        self.base = "https://127.0.0.1:%d" % self.port
        self.ca_file = ca_file or os.path.join(self.cert_dir, "apiserver.crt")
        wait_until(lambda: self.get("/readyz")[0] == 200, timeout=60,
                   what="the adapter to be ready (log: %s)" % self.process.log_path)
        self.kubeconfig = os.path.join(procs.workdir, "kubeconfig-%d" % self.port)
        with open(self.kubeconfig, "w") as f:
            f.write(KUBECONFIG % {"server": self.base, "ca": self.ca_file})

    def ssl_context(self):
        # Verify against the certificate the adapter generated: real TLS, no skip-verify.
        return ssl.create_default_context(cafile=self.ca_file)

    def get(self, path, headers=None):
        """(status, content type, body text) over real TLS."""
        return https_get(self.base + path, self.ca_file, headers, self.answer_timeout)

    def get_json(self, path, headers=None):
        status, content_type, body = self.get(path, headers)
        return status, json.loads(body) if body else None

    def kubectl_raw(self, path):
        """kubectl get --raw through a kubeconfig that trusts the adapter's CA."""
        result = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, "get", "--raw", path],
                                capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout, result.stderr

    def curl(self, path, *extra):
        result = subprocess.run(["curl", "-sS", "--cacert", self.ca_file, "-w", "\n%{http_code}"]
                                + list(extra)
                                + [self.base + path], capture_output=True, text=True, timeout=60)
        body, _, code = result.stdout.rpartition("\n")
        return int(code or 0), body

    def rss_kib(self):
        """The adapter's resident memory. Under AddressSanitizer freed memory stays in
        quarantine and shadow pages, so RSS comparisons say nothing: the test is skipped."""
        if is_sanitized(self.binary):
            raise unittest.SkipTest("RSS is not comparable in an AddressSanitizer build")
        with open("/proc/%d/status" % self.process.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


@functools.lru_cache(maxsize=None)
def is_sanitized(binary):
    """True when `binary` carries the AddressSanitizer runtime (it then lists its flags)."""
    result = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, ASAN_OPTIONS="help=1"))
    return "AddressSanitizer" in result.stderr


KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: adapter
  cluster:
    server: %(server)s
    certificate-authority: %(ca)s
users:
- name: anonymous
  # A token, so kubectl does not prompt for a username; the adapter does not check it yet.
  user: {token: integration-test}
contexts:
- name: adapter
  context:
    cluster: adapter
    user: anonymous
current-context: adapter
"""


def milli_quantity(value):
    """The expected quantity string, computed independently of the adapter: trunc(v*1000)
    milli-units in canonical DecimalSI form (docs/api-contract.md "Quantities")."""
    milli = int(value * 1000)
    if milli == 0:
        return "0"
    sign = "-" if milli < 0 else ""
    v, e = abs(milli), -3
    while v >= 10 and v % 10 == 0:
        v //= 10
        e += 1
    # Bring the exponent down to a multiple of 3 (Python's % is always non-negative).
    while e % 3 != 0:
        v *= 10
        e -= 1
    suffix = {-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}[e]
    return "%s%d%s" % (sign, v, suffix)
