#!/usr/bin/env python3
"""Checks that every module includes only the public headers of the modules it depends on.

The dependencies are the DEPS of each ma_module(...) in CMakeLists.txt, and the table in
docs/architecture.md must list the same ones; a module may include the headers of its own module and of every module
it depends on directly or through another. Private headers (src/<module>/*.h) are for their own
module only.

The public headers (include/metrics_adapter/) are also a firewall for the heavy libraries:
they include neither cpprestsdk (cpprest/, pplx/) nor Boost (Beast, Asio) nor nlohmann/json's
json.hpp, which live in the .cpp files and private headers of the modules that use them. Every
file that includes a public header would otherwise parse them (and with cpprestsdk instantiate
about 4 s of templates with g++), whatever it uses. nlohmann/json_fwd.hpp is allowed: it only
declares the JSON types, so an interface can pass a document through without its includers
paying for the library (docs/performance.md, "Build times").

Prints each violation as file:line and exits 1 if there is any.
  check_layers.py [--root DIR]   (DIR: a tree laid out as this repository; default this one)"""

import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEM_INCLUDE_RE = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)
# What a public header may not include: a prefix of the path inside <...>, and why.
FIREWALLED = (
    ("cpprest/", "cpprestsdk"),
    ("pplx/", "cpprestsdk's PPLX"),
    ("boost/", "Boost (Beast, Asio)"),
    ("nlohmann/json.hpp", "nlohmann/json (json_fwd.hpp declares its types)"),
)
MODULE_RE = re.compile(r"^ma_module\((\w+)([^)]*)\)", re.M)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_deps():
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        text = f.read()
    deps = {}
    for name, dep_list in MODULE_RE.findall(text):
        deps[name] = {d[len("ma_"):] for d in (dep_list or "").split() if d.startswith("ma_")}
    return deps


def allowed(deps):
    """module -> the modules it may include (itself and its transitive dependencies)."""
    closure = {}

    def visit(module, trail=()):
        if module in trail:
            raise SystemExit("dependency cycle: " + " -> ".join(trail + (module,)))
        if module not in closure:
            reach = {module}
            for dep in deps.get(module, ()):
                reach |= visit(dep, trail + (module,))
            closure[module] = reach
        return closure[module]

    for module in deps:
        visit(module)
    return closure


def files_of(module):
    for root in (os.path.join(REPO, "src", module),
                 os.path.join(REPO, "include", "metrics_adapter", module)):
        if not os.path.isdir(root):
            continue
        for directory, _, names in os.walk(root):
            for name in sorted(names):
                if name.endswith((".cpp", ".h")):
                    yield os.path.join(directory, name)


def documented_deps():
    """module -> the modules docs/architecture.md's table says it may include."""
    table = {}
    with open(os.path.join(REPO, "docs", "architecture.md")) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 3 and cells[0].startswith("`") and cells[0].endswith("`"):
                listed = cells[2]
                table[cells[0].strip("`")] = set() if listed == "—" else {
                    m.strip() for m in listed.split(",")}
    return table


def firewall_problems():
    """Public headers that include a heavy library."""
    problems = []
    public = os.path.join(REPO, "include", "metrics_adapter")
    for directory, _, names in os.walk(public):
        for name in sorted(names):
            if not name.endswith(".h"):
                continue
            path = os.path.join(directory, name)
            with open(path) as f:
                text = f.read()
            for match in SYSTEM_INCLUDE_RE.finditer(text):
                header = match.group(1)
                for prefix, library in FIREWALLED:
                    if header.startswith(prefix):
                        line = text.count("\n", 0, match.start()) + 1
                        problems.append(
                            "%s:%d: public header includes <%s>: %s belongs in the .cpp files "
                            "and private headers (src/<module>/) of the module that uses it" % (
                                os.path.relpath(path, REPO), line, header, library))
    return problems


def main():
    global REPO
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=REPO)
    REPO = os.path.abspath(parser.parse_args().root)
    deps = module_deps()
    reach = allowed(deps)
    problems = []
    documented = documented_deps()
    for module in sorted(set(deps) | set(documented)):
        if documented.get(module) != deps.get(module):
            problems.append("docs/architecture.md: %s may include %s, CMakeLists.txt says %s" % (
                module, sorted(documented.get(module, [])) if module in documented else "(no row)",
                sorted(deps[module]) if module in deps else "(no module)"))
    for module in sorted(deps):
        for path in files_of(module):
            with open(path) as f:
                text = f.read()
            for match in INCLUDE_RE.finditer(text):
                header = match.group(1)
                line = text.count("\n", 0, match.start()) + 1
                parts = header.split("/")
                if parts[0] == "metrics_adapter" and len(parts) > 2:
                    used = parts[1]
                elif len(parts) > 1 and parts[0] in deps:
                    used = parts[0]
                    if used != module:  # a private header of another module
                        problems.append("%s:%d: %s includes %s, private to %s" % (
                            os.path.relpath(path, REPO), line, module, header, used))
                        continue
                else:
                    continue
                if used not in reach[module]:
                    problems.append("%s:%d: %s includes %s but does not depend on %s" % (
                        os.path.relpath(path, REPO), line, module, header, used))
    problems += firewall_problems()
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("layers: %d modules, every include follows CMakeLists.txt's dependencies, as "
          "docs/architecture.md documents them; no public header includes cpprestsdk, Boost or "
          "nlohmann/json.hpp" % len(deps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
