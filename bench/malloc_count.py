"""Allocations per request, counted (issue 18: "no allocation per request on that path, show it
with a counter"): a uprobe on glibc's malloc, counted by `perf stat` over the server's
processes while wrk loads them. It counts every malloc, ours and the libraries' (OpenSSL's,
Asio's, Beast's), made by any thread of the process, and not C++'s operator new apart: that
calls malloc. The probe costs each malloc a trap, so the counting run is a run of its own,
never one whose times the table reports.

Needs perf (Debian's linux-perf) and root, for the probe; without them the rows show "-"."""

import os
import shutil
import subprocess

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
EVENT = "probe_libc:malloc"


def available():
    """True once the probe exists (it is added on the first call and stays until reboot)."""
    if not shutil.which("perf") or os.geteuid() != 0 or not os.path.exists(LIBC):
        return False
    listed = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True)
    if EVENT in listed.stdout:
        return True
    added = subprocess.run(["perf", "probe", "-q", "-x", LIBC, "malloc"], capture_output=True,
                           text=True)
    return added.returncode == 0


def count(pids, load):
    """(mallocs made by `pids` while load() ran, what load() returned)."""
    perf = subprocess.Popen(["perf", "stat", "-x", ",", "-e", EVENT, "-p",
                             ",".join(str(pid) for pid in pids)],
                            stderr=subprocess.PIPE, text=True)
    try:
        result = load()
    finally:
        perf.send_signal(2)  # SIGINT: perf prints its counts and exits
        _, err = perf.communicate(timeout=30)
    for line in err.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2] == EVENT:
            return int(fields[0]), result
    raise RuntimeError("perf stat printed no count: " + err[-500:])


def per_request(pids, load):
    """Mallocs per request of a wrk run: load() returns bench/run.py's wrk() result."""
    mallocs, result = count(pids, load)
    return mallocs / max(result["requests"], 1)
