"""A recording HTTP(S) proxy for integration tests, run inside the test process.

It listens on 127.0.0.1, forwards every request (method, target, body and header lines) to a
target base URL, answers with the target's status, Content-Type and body, and records each
request's header lines exactly as they arrived: names as sent, a repeated name as separate
lines, in order. So a test sees what the adapter put on the wire, which a case-insensitive
header map (a proxy's, a framework's) would hide. With `tls` it serves HTTPS and records the
subject of the client certificate when one is required."""

import http.client
import ssl
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Not forwarded: they describe this hop, not the request.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade",
              "proxy-connection", "host", "content-length"}


class RecordedRequest:
    def __init__(self, method, target, header_lines, client_subject):
        self.method = method
        self.target = target
        self.header_lines = header_lines  # [(name as sent, value)] in order
        self.client_subject = client_subject  # {"commonName": ...} or None
        self.answer_encoding = None  # the target answer's Content-Encoding, once it answered

    def values(self, name):
        """Every value of header `name` (any case), in order."""
        return [v for n, v in self.header_lines if n.lower() == name.lower()]

    def names(self, name):
        """Every spelling `name` (any case) was sent with, in order."""
        return [n for n, _ in self.header_lines if n.lower() == name.lower()]


class RecordingProxy:
    def __init__(self, target_url, tls=None):
        """tls: None for plain HTTP, else {"cert": path, "key": path, "client_ca": path or
        None}; with client_ca, clients must present a certificate it issued."""
        self.target = urllib.parse.urlsplit(target_url)
        self.lock = threading.Lock()
        self.recorded = []
        self.down = False  # after stop(): kept-alive connections are dropped, not served
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.scheme = "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls["cert"], tls["key"])
            if tls.get("client_ca"):
                context.load_verify_locations(tls["client_ca"])
                context.verify_mode = ssl.CERT_REQUIRED
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.port = self.server.server_address[1]
        self.url = "%s://127.0.0.1:%d" % (self.scheme, self.port)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        """No more answers: new connections are refused and open ones are closed unanswered,
        as when the target's host goes away."""
        self.down = True
        self.server.shutdown()
        self.server.server_close()

    def requests(self):
        with self.lock:
            return list(self.recorded)

    def _record(self, request):
        with self.lock:
            self.recorded.append(request)

    def _forward(self, method, target, header_lines, body):
        """(status, content type, content encoding, body) of the target's answer: the body as
        it came, compressed when the client asked for that and the target did."""
        connection_class = (http.client.HTTPSConnection if self.target.scheme == "https"
                            else http.client.HTTPConnection)
        connection = connection_class(self.target.hostname, self.target.port, timeout=30)
        try:
            # putheader line by line, so repeated names stay repeated towards the target too.
            connection.putrequest(method, self.target.path.rstrip("/") + target,
                                  skip_accept_encoding=True)
            for name, value in header_lines:
                if name.lower() not in HOP_BY_HOP:
                    connection.putheader(name, value)
            if body:
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body or None)
            answer = connection.getresponse()
            return (answer.status, answer.getheader("Content-Type", ""),
                    answer.getheader("Content-Encoding"), answer.read())
        finally:
            connection.close()

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # The header block and the body are written separately: with Nagle's algorithm the
            # body waits for the client's delayed ACK of the headers, 40 ms on every call.
            disable_nagle_algorithm = True

            def _relay(self):
                if proxy.down:
                    self.close_connection = True
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                header_lines = list(self.headers.raw_items())
                subject = None
                if proxy.scheme == "https":
                    certificate = self.connection.getpeercert()
                    if certificate:
                        subject = {k: v for rdn in certificate["subject"] for k, v in rdn}
                recorded = RecordedRequest(self.command, self.path, header_lines, subject)
                proxy._record(recorded)
                try:
                    status, content_type, encoding, answer = proxy._forward(
                        self.command, self.path, header_lines, body)
                except OSError as error:
                    status, content_type, encoding, answer = (502, "text/plain", None,
                                                              str(error).encode())
                recorded.answer_encoding = encoding
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                if encoding:
                    self.send_header("Content-Encoding", encoding)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = _relay
            do_POST = _relay

            def log_message(self, *args):
                pass

        return Handler
