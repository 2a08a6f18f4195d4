"""--tls-sni-cert-key: the certificate a client gets depends on the name it asks for (SNI), by
upstream's rules (exact beats wildcard, patterns from the flag beat names extracted from the
certificate, case ignored), and the default serving certificate answers every other name and
clients that send none. A bad pair stops the adapter at startup with the flag and value named."""

import os
import socket
import ssl
import subprocess
import unittest

import fake_prometheus
import harness
from fake_prometheus import FakePrometheus

ARGS, UNITTEST_ARGV = harness.parse_args()
PROCS = FAKE = ADAPTER = None
PKI = None
CA = None  # (cert, key) of the CA that signs every serving certificate here


def make_serving_cert(name, common_name, dns_names):
    """A serving certificate signed by CA, named by `common_name` and `dns_names`."""
    cert, key = os.path.join(PKI, name + ".crt"), os.path.join(PKI, name + ".key")
    csr, ext = cert + ".csr", cert + ".ext"
    harness.openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
    harness.openssl("req", "-new", "-sha256", "-key", key, "-out", csr,
                    "-subj", "/CN=" + common_name)
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=%s\n"
                % ",".join("DNS:" + name for name in dns_names))
    harness.openssl("x509", "-req", "-sha256", "-days", "30", "-in", csr, "-CA", CA[0],
                    "-CAkey", CA[1], "-CAcreateserial", "-out", cert, "-extfile", ext)
    return cert, key


def der_of(cert_file):
    with open(cert_file) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


# Certificate files by role, filled in by setUpModule.
FILES = {}


def setUpModule():
    global PROCS, FAKE
    PROCS = harness.Processes()
    FAKE = FakePrometheus(fake_prometheus.pod_series("default", ["p-0"]))

    def start():
        global ADAPTER, PKI, CA
        PKI = os.path.join(PROCS.workdir, "pki")
        subprocess.run(["bash", harness.MAKE_CERTS, "--out", PKI], check=True,
                       capture_output=True, timeout=60)
        CA = (os.path.join(PKI, "ca.crt"), os.path.join(PKI, "ca.key"))
        FILES["default"] = (os.path.join(PKI, "serving.crt"), os.path.join(PKI, "serving.key"))
        # Served for the names it carries (extracted): its CN and both DNS SANs.
        FILES["alpha"] = make_serving_cert("alpha", "alpha.sni.test",
                                           ["alpha.sni.test", "*.alpha.sni.test"])
        # Served for the patterns of its flag only; they claim alpha.sni.test too.
        FILES["beta"] = make_serving_cert("beta", "beta.sni.test", ["beta.sni.test"])
        sni_args = [
            "--tls-sni-cert-key=%s,%s" % FILES["alpha"],
            "--tls-sni-cert-key=%s,%s:Beta.SNI.test,*.wild.test,alpha.sni.test" % FILES["beta"],
        ]
        config = os.path.join(PROCS.workdir, "rules.yaml")
        with open(config, "w") as f:
            f.write(fake_prometheus.POD_RULES)
        ADAPTER = harness.Adapter(
            PROCS, ARGS.binary, config, FAKE.url, ca_file=CA[0],
            tls_args=["--tls-cert-file=" + FILES["default"][0],
                      "--tls-private-key-file=" + FILES["default"][1]] + sni_args)

    fake_prometheus.started_or_stopped(PROCS, FAKE, start)


def tearDownModule():
    fake_prometheus.stop_all(PROCS, FAKE)


def handshake(server_name, verify_hostname=False):
    """(DER of the certificate served, status line of GET /healthz) for a client sending
    `server_name` as SNI (None: no SNI). The chain is always verified against the CA; the name
    only with `verify_hostname`."""
    context = ssl.create_default_context(cafile=CA[0])
    context.check_hostname = verify_hostname
    with socket.create_connection(("127.0.0.1", ADAPTER.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=server_name) as tls:
            der = tls.getpeercert(binary_form=True)
            tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while True:
                chunk = tls.recv(65536)
                if not chunk:
                    break
                answer += chunk
    return der, answer.split(b"\r\n", 1)[0].decode()


class SniTest(unittest.TestCase):
    def served(self, server_name, verify_hostname=False):
        der, status = handshake(server_name, verify_hostname)
        self.assertEqual("HTTP/1.1 200 OK", status, server_name)
        roles = [role for role, files in FILES.items() if der_of(files[0]) == der]
        return roles[0] if roles else "unknown certificate"

    def test_extracted_names_exact_and_wildcard(self):
        # A real client accepts what it gets: its name is verified too.
        self.assertEqual("alpha", self.served("a.alpha.sni.test", verify_hostname=True))
        self.assertEqual("alpha", self.served("Z.ALPHA.sni.test", verify_hostname=True))

    def test_patterns_of_the_flag_beat_extracted_names(self):
        # alpha.sni.test is alpha's CN and SAN, but beta's flag names it.
        self.assertEqual("beta", self.served("alpha.sni.test"))

    def test_patterns_are_case_insensitive_and_wildcards_take_one_label(self):
        self.assertEqual("beta", self.served("beta.sni.test", verify_hostname=True))
        self.assertEqual("beta", self.served("x.wild.test"))
        self.assertEqual("default", self.served("wild.test"))
        self.assertEqual("default", self.served("a.b.wild.test"))

    def test_unknown_names_and_no_sni_get_the_default(self):
        self.assertEqual("default", self.served("unknown.example.com"))
        self.assertEqual("default", self.served(None))
        self.assertEqual("default", self.served("localhost", verify_hostname=True))


class BadSniFlagTest(unittest.TestCase):
    def run_adapter(self, value):
        result = subprocess.run(
            [ARGS.binary, "--config=" + os.path.join(PROCS.workdir, "rules.yaml"),
             "--prometheus-url=" + FAKE.url, "--authentication-mode=none",
             "--bind-address=127.0.0.1", "--secure-port=%d" % harness.free_port(),
             "--cert-dir=" + os.path.join(PROCS.workdir, "bad-certs"),
             "--tls-sni-cert-key=" + value], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(0, result.returncode, result.stderr)
        return result.stdout + result.stderr

    def test_a_key_of_another_certificate_stops_startup(self):
        value = "%s,%s:x.test" % (FILES["alpha"][0], FILES["beta"][1])
        output = self.run_adapter(value)
        self.assertIn('--tls-sni-cert-key="%s"' % value, output)
        self.assertIn("does not match", output)

    def test_an_unreadable_file_stops_startup(self):
        value = "%s,%s" % (FILES["alpha"][0], os.path.join(PKI, "absent.key"))
        output = self.run_adapter(value)
        self.assertIn('--tls-sni-cert-key="%s"' % value, output)
        self.assertIn("cannot open", output)

    def test_a_value_without_a_key_or_with_an_empty_pattern_is_a_flag_error(self):
        for value in (FILES["alpha"][0], "%s,%s:a.test,,b.test" % FILES["alpha"]):
            output = self.run_adapter(value)
            self.assertIn('--tls-sni-cert-key: "%s"' % value, output)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
