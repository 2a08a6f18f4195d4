#!/usr/bin/env python3
"""Which parts of a running process's binary are resident, by ELF section and by the namespace
of the symbols on the resident pages (issue 47: "find where the idle memory went").

The kernel maps the 64 KiB around each page of a file a process touches (fault-around), so a
binary's resident size follows its size more than what runs: this shows where it is spent.
Reads /proc/PID/pagemap (the present bit, readable by the process's owner), readelf -S and
nm -S of the binary the process runs.

  bench/resident_code.py PID [--top N]
"""

import argparse
import collections
import os
import re
import struct
import subprocess

PAGE = 4096
SECTION = re.compile(r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)")
LEADING_WORDS = re.compile(r"^(non-virtual thunk to |virtual thunk to |vtable for |typeinfo for "
                           r"|typeinfo name for |guard variable for |void |bool |int )+")


def resident_pages(pid, binary):
    """Page numbers (from the file's first mapping) of the binary's resident pages."""
    mappings = []
    with open("/proc/%d/maps" % pid) as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and os.path.realpath(fields[5]) == binary:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                mappings.append((start, end))
    base = mappings[0][0]
    present = set()
    with open("/proc/%d/pagemap" % pid, "rb") as pagemap:
        for start, end in mappings:
            pagemap.seek(start // PAGE * 8)
            entries = pagemap.read((end - start) // PAGE * 8)
            for i in range((end - start) // PAGE):
                if struct.unpack_from("<Q", entries, i * 8)[0] >> 63:
                    present.add((start - base) // PAGE + i)
    return present


def resident_share(address, size, present):
    """Bytes of [address, address + size) on resident pages."""
    first, last = address // PAGE, (address + size - 1) // PAGE
    pages = last - first + 1
    return size * sum(1 for page in range(first, last + 1) if page in present) / pages


def owner(name):
    """The first two levels of a demangled symbol's qualified name."""
    name = re.split(r"[<(]", LEADING_WORDS.sub("", name))[0]
    return "::".join(name.split("::")[:2])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pid", type=int)
    parser.add_argument("--top", type=int, default=25, help="namespaces to list")
    args = parser.parse_args()
    binary = os.path.realpath("/proc/%d/exe" % args.pid)
    present = resident_pages(args.pid, binary)
    print("%s: %d KiB resident" % (binary, len(present) * PAGE // 1024))

    sections = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True,
                              check=True).stdout
    print("\n%-20s %10s %10s" % ("section", "size KiB", "resident"))
    for line in sections.splitlines():
        match = SECTION.match(line)
        if match and int(match.group(2), 16) and int(match.group(3), 16) >= PAGE:
            address, size = int(match.group(2), 16), int(match.group(3), 16)
            print("%-20s %10.0f %10.0f" % (match.group(1), size / 1024,
                                           resident_share(address, size, present) / 1024))

    symbols = subprocess.run(["nm", "-C", "-S", "--defined-only", binary], capture_output=True,
                             text=True, check=True).stdout
    sizes, resident = collections.Counter(), collections.Counter()
    for line in symbols.splitlines():
        fields = line.split(None, 3)
        if len(fields) == 4 and fields[2] in "tTwW" and re.fullmatch("[0-9a-f]+", fields[1]):
            address, size, name = int(fields[0], 16), int(fields[1], 16), owner(fields[3])
            sizes[name] += size
            resident[name] += resident_share(address, size, present)
    print("\n%-50s %10s %10s" % ("code of", "size KiB", "resident"))
    for name, size in sizes.most_common(args.top):
        print("%-50s %10.0f %10.0f" % (name[:50], size / 1024, resident[name] / 1024))


if __name__ == "__main__":
    main()
