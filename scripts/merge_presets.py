#!/usr/bin/env python3
"""Writes one config file made of several presets (config/*.yaml) to stdout, for a deploy kit
component whose presets each have a `rules:` list, which plain concatenation would repeat.

Each preset's lines before its first top-level key (its description) come first, in order;
then one `rules:` with every preset's rules, one `externalRules:` and so on, in the order the
keys first appear. A section keeps its comments and its items' text byte for byte.

  scripts/merge_presets.py config/a.yaml config/b.yaml > deploy/components/x/config.yaml"""

import re
import sys

TOP_LEVEL_KEY = re.compile(r"^([A-Za-z]+):\s*$")


def sections(text, path):
    """(description lines, {key: body lines}) of one preset; a top-level key must open a block
    list on its own line, anything else is refused so nothing is silently reordered."""
    description, bodies, key = [], {}, None
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        match = TOP_LEVEL_KEY.match(line)
        if match:
            key = match.group(1)
            if key in bodies:
                sys.exit("%s:%d: %s: appears twice" % (path, number, key))
            bodies[key] = []
        elif key is None:
            if line.strip() and not line.startswith("#"):
                sys.exit("%s:%d: expected a comment or a top-level key" % (path, number))
            description.append(line)
        elif line[:1] not in ("", " ", "-", "#", "\n"):
            sys.exit("%s:%d: expected a top-level key on its own line" % (path, number))
        else:
            bodies[key].append(line)
    return description, bodies


def main(paths):
    if not paths:
        sys.exit(__doc__)
    descriptions, merged = [], {}
    for path in paths:
        with open(path) as f:
            description, bodies = sections(f.read(), path)
        descriptions += description
        for key, body in bodies.items():
            merged.setdefault(key, []).extend(body)
    sys.stdout.write("".join(descriptions))
    for key, body in merged.items():
        sys.stdout.write("%s:\n%s" % (key, "".join(body)))


if __name__ == "__main__":
    main(sys.argv[1:])
