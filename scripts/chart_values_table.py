#!/usr/bin/env python3
"""Prints the value table of charts/metrics-adapter/README.md from the chart's
values.schema.json (each value's path and description) and values.yaml (its default), so the
README lists every value the schema accepts. tests/integration/test_chart.py checks the README
against both; after a change to either, paste this output over the README's table.

  scripts/chart_values_table.py > /tmp/table.md"""

import json
import os
import sys

CHART = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "charts",
                     "metrics-adapter")


def leaves(schema, prefix=""):
    """(path, schema) of every value: a property that is not an object with properties."""
    for name, child in schema.get("properties", {}).items():
        path = prefix + name
        if child.get("type") == "object" and "properties" in child:
            yield from leaves(child, path + ".")
        else:
            yield path, child


def default(values, path):
    for part in path.split("."):
        values = values.get(part) if isinstance(values, dict) else None
    return values


def cell(value):
    return "`%s`" % json.dumps(value, separators=(",", ":")).replace("|", "\\|")


def main():
    import yaml
    with open(os.path.join(CHART, "values.schema.json")) as f:
        schema = json.load(f)
    with open(os.path.join(CHART, "values.yaml")) as f:
        values = yaml.safe_load(f)
    sys.stdout.write("| value | default | meaning |\n|---|---|---|\n")
    for path, child in leaves(schema):
        sys.stdout.write("| `%s` | %s | %s |\n" % (path, cell(default(values, path)),
                                                  child["description"]))


if __name__ == "__main__":
    main()
