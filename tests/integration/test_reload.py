"""Live config reload end to end: the adapter reads its rules through a ConfigMap-style symlink
(config.yaml -> ..data/config.yaml, ..data -> <version dir>) that is swapped as the kubelet does,
while a client keeps requesting; a broken version must leave the last good one serving."""

import json
import os
import re
import signal
import threading
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
BASE_CONFIG = os.path.join(harness.REPO, "config", "gpu-alibaba-exporter.yaml")
DISCOVERY = "/apis/custom.metrics.k8s.io/v1beta1"


def config_text(current_suffix):
    """The walkthrough config with its second rule naming metrics <metric><current_suffix>."""
    with open(BASE_CONFIG) as f:
        text = f.read()
    assert '"${1}_current"' in text
    return text.replace('"${1}_current"', '"${1}%s"' % current_suffix)


# Parses as YAML but rules[1].name.matches is not a valid regex.
BROKEN_CONFIG = config_text("_now").replace("^nvidia_gpu_(.*)$\n    as: \"${1}_now\"",
                                            "^nvidia_gpu_(.*$\n    as: \"${1}_now\"")
assert BROKEN_CONFIG != config_text("_now")


class ConfigMapVolume:
    """A directory laid out like a mounted ConfigMap, updated by an atomic symlink swap."""

    def __init__(self, directory, text):
        self.directory = directory
        self.versions = 0
        os.makedirs(directory)
        self.publish(text)
        os.symlink("..data/config.yaml", self.path)

    @property
    def path(self):
        return os.path.join(self.directory, "config.yaml")

    def publish(self, text):
        self.versions += 1
        version = "ts%d" % self.versions
        os.makedirs(os.path.join(self.directory, version))
        with open(os.path.join(self.directory, version, "config.yaml"), "w") as f:
            f.write(text)
        tmp = os.path.join(self.directory, "..data_tmp")
        os.symlink(version, tmp)
        os.replace(tmp, os.path.join(self.directory, "..data"))
        return os.path.join(self.directory, version, "config.yaml")


class RequestLoop(threading.Thread):
    """GETs a discovery document and a metric no reload touches, recording every failure."""

    def __init__(self, adapter, metric_path):
        super().__init__(daemon=True)
        self.adapter = adapter
        self.paths = [DISCOVERY, metric_path]
        self.stopping = threading.Event()
        self.requests = 0
        self.failures = []

    def run(self):
        while not self.stopping.is_set():
            for path in self.paths:
                try:
                    status, _, body = self.adapter.get(path)
                    if status != 200:
                        self.failures.append((path, status, body[:200]))
                except Exception as error:  # a dropped connection is a failure too
                    self.failures.append((path, "error", repr(error)))
                self.requests += 1
            self.stopping.wait(0.02)  # pacing only, on a 2-core machine

    def stop(self):
        self.stopping.set()
        self.join(timeout=60)


def discovered(adapter):
    status, body = adapter.get_json(DISCOVERY)
    return {r["name"] for r in body["resources"]} if status == 200 else set()


def reload_failures(adapter):
    """metrics_adapter_config_reloads_total{result="failure"}, or None without /metrics."""
    status, _, body = adapter.get("/metrics")
    if status != 200:
        return None
    pattern = r'^metrics_adapter_config_reloads_total\{[^}]*result="failure"[^}]*\}\s+(\S+)'
    match = re.search(pattern, body, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


class ConfigReloadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.procs = harness.Processes()
        try:
            exporter = harness.Exporter(cls.procs, mode="static")
            prometheus = harness.Prometheus(cls.procs, exporter.port)
            gpus = sum(1 for name, _, _ in exporter.samples() if name == "nvidia_gpu_duty_cycle")
            prometheus.wait_for_series("nvidia_gpu_duty_cycle", gpus)
            cls.namespace = next(labels["namespace_name"] for name, labels, _ in exporter.samples()
                                 if name == "nvidia_gpu_duty_cycle" and labels.get("pod_name"))
            cls.volume = ConfigMapVolume(os.path.join(cls.procs.workdir, "configmap"),
                                         config_text("_current"))
            cls.adapter = harness.Adapter(cls.procs, ARGS.binary, cls.volume.path, prometheus.url,
                                          extra_args=["--log-format=json"])
            harness.wait_until(lambda: "pods/duty_cycle_current" in discovered(cls.adapter),
                               timeout=60, what="the first discovery")
        except Exception:
            cls.procs.stop_all()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.procs.stop_all()

    def metric_path(self, metric):
        return "%s/namespaces/%s/pods/%%2A/%s" % (DISCOVERY, self.namespace, metric)

    def log(self):
        return self.procs.log(self.adapter.process)

    def wait_for_metric(self, present, absent, what):
        harness.wait_until(lambda: ("pods/" + present) in discovered(self.adapter)
                           and ("pods/" + absent) not in discovered(self.adapter),
                           timeout=20, what=what)
        status, body = self.adapter.get_json(self.metric_path(present))
        self.assertEqual(200, status, body)
        self.assertTrue(body["items"], body)

    def test_reloads_without_failed_requests_and_keeps_the_last_good_config(self):
        loop = RequestLoop(self.adapter, self.metric_path("duty_cycle_over_time"))
        loop.start()
        try:
            # 1. A ConfigMap update (symlink swap) renaming a metric is picked up.
            self.volume.publish(config_text("_now"))
            self.wait_for_metric("duty_cycle_now", "duty_cycle_current", "the renamed metric")

            # 2. A broken version is rejected, logged with file and field, and counted; the last
            #    good config keeps serving.
            failures_before = reload_failures(self.adapter)
            self.volume.publish(BROKEN_CONFIG)
            harness.wait_until(lambda: "config reload rejected" in self.log(), timeout=20,
                               what="the rejected reload in the log")
            rejected = [line for line in self.log().splitlines()
                        if "config reload rejected" in line]
            self.assertIn("config.yaml", rejected[-1])
            self.assertIn("rules[1].name.matches", rejected[-1])
            status, body = self.adapter.get_json(self.metric_path("duty_cycle_now"))
            self.assertEqual(200, status, body)
            self.assertIn("pods/duty_cycle_now", discovered(self.adapter))
            self.assertIsNotNone(failures_before, "no /metrics")
            self.assertGreaterEqual(reload_failures(self.adapter), failures_before + 1)

            # 3. SIGHUP re-reads the file even when its identity did not change: rewrite the
            #    current version in place with the same size and mtime, which polling ignores.
            reloads = self.log().count("config reloaded from")
            fixed = self.volume.publish(config_text("_now"))
            harness.wait_until(lambda: self.log().count("config reloaded from") > reloads,
                               timeout=20, what="the fixed config to be reloaded")
            stat = os.stat(fixed)
            with open(fixed, "r+") as f:
                f.write(config_text("_hup"))  # "_hup" and "_now" have the same length
            os.utime(fixed, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            self.assertEqual(stat.st_size, os.stat(fixed).st_size)
            self.adapter.process.send_signal(signal.SIGHUP)
            self.wait_for_metric("duty_cycle_hup", "duty_cycle_now", "the reload on SIGHUP")
            self.assertIn("received SIGHUP", self.log())
        finally:
            loop.stop()
        self.assertGreater(loop.requests, 20)
        self.assertEqual([], loop.failures)

    def test_access_log_is_json_and_hides_tokens(self):
        status, _, _ = self.adapter.get(DISCOVERY + "?token=hunter2")
        self.assertEqual(200, status)
        harness.wait_until(lambda: "token=REDACTED" in self.log(), timeout=10,
                           what="the access-log line")
        self.assertNotIn("hunter2", self.log())
        access = [json.loads(line) for line in self.log().splitlines()
                  if '"msg":"request"' in line and "token=REDACTED" in line]
        self.assertEqual("GET", access[0]["verb"])
        self.assertEqual(200, access[0]["code"])
        self.assertEqual("debug", access[0]["level"])
        self.assertIn("latency_ms", access[0])


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV, verbosity=2)
