"""nginx as the same-run ceiling for the discovery document (issue 18): an absolute req/s says
little on a shared 2-core machine, the ratio to nginx serving the same bytes in the same minute
does.

nginx (Debian's nginx-light) serves the bytes the adapter just served, at the same path, over
TLS with the adapter's own certificate and key (the files --cert-dir generated), the adapter's
default cipher list and minimum version, no session cache and no tickets (the adapter keeps
neither), HTTP/1.1 keep-alive without a request limit per connection, one worker per core. The
document is a file read through open_file_cache: the descriptor stays open and every read
comes from the page cache, i.e. from memory.

It runs without root: a temporary prefix (-p) holds its config, pid file, error log and temp
paths, and it listens on a free port of 127.0.0.1. Started by root (the bench in a container),
nginx's workers run as nobody, so the prefix is world-readable (the key is read by the master
before the workers start)."""

import http.client
import os
import re
import shutil
import ssl
import tempfile

import harness  # free_port, wait_until

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TLS_POLICY = os.path.join(REPO, "src", "server", "tls_policy.cpp")
CLOCK_TICK = os.sysconf("SC_CLK_TCK")
CONFIG = """
worker_processes %(workers)d;
master_process on;
daemon off;
pid %(dir)s/nginx.pid;
error_log %(dir)s/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    server_tokens off;
    types { }
    default_type application/json;
    sendfile off;
    open_file_cache max=8 inactive=1h;
    open_file_cache_valid 1h;
    etag off;
    keepalive_requests 1000000000;
    keepalive_timeout 300s;
    client_body_temp_path %(dir)s/tmp/body;
    proxy_temp_path %(dir)s/tmp/proxy;
    fastcgi_temp_path %(dir)s/tmp/fastcgi;
    uwsgi_temp_path %(dir)s/tmp/uwsgi;
    scgi_temp_path %(dir)s/tmp/scgi;
    server {
        listen 127.0.0.1:%(port)d ssl;
        ssl_certificate %(cert)s;
        ssl_certificate_key %(key)s;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers %(ciphers)s;
        ssl_prefer_server_ciphers on;
        ssl_session_cache off;
        ssl_session_tickets off;
        root %(dir)s/docroot;
        location = %(path)s {
            add_header Cache-Control "no-cache, private";
            add_header X-Content-Type-Options nosniff;
        }
        location / { return 404; }
    }
}
"""


def adapter_default_ciphers():
    """kDefaultCipherList of src/server/tls_policy.cpp: the TLS 1.2 suites the adapter offers
    without --tls-cipher-suites (TLS 1.3 suites are OpenSSL's defaults on both sides)."""
    with open(TLS_POLICY) as f:
        match = re.search(r"kDefaultCipherList\s*=\s*((?:\s*\"[^\"]*\")+)\s*;", f.read())
    if not match:
        raise RuntimeError("kDefaultCipherList not found in " + TLS_POLICY)
    return "".join(re.findall(r"\"([^\"]*)\"", match.group(1)))


class NginxReference:
    def __init__(self, procs, path, document, cert, key, workers):
        self.procs = procs
        self.dir = tempfile.mkdtemp(prefix="ma-bench-nginx-")
        os.chmod(self.dir, 0o755)
        os.makedirs(os.path.join(self.dir, "tmp"))
        document_file = os.path.join(self.dir, "docroot", path.lstrip("/"))
        os.makedirs(os.path.dirname(document_file))
        with open(document_file, "wb") as f:
            f.write(document)
        self.port = harness.free_port()
        config = os.path.join(self.dir, "nginx.conf")
        with open(config, "w") as f:
            f.write(CONFIG % {"workers": workers, "dir": self.dir, "port": self.port,
                              "cert": cert, "key": key, "ciphers": adapter_default_ciphers(),
                              "path": path})
        self.process = procs.spawn("nginx", ["nginx", "-p", self.dir, "-c", config,
                                             "-e", os.path.join(self.dir, "error.log")])
        harness.wait_until(lambda: self._serves(path, document), timeout=20,
                           what="nginx to serve the discovery document (%s)" % self._errors())

    def _serves(self, path, document):
        if self.process.poll() is not None:
            raise RuntimeError("nginx exited: " + self._errors())
        return fetch(self.port, path)[1] == document

    def _errors(self):
        try:
            with open(os.path.join(self.dir, "error.log")) as f:
                return f.read()[-2000:] + self.procs.log(self.process)[-2000:]
        except OSError:
            return self.procs.log(self.process)[-2000:]

    def pids(self):
        """The master's and its workers'."""
        with open("/proc/%d/task/%d/children" % (self.process.pid, self.process.pid)) as f:
            return [self.process.pid] + [int(pid) for pid in f.read().split()]

    def cpu_seconds(self):
        """utime + stime of the master and its workers so far."""
        total = 0.0
        for pid in self.pids():
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / CLOCK_TICK
        return total

    def stop(self):
        self.procs.stop(self.process)
        shutil.rmtree(self.dir, ignore_errors=True)


def fetch(port, path):
    """(status, body bytes, (TLS version, cipher)) of one GET over a fresh TLS connection."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        return response.status, body, (connection.sock.version(), connection.sock.cipher()[0])
    finally:
        connection.close()
