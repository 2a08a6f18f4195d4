"""What the adapter sends to Prometheus, seen on the wire by a recording proxy
(recording_proxy.py) between the adapter and a fake Prometheus: --prometheus-header lines
(canonical names, a repeated name as repeated lines), the credentials of
--prometheus-auth-config (bearer token, basic auth, inline CA and client certificate over TLS)
and of --prometheus-auth-incluster (a fake service-account directory), the upstream rule that
--prometheus-ca-file overrules both, and startup failures that name the flag."""

import base64
import os
import subprocess
import sys
import unittest

import fake_prometheus
import harness
from recording_proxy import RecordingProxy

ARGS, UNITTEST_ARGV = harness.parse_args()
PROCS = FAKE = CONFIG = PKI = None
METRIC_RESOURCE = "pods/gpu_utilization"


def make_server_cert(directory, ca, name):
    """A certificate for 127.0.0.1 signed by `ca` (cert, key): (cert path, key path)."""
    cert, key = os.path.join(directory, name + ".crt"), os.path.join(directory, name + ".key")
    csr, ext = cert + ".csr", cert + ".ext"
    harness.openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
    harness.openssl("req", "-new", "-sha256", "-key", key, "-out", csr, "-subj", "/CN=" + name)
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n")
    harness.openssl("x509", "-req", "-sha256", "-days", "30", "-in", csr, "-CA", ca[0],
                    "-CAkey", ca[1], "-CAcreateserial", "-out", cert, "-extfile", ext)
    return cert, key


def write(name, text):
    path = os.path.join(PROCS.workdir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def read(path):
    with open(path) as f:
        return f.read()


def b64(text):
    return base64.b64encode(text.encode()).decode()


def kubeconfig(name, user_fields, cluster_fields=""):
    """A kubeconfig whose server points nowhere useful: --prometheus-auth-config ignores it."""
    return write(name, "apiVersion: v1\nkind: Config\ncurrent-context: prom\n"
                       "contexts: [{name: prom, context: {cluster: k, user: u}}]\n"
                       "clusters: [{name: k, cluster: {server: 'https://192.0.2.1:6443'%s}}]\n"
                       "users: [{name: u, user: {%s}}]\n" % (cluster_fields, user_fields))


def setUpModule():
    global PROCS, FAKE, CONFIG, PKI
    PROCS = harness.Processes()
    FAKE = fake_prometheus.FakePrometheus(fake_prometheus.pod_series("default", ["trainer-0"]))
    try:
        CONFIG = write("rules.yaml", fake_prometheus.POD_RULES)
        pki_dir = os.path.join(PROCS.workdir, "pki")
        ca = harness.make_ca(pki_dir, "prometheus-ca")
        PKI = {"ca": ca[0],
               "server": make_server_cert(pki_dir, ca, "prometheus"),
               "client": harness.make_client_cert(pki_dir, ca, "client", "metrics-adapter")}
    except Exception:
        fake_prometheus.stop_all(PROCS, FAKE)
        raise


def tearDownModule():
    fake_prometheus.stop_all(PROCS, FAKE)


class CredentialsTest(unittest.TestCase):
    def through_proxy(self, args, tls=None):
        """Starts a proxy to the fake and the adapter on the proxy with `args`; returns the first
        series request the proxy saw, once discovery through it worked end to end."""
        proxy = RecordingProxy(FAKE.url, tls=tls)
        self.addCleanup(proxy.stop)
        adapter = harness.Adapter(PROCS, ARGS.binary, CONFIG, proxy.url, extra_args=args)
        self.addCleanup(PROCS.stop, adapter.process)
        harness.wait_until(lambda: METRIC_RESOURCE in fake_prometheus.discovered(adapter),
                           timeout=20, what="discovery through the proxy")
        series = [r for r in proxy.requests() if r.target.startswith("/api/v1/series")]
        self.assertTrue(series)
        self.adapter = adapter
        return series[0]

    def test_headers_go_out_canonical_and_repeated_lines_in_order(self):
        request = self.through_proxy([
            "--prometheus-header=x-scope-orgid=tenant-a",
            "--prometheus-header", "X-SCOPE-ORGID=tenant-b",
            "--prometheus-header=thanos-tenant=team=blue"])  # split at the first '='
        self.assertEqual(["X-Scope-Orgid", "X-Scope-Orgid"], request.names("x-scope-orgid"))
        self.assertEqual(["tenant-a", "tenant-b"], request.values("x-scope-orgid"))
        self.assertEqual(["Thanos-Tenant"], request.names("thanos-tenant"))
        self.assertEqual(["team=blue"], request.values("thanos-tenant"))
        self.assertEqual([], request.values("authorization"))

    def test_auth_config_bearer_token(self):
        token_file = write("kubeconfig-token", "token-from-file\n")
        request = self.through_proxy(["--prometheus-auth-config=" + kubeconfig(
            "token.kubeconfig", "token: inline-token, tokenFile: %s" % token_file)])
        # tokenFile wins over token, as in client-go; the file's newline is trimmed.
        self.assertEqual(["Bearer token-from-file"], request.values("authorization"))

        request = self.through_proxy(["--prometheus-auth-config=" + kubeconfig(
            "inline-token.kubeconfig", "token: inline-token")])
        self.assertEqual(["Bearer inline-token"], request.values("authorization"))

    def test_auth_config_basic_auth(self):
        request = self.through_proxy(["--prometheus-auth-config=" + kubeconfig(
            "basic.kubeconfig", "username: adapter, password: 'pa:ss word'")])
        self.assertEqual(["Basic " + b64("adapter:pa:ss word")], request.values("authorization"))

    def test_auth_config_inline_ca_and_client_certificate_over_tls(self):
        tls = {"cert": PKI["server"][0], "key": PKI["server"][1], "client_ca": PKI["ca"]}
        path = kubeconfig(
            "tls.kubeconfig",
            "token: tls-token, client-certificate-data: %s, client-key-data: %s"
            % (b64(read(PKI["client"][0])), b64(read(PKI["client"][1]))),
            cluster_fields=", certificate-authority-data: " + b64(read(PKI["ca"])))
        request = self.through_proxy(["--prometheus-auth-config=" + path], tls=tls)
        self.assertEqual({"commonName": "metrics-adapter"}, request.client_subject)
        self.assertEqual(["Bearer tls-token"], request.values("authorization"))

    def test_auth_incluster_sends_the_service_account_token_and_trusts_its_ca(self):
        account = os.path.join(PROCS.workdir, "serviceaccount")
        os.makedirs(account)
        write("serviceaccount/token", "service-account-token\n")
        write("serviceaccount/ca.crt", read(PKI["ca"]))
        tls = {"cert": PKI["server"][0], "key": PKI["server"][1]}
        os.environ["METRICS_ADAPTER_SERVICE_ACCOUNT_DIR"] = account
        try:
            request = self.through_proxy(["--prometheus-auth-incluster"], tls=tls)
        finally:
            del os.environ["METRICS_ADAPTER_SERVICE_ACCOUNT_DIR"]
        self.assertEqual(["Bearer service-account-token"], request.values("authorization"))

    def test_ca_file_overrules_the_auth_config_as_upstream(self):
        path = kubeconfig("ignored.kubeconfig", "token: must-not-be-sent")
        request = self.through_proxy(
            ["--prometheus-auth-config=" + path, "--prometheus-ca-file=" + PKI["ca"]])
        self.assertEqual([], request.values("authorization"))
        self.assertIn("--prometheus-auth-config is ignored because --prometheus-ca-file is set",
                      PROCS.log(self.adapter.process))

    def test_bad_credentials_stop_startup_naming_the_flag(self):
        missing = os.path.join(PROCS.workdir, "missing")
        os.makedirs(missing, exist_ok=True)
        token_less = kubeconfig("token-less.kubeconfig",
                                "tokenFile: " + os.path.join(missing, "token"))
        cases = [
            (["--prometheus-auth-config=" + token_less, "--prometheus-auth-incluster"], {},
             "--prometheus-auth-config and --prometheus-auth-incluster cannot be used together"),
            (["--prometheus-auth-config=" + token_less], {},
             "--prometheus-auth-config (kubeconfig %s): tokenFile: cannot read %s/token"
             % (token_less, missing)),
            (["--prometheus-auth-config=" + kubeconfig("half.kubeconfig", "username: adapter")],
             {}, "basic authentication needs both username and password"),
            (["--prometheus-auth-incluster"], {"METRICS_ADAPTER_SERVICE_ACCOUNT_DIR": missing},
             "--prometheus-auth-incluster: the service-account token: cannot read %s/token"
             % missing),
        ]
        for args, env, expected in cases:
            result = subprocess.run(
                [ARGS.binary, "--config=" + CONFIG, "--prometheus-url=" + FAKE.url] + args,
                capture_output=True, text=True, timeout=30, env=dict(os.environ, **env))
            self.assertEqual(1, result.returncode, result.stderr)
            self.assertIn(expected, result.stderr)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
