"""scripts/check_layers.py's header firewall, fed a small tree laid out as this repository: a
public header that includes cpprestsdk, PPLX, Boost or nlohmann/json.hpp is refused with its
file and line; json_fwd.hpp, the standard library and a private header that includes them all
pass. No adapter runs."""

import os
import subprocess
import sys
import tempfile
import unittest

import harness

ARGS, UNITTEST_ARGV = harness.parse_args()
SCRIPT = os.path.join(harness.REPO, "scripts", "check_layers.py")
CMAKE = "ma_module(text)\nma_module(net DEPS ma_text)\n"
ARCHITECTURE = ("| module | job | may include |\n|---|---|---|\n"
                "| `text` | text | — |\n| `net` | HTTP | text |\n")


def check(files):
    """Runs the check on a tree of `files` ({path: text}); returns (exit code, output)."""
    with tempfile.TemporaryDirectory() as root:
        tree = {"CMakeLists.txt": CMAKE, "docs/architecture.md": ARCHITECTURE,
                "include/metrics_adapter/text/ascii.h": "#pragma once\n#include <string>\n"}
        tree.update(files)
        for path, text in tree.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        result = subprocess.run([sys.executable, SCRIPT, "--root", root],
                                capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout + result.stderr


class HeaderFirewallTest(unittest.TestCase):
    def test_a_clean_tree_passes(self):
        code, output = check({
            "include/metrics_adapter/net/http_client.h":
                "#pragma once\n#include <nlohmann/json_fwd.hpp>\n#include <string>\n"
                '#include "metrics_adapter/text/ascii.h"\n',
            # Private headers and sources may include what they implement with.
            "src/net/cpprest.h": "#pragma once\n#include <cpprest/http_client.h>\n",
            "src/net/http_client.cpp": '#include <boost/asio.hpp>\n#include "net/cpprest.h"\n'
                                       "#include <nlohmann/json.hpp>\n",
        })
        self.assertEqual(code, 0, output)
        self.assertIn("no public header includes", output)

    def test_each_heavy_library_in_a_public_header_is_refused_with_its_line(self):
        for header in ("cpprest/http_client.h", "pplx/pplxtasks.h", "boost/beast/http.hpp",
                       "boost/asio/ssl/context.hpp", "nlohmann/json.hpp"):
            with self.subTest(header=header):
                code, output = check({
                    "include/metrics_adapter/net/http_call.h":
                        "#pragma once\n\n#include <string>\n#include <%s>\n" % header,
                })
                self.assertEqual(code, 1, output)
                self.assertIn("include/metrics_adapter/net/http_call.h:4: public header "
                              "includes <%s>" % header, output)

    def test_the_repository_itself_passes(self):
        result = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout)


if __name__ == "__main__":
    unittest.main(argv=UNITTEST_ARGV)
