"""The bench's table, its rows as stable keys for --json, and the comparison with a saved run
(--baseline): every figure is a row with a key that names it ("discovery_c16.rps"), so an
earlier run's figures line up with today's by key and series count, whatever the table looks
like by then."""

import collections
import json
import os

import startup_phases

Row = collections.namedtuple("Row", "key label fmt values")  # values(result) -> tuple of floats


def rows(args, results):
    """The rows of the table, in order. A row whose figures a result lacks shows "-"."""
    table = [
        Row("discovery_s", "start to full discovery (s)", "%.2f", lambda r: (r["discovery_s"],)),
        Row("cpu_per_relist_s", "CPU per relist (s)", "%.2f", lambda r: (r["cpu_per_relist_s"],)),
        Row("peak_rss_mib", "peak RSS (MiB)", "%.1f", lambda r: (r["peak_rss_mib"],)),
        Row("steady_rss_mib", "steady RSS after relists (MiB)", "%.1f",
            lambda r: (r["steady_rss_mib"],)),
        Row("steady_anon_mib", "  of which anonymous (MiB)", "%.1f",
            lambda r: (r["steady_anon_mib"],)),
    ]
    table += startup_rows()
    if args.skip_load:
        return table
    table += [
        Row("idle_rss_mib", "idle RSS, discovery held (MiB)", "%.1f",
            lambda r: (r["idle_rss_mib"],)),
        Row("idle_anon_mib", "  of which anonymous (MiB)", "%.1f",
            lambda r: (r["idle_anon_mib"],)),
        Row("rss_after_load_mib", "RSS after load (MiB)", "%.1f",
            lambda r: (r["rss_after_load_mib"],)),
    ]
    for path, label in (("discovery", "discovery"), ("pods", "pods/* (100 pods)")):
        for pool in sorted({args.latency_connections, args.connections}):
            key = "%s_c%d" % (path, pool)
            table += [
                Row(key + ".latency", "%s, %d conns: p50 / p99 (ms)" % (label, pool), "%.3f",
                    lambda r, key=key: (r[key]["p50_ms"], r[key]["p99_ms"])),
                Row(key + ".rps", "%s, %d conns: req/s" % (label, pool), "%.0f",
                    lambda r, key=key: (r[key]["rps"],)),
            ]
            if path == "discovery" and pool == args.connections:
                table += nginx_rows(key)
    table += [
        Row("pods_queries_per_request", "pods/*: Prometheus queries per request", "%.3f",
            lambda r: (r["prometheus_queries_per_pods_request"],)),
        Row("fake_prometheus_ms_per_query", "pods/*: fake Prometheus's own time per query (ms)",
            "%.3f", lambda r: (r["fake_prometheus_ms_per_query"],)),
        Row("split.overhead", "pods/*, %d conns: adapter own p50 / p99 (ms)"
            % args.latency_connections, "%.3f",
            lambda r: (r["split"]["overhead_p50_ms"], r["split"]["overhead_p99_ms"])),
        Row("split.prometheus", "pods/*, %d conns: Prometheus call p50 / p99 (ms)"
            % args.latency_connections, "%.3f",
            lambda r: (r["split"]["prometheus_p50_ms"], r["split"]["prometheus_p99_ms"])),
        Row("split.handler", "pods/*, %d conns: whole handler p50 / p99 (ms)"
            % args.latency_connections, "%.3f",
            lambda r: (r["split"]["handler_p50_ms"], r["split"]["handler_p99_ms"])),
    ]
    for pool in sorted({args.latency_connections, args.connections}):
        key = "pods_c%d" % pool
        table += [
            Row("real_prometheus.%s.latency" % key,
                "pods/*, real Prometheus, %d conns: p50 / p99 (ms)" % pool, "%.3f",
                lambda r, key=key: (r["real_prometheus"][key]["p50_ms"],
                                    r["real_prometheus"][key]["p99_ms"])),
            Row("real_prometheus.%s.rps" % key,
                "pods/*, real Prometheus, %d conns: req/s" % pool, "%.0f",
                lambda r, key=key: (r["real_prometheus"][key]["rps"],)),
        ]
    return table + memory_rows(results)


def nginx_rows(key):
    """nginx serving the same document beside ours (bench/nginx_reference.py)."""
    nginx = "nginx_" + key
    return [
        Row(nginx + ".latency", "  nginx, same bytes: p50 / p99 (ms)", "%.3f",
            lambda r: (r[nginx]["p50_ms"], r[nginx]["p99_ms"])),
        Row(nginx + ".rps", "  nginx, same bytes: req/s", "%.0f", lambda r: (r[nginx]["rps"],)),
        Row("ratio_" + key + ".rps", "  ours / nginx: req/s", "%.2f",
            lambda r: (r["ratio_" + key]["rps"],)),
        Row("ratio_" + key + ".p99", "  ours / nginx: p99", "%.2f",
            lambda r: (r["ratio_" + key]["p99_ms"],)),
        Row(key + ".server_cpu", "  server CPU per request, ours / nginx (us)", "%.1f",
            lambda r: (r[key]["server_cpu_us"], r[nginx]["server_cpu_us"])),
        Row("ratio_" + key + ".server_cpu", "  ours / nginx: CPU per request", "%.2f",
            lambda r: (r["ratio_" + key]["server_cpu_us"],)),
        Row(key + ".client_cores", "  wrk's own CPU, ours / nginx (cores)", "%.2f",
            lambda r: (r[key]["client_cores"], r[nginx]["client_cores"])),
        Row("allocations.discovery", "  mallocs per request, ours / nginx", "%.1f",
            lambda r: (r["allocations"]["discovery"], r["allocations"]["nginx_discovery"])),
    ]


def startup_rows():
    labels = {
        "exec_to_first_log_ms": "  exec → first log line: libraries, config (ms)",
        "to_kube_client_ms": "  → Kubernetes client (ms)",
        "rest_mapping_ms": "  → REST mapping (API discovery), rules (ms)",
        "tls_and_listen_ms": "  → TLS setup, listening (ms)",
        "first_relist_ms": "  → first relist done (ms)",
        "relist_to_client_ms": "  → the bench reads full discovery (ms)",
    }
    table = [
        Row("startup.ready_s", "start to /readyz 200, --v=6 (s)", "%.3f",
            lambda r: (r["startup"]["ready_s"],)),
        Row("startup.discovery_s", "start to full discovery, --v=6 (s)", "%.3f",
            lambda r: (r["startup"]["discovery_s"],)),
    ]
    for phase in startup_phases.PHASES:
        table.append(Row("startup." + phase, labels[phase], "%.1f",
                         lambda r, phase=phase: (r["startup"][phase],)))
    return table


def memory_rows(results):
    """Idle memory by kind of mapping: one row per category any result has."""
    categories = []
    for result in results:
        for name in result.get("idle_memory", {}).get("categories", {}):
            if name not in categories:
                categories.append(name)
    table = [
        Row("idle_memory.rollup", "idle smaps_rollup: Rss / Pss / Anonymous (MiB)", "%.2f",
            lambda r: tuple(r["idle_memory"]["rollup"][k] for k in ("Rss", "Pss", "Anonymous"))),
        Row("idle_memory.threads", "idle threads", "%.0f",
            lambda r: (r["idle_memory"]["threads"],)),
    ]
    for name in categories:
        table.append(Row("idle_memory." + name, "  %s: Rss / Pss / Anon" % name, "%.2f",
                         lambda r, name=name: tuple(r["idle_memory"]["categories"][name][k]
                                                    for k in ("rss_mib", "pss_mib",
                                                              "anon_mib"))))
    return table


def figures(row, result):
    try:
        values = row.values(result)
    except (KeyError, TypeError):
        return None
    return None if any(v is None for v in values) else values


def cell(row, values):
    return "-" if values is None else " / ".join(row.fmt % v for v in values)


def row_figures(args, results):
    """{series (str): {row key: [figures]}}: what --json stores for --baseline."""
    table = rows(args, results)
    return {str(r["series"]): {row.key: list(figures(row, r)) for row in table
                               if figures(row, r) is not None} for r in results}


def print_table(args, results, load_before):
    print()
    print("metrics-adapter benchmark: %d cores (%s) shared by the adapter, the fakes and wrk "
          "(-t1, %ds per run), median of %d run(s)"
          % (os.cpu_count(), cpu_model(), args.seconds, args.runs))
    print("load average (1, 5, 15 min) before: %s; at the end: %s"
          % (load_before, load_average()))
    table = [Row("series", "series", "%d", lambda r: (r["series"],))] + rows(args, results)
    print_cells([(row.label, [cell(row, figures(row, r)) for r in results]) for row in table])
    for result in results:
        memory = result.get("idle_memory")
        if memory:
            print("idle memory, %d series: %d threads (%d stacks found by stack pointer); "
                  "thread names: %s" % (result["series"], memory["threads"],
                                        memory["stacks_by_pointer"],
                                        ", ".join("%s ×%d" % item
                                                  for item in memory["thread_names"].items())))
    print("(thread stacks, arenas and cached stacks are inferred: see bench/memory_breakdown.py)")


def load_baseline(path):
    """A saved --json run; ValueError naming the file when it is not one."""
    try:
        with open(path) as f:
            saved = json.load(f)
    except (OSError, ValueError) as error:
        raise ValueError("--baseline %s: %s" % (path, error)) from error
    if not isinstance(saved, dict) or not isinstance(saved.get("results"), list):
        raise ValueError("--baseline %s: not a bench/run.py --json file (no \"results\" list)"
                         % path)
    return saved


def print_baseline(args, results, saved, path):
    """Each row of a saved --json run beside today's: old → new and new/old, per series. Runs
    saved before rows were stored are read through today's row definitions."""
    old = saved.get("rows") or row_figures(args, saved["results"])
    print()
    print("against %s (%s; load average then: %s): old → new (new/old)"
          % (path, saved.get("date", "date not recorded"),
             saved.get("load_average", "not recorded")))
    lines = [("series", ["%d" % r["series"] for r in results])]
    for row in rows(args, results):
        lines.append((row.label, [compare(row, old.get(str(r["series"]), {}).get(row.key),
                                          figures(row, r)) for r in results]))
    print_cells(lines)


def print_cells(lines):
    """[(label, [cell per series])] as a Markdown table, columns as wide as their widest cell."""
    width = max(len(label) for label, _ in lines)
    widths = [max(len(cells[i]) for _, cells in lines) for i in range(len(lines[0][1]))]
    for label, cells in lines:
        print("| %-*s | %s |" % (width, label, " | ".join(
            "%*s" % (w, c) for w, c in zip(widths, cells))))


def compare(row, before, new):
    if before is None or new is None:
        return "%s → %s" % (cell(row, before), cell(row, new))
    ratios = " / ".join("%.2f" % (n / o) if o else "-" for o, n in zip(before, new))
    return "%s → %s (%s)" % (cell(row, before), cell(row, new), ratios)


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"
