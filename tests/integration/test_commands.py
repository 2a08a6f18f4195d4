"""The command table (issue 46): `metrics-adapter help` lists the commands, every command answers
`--help` with its own usage and exit 0, an unknown command is a clear error and exit 2, the
server's own words (flags, the prometheus-community chart's leading "/adapter") still start the
server path, and as a kubectl plugin the binary answers --version as kubectl users expect: through
a real kubectl, which finds kubectl-metrics_adapter on PATH."""

import os
import re
import subprocess
import tempfile
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()


def run(argv, env=None):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    return result.returncode, result.stdout, result.stderr


def listed_commands():
    code, out, err = run([ARGS.binary, "help"])
    assert code == 0, err
    section = out.split("Commands (metrics-adapter COMMAND --help for each):\n", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ")]


class CommandTableTest(unittest.TestCase):
    def test_help_lists_every_command_and_the_servers_flags(self):
        commands = listed_commands()
        self.assertEqual(commands,
                         ["doctor", "explain", "check-config", "forecast", "help", "version"])
        code, out, _ = run([ARGS.binary, "--help"])
        self.assertEqual(code, 0)
        self.assertIn("Commands (metrics-adapter COMMAND --help for each):", out)
        for title in ("Secure serving flags:", "Authentication flags:", "Authorization flags:",
                      "Audit flags:", "Prometheus flags:", "Rules and discovery flags:",
                      "Logging flags:"):
            self.assertIn("\n" + title + "\n", out)

    def test_every_command_answers_help_with_its_usage(self):
        for command in listed_commands():
            for flag in ("--help", "-h"):
                code, out, err = run([ARGS.binary, command, flag])
                self.assertEqual(code, 0, "%s %s: %s" % (command, flag, err))
                self.assertTrue(out.startswith("usage: metrics-adapter " + command), out)
                self.assertEqual(err, "")
            code, out, _ = run([ARGS.binary, "help", command])
            self.assertEqual(code, 0)
            self.assertTrue(out.startswith("usage: metrics-adapter " + command), out)

    def test_short_flags_print_with_their_long_form(self):
        code, out, _ = run([ARGS.binary, "doctor", "--help"])
        self.assertEqual(code, 0)
        self.assertRegex(out, r"(?m)^  -n, --namespace=VALUE +the HPA's namespace")
        self.assertRegex(out, r"(?m)^  -A, --all-namespaces +")
        self.assertNotRegex(out, r"(?m)^  --(n|A|f|o)[= ]")

    def test_an_unknown_command_is_an_error_naming_the_commands(self):
        code, out, err = run([ARGS.binary, "doctr", "hpa", "x"])
        self.assertEqual(code, 2)
        self.assertEqual(out, "")
        self.assertIn('unknown command "doctr"', err)
        self.assertIn("  doctor ", err)
        code, _, err = run([ARGS.binary, "help", "nope"])
        self.assertEqual(code, 2)
        self.assertIn('unknown command "nope"', err)

    def test_the_servers_words_still_reach_the_server(self):
        # The prometheus-community chart passes "/adapter" first: ignored, as upstream does.
        code, out, err = run([ARGS.binary, "/adapter", "--help"])
        self.assertEqual(code, 0, err)
        self.assertTrue(out.startswith("Usage: metrics-adapter --config=FILE [flags]"), out)
        code, out, _ = run([ARGS.binary, "--version"])
        self.assertEqual(code, 0)
        self.assertRegex(out, r"^metrics-adapter \d+\.\d+\.\d+\n$")
        code, version, _ = run([ARGS.binary, "version"])
        self.assertEqual((code, version), (0, out))


class PluginTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.plugin = os.path.join(self.directory.name, "kubectl-metrics_adapter")
        os.symlink(os.path.abspath(ARGS.binary), self.plugin)

    def tearDown(self):
        self.directory.cleanup()

    def test_version_and_help_as_kubectl_users_expect(self):
        code, version, _ = run([ARGS.binary, "--version"])
        self.assertEqual(code, 0)
        for words in (["--version"], ["version"], ["-v"]):
            self.assertEqual(run([self.plugin] + words)[:2], (0, version), words)
        code, out, _ = run([self.plugin])
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith("usage: kubectl metrics-adapter COMMAND"), out)
        self.assertIn("  doctor ", out)
        code, out, _ = run([self.plugin, "doctor", "--help"])
        self.assertEqual(code, 0)
        self.assertIn("usage: metrics-adapter doctor", out)
        # Never a server from a person's shell: a server flag is no command.
        code, _, err = run([self.plugin, "--config=x.yaml"])
        self.assertEqual(code, 2)
        self.assertIn("unknown command", err)

    def test_through_a_real_kubectl(self):
        kubectl = harness.modern_tool("kubectl")
        env = dict(os.environ, PATH=self.directory.name + os.pathsep + os.environ["PATH"])
        code, out, err = run([kubectl, "metrics-adapter", "--version"], env=env)
        self.assertEqual(code, 0, err)
        self.assertEqual(out, run([ARGS.binary, "--version"])[1])


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
