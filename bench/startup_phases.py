"""Start → ready, phase by phase (issue 18), from the timestamps of the lines the adapter logs at
--v=6 while it starts (src/app/adapter.cpp builds in this order):
  exec → first line:        loading the binary and its libraries, flags, config, backends
                            (the first line is "backend ...: new client for ...");
  REST mapping:             "Kubernetes API: ..." → "loaded N of M rules" (API discovery
                            against the Kubernetes API, then compiling the rules);
  TLS and server start:     → "serving HTTPS on" (serving certificate, TLS context, listen);
  first relist:             → "relist: backend ...: ... in N ms";
  to the client:            → the first complete discovery document the bench reads.
Log timestamps are wall-clock milliseconds, so each phase is good to about 1 ms."""

import datetime
import re

LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d) \w (.*)$", re.M)
MARKS = [  # (phase that ends at this line, pattern of the line)
    ("exec_to_first_log_ms", re.compile(r".")),
    ("to_kube_client_ms", re.compile(r"^Kubernetes API: ")),
    ("rest_mapping_ms", re.compile(r"^loaded \d+ of \d+ rules")),
    ("tls_and_listen_ms", re.compile(r"^serving HTTPS on ")),
    ("first_relist_ms", re.compile(r"^relist: backend ")),
]
PHASES = [name for name, _ in MARKS] + ["relist_to_client_ms"]


def timestamps(log):
    """[(wall-clock seconds, message)] of the text-format log lines."""
    return [(datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp(), message)
            for stamp, message in LINE.findall(log)]


def phases(log, exec_wall, discovered_wall):
    """{phase: milliseconds} of one start; a phase whose line is missing is None (and so is
    the one after it, which would otherwise absorb it)."""
    lines = timestamps(log)
    result = {}
    previous = exec_wall
    for name, pattern in MARKS:
        found = next((when for when, message in lines if pattern.search(message)), None)
        if found is None or previous is None:
            result[name] = None
        else:
            result[name] = (found - previous) * 1000.0
        previous = found
    result["relist_to_client_ms"] = (None if previous is None
                                     else (discovered_wall - previous) * 1000.0)
    return result
