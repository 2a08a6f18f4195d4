"""Where a process's resident memory goes (issue 18: "find where the 19 MiB goes"), read from
/proc/<pid>/smaps and grouped by what each mapping is.

The kernel does not say which anonymous mapping is a thread stack or a malloc arena, so part of
the grouping is inferred:
  - thread stacks: the mapping that holds a thread's stack pointer (/proc/<pid>/task/*/syscall,
    readable by the parent that started the process); for a thread whose stack pointer cannot be
    read, an anonymous rw mapping right above a no-access guard mapping (how glibc lays out
    pthread stacks);
  - malloc arenas other than the main one ([heap]): anonymous mappings that start on a 64 MiB
    boundary (glibc reserves each arena as a 64 MiB-aligned region and makes its head
    read-write as it grows);
  - cached stacks: guarded mappings that hold no live thread's stack pointer are stacks of
    exited threads that glibc keeps for reuse (or of a thread that was running when read);
  - other anonymous: the rest (malloc blocks above the mmap threshold, pools mapped directly).
Shared libraries that map less than SMALL_LIBRARY_MIB in all are summed into one row: mapped
size, not resident size, decides, so the rows are the same from run to run (--baseline)."""

import collections
import os
import re

MIB_KIB = 1024.0
ARENA_ALIGNMENT = 64 << 20  # glibc's HEAP_MAX_SIZE on 64-bit: 2 * DEFAULT_MMAP_THRESHOLD_MAX
SMALL_LIBRARY_MIB = 1.0
HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \d+\s*(.*)$")
FIELDS = ("Size", "Rss", "Pss", "Anonymous")

MAIN_BINARY = "main binary"
HEAP = "[heap] (main malloc arena)"
MAIN_STACK = "[stack] (main thread)"
THREAD_STACKS = "thread stacks"
CACHED_STACKS = "stacks without a live thread"
ARENAS = "malloc arenas (64 MiB-aligned anon)"
OTHER_ANON = "other anonymous"
SMALL_LIBRARIES = "other shared libraries"
OTHER_FILES = "other files"
KERNEL = "[vdso] [vvar]"


def read_mappings(pid):
    """[{start, end, perms, path, Size, Rss, Pss, Anonymous (kB)}] in address order."""
    mappings = []
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            header = HEADER.match(line)
            if header:
                mappings.append({"start": int(header.group(1), 16),
                                 "end": int(header.group(2), 16), "perms": header.group(3),
                                 "path": header.group(4).strip()})
                continue
            key, _, rest = line.partition(":")
            if key in FIELDS and mappings:
                mappings[-1][key] = int(rest.split()[0])
    return mappings


def thread_stack_pointers(pid):
    """{tid: stack pointer} of the threads blocked in a system call (a running thread has none);
    empty when /proc/<pid>/task/*/syscall is not readable (ptrace access)."""
    pointers = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/syscall" % (pid, tid)) as f:
                fields = f.read().split()
        except OSError:
            continue
        if len(fields) >= 3 and fields[0] != "running":
            pointers[int(tid)] = int(fields[-2], 16)
    return pointers


def thread_names(pid):
    """{thread name (comm): count}, most frequent first."""
    names = collections.Counter()
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                names[f.read().strip()] += 1
        except OSError:
            continue
    return dict(names.most_common())


def is_anonymous(mapping):
    return not mapping["path"] or mapping["path"].startswith("[anon")


def classify(mapping, previous, binary, stack_pointers):
    """The category of one mapping, and how it was decided for the inferred ones."""
    path = mapping["path"]
    if path == "[heap]":
        return HEAP
    if path == "[stack]":
        return MAIN_STACK
    if path in ("[vdso]", "[vvar]", "[vsyscall]"):
        return KERNEL
    if is_anonymous(mapping):
        if any(mapping["start"] <= sp < mapping["end"] for sp in stack_pointers):
            return THREAD_STACKS
        if mapping["start"] % ARENA_ALIGNMENT == 0:
            return ARENAS
        guarded = (previous is not None and previous["end"] == mapping["start"]
                   and previous["perms"].startswith("---") and is_anonymous(previous))
        if guarded and mapping["perms"].startswith("rw"):
            return CACHED_STACKS
        return OTHER_ANON
    if os.path.realpath(path) == binary:
        return MAIN_BINARY
    name = os.path.basename(path)
    if ".so" in name:
        return name
    return OTHER_FILES


def breakdown(pid, binary):
    """{"categories": {name: {count, rss_mib, pss_mib, anon_mib}} (largest Rss first),
    "rollup": smaps_rollup totals (MiB), "threads", "thread_names", "stacks_by_pointer"}."""
    mappings = read_mappings(pid)
    pointers = thread_stack_pointers(pid)
    binary = os.path.realpath(binary)
    sums = collections.defaultdict(lambda: dict.fromkeys(("count",) + FIELDS, 0))
    previous = None
    for mapping in mappings:
        category = classify(mapping, previous, binary, pointers.values())
        previous = mapping
        if (not mapping.get("Rss") and is_anonymous(mapping)
                and category not in (THREAD_STACKS, CACHED_STACKS)):
            continue  # reserved address space (guard pages, arena tails): nothing resident
        entry = sums[category]
        entry["count"] += 1
        for field in FIELDS:
            entry[field] += mapping.get(field, 0)
    fixed = {MAIN_BINARY, HEAP, MAIN_STACK, THREAD_STACKS, CACHED_STACKS, ARENAS, OTHER_ANON,
             OTHER_FILES, KERNEL}
    for name in [n for n in sums if n not in fixed and sums[n]["Size"] < SMALL_LIBRARY_MIB * 1024]:
        small = sums.pop(name)
        merged = sums[SMALL_LIBRARIES]
        merged["count"] += 1  # libraries, not mappings
        for field in FIELDS:
            merged[field] += small[field]
    categories = {name: {"count": entry["count"], "rss_mib": entry["Rss"] / MIB_KIB,
                         "pss_mib": entry["Pss"] / MIB_KIB,
                         "anon_mib": entry["Anonymous"] / MIB_KIB}
                  for name, entry in sorted(sums.items(), key=lambda item: -item[1]["Rss"])}
    return {"categories": categories, "rollup": rollup(pid), "threads": thread_count(pid),
            "thread_names": thread_names(pid), "stacks_by_pointer": len(pointers)}


def thread_count(pid):
    """The Threads field of /proc/<pid>/status."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def rollup(pid):
    """The kB totals of /proc/<pid>/smaps_rollup, in MiB."""
    totals = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            key, _, rest = line.partition(":")
            fields = rest.split()
            if len(fields) == 2 and fields[1] == "kB":
                totals[key] = int(fields[0]) / MIB_KIB
    return totals
