"""Looks at HTML pages the way a person would, for integration tests of the observer page:
check_html() parses a page and refuses unbalanced markup, render_png() screenshots it with
headless Chromium, and png_stats() decodes the screenshot (zlib + struct, no PIL) so a test can
assert that something was drawn, and in which colours. Python standard library only."""

import collections
import html.parser
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import zlib

CHROMIUM = "/usr/bin/chromium"

# Elements that never have an end tag in HTML.
_VOID_ELEMENTS = frozenset(
    "area base br col embed hr img input link meta source track wbr".split())


class MarkupError(ValueError):
    """The page is not balanced, well-formed markup (or lacks what check_html requires)."""


class _BalanceChecker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open = []  # (tag, line, column)
        self.counts = collections.Counter()

    def handle_starttag(self, tag, attrs):
        self.counts[tag] += 1
        if tag not in _VOID_ELEMENTS:
            self.open.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):  # <line ... /> in SVG
        self.counts[tag] += 1

    def handle_endtag(self, tag):
        if tag in _VOID_ELEMENTS:
            raise MarkupError("end tag </%s> of a void element at %s" % (tag, self.getpos()))
        if not self.open:
            raise MarkupError("</%s> at %s closes nothing" % (tag, self.getpos()))
        expected, where = self.open.pop()
        if expected != tag:
            raise MarkupError("</%s> at %s, but <%s> opened at %s is still open"
                              % (tag, self.getpos(), expected, where))


def check_html(text, require_svg=True):
    """Parses `text` with html.parser; raises MarkupError when an element is left open, closed
    out of order or closed twice, when the text does not start with <!DOCTYPE html>, or (with
    require_svg) when there is no <svg>. Returns a Counter of start tags by name."""
    if not text.lstrip().lower().startswith("<!doctype html>"):
        raise MarkupError("no <!DOCTYPE html> at the start")
    checker = _BalanceChecker()
    checker.feed(text)
    checker.close()
    if checker.open:
        tag, where = checker.open[-1]
        raise MarkupError("<%s> opened at %s is never closed" % (tag, where))
    if require_svg and checker.counts["svg"] == 0:
        raise MarkupError("no <svg> in the page")
    return checker.counts


def render_png(html_path, png_path, width=1200, height=1600, timeout=90, browser=CHROMIUM):
    """Screenshots the page at `html_path` into `png_path` (width x height CSS pixels) with
    headless Chromium, with a fresh profile and no network of its own. Raises RuntimeError when
    Chromium fails, times out (its whole process group is killed) or writes no PNG."""
    if not os.path.exists(browser):
        raise RuntimeError("no browser at %s (Debian package chromium)" % browser)
    url = "file://" + os.path.abspath(html_path)
    png_path = os.path.abspath(png_path)
    if os.path.exists(png_path):
        os.remove(png_path)
    profile = tempfile.mkdtemp(prefix="observer-chromium-")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--hide-scrollbars",
               "--user-data-dir=" + profile, "--screenshot=" + png_path,
               "--window-size=%d,%d" % (width, height), url]
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
        try:
            _, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise RuntimeError("chromium did not finish within %ss" % timeout)
        finally:
            # Helpers Chromium may leave behind in its session.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if process.returncode != 0 or not os.path.exists(png_path) \
                or os.path.getsize(png_path) == 0:
            raise RuntimeError("chromium exited %s without a screenshot: %s"
                               % (process.returncode, stderr.decode(errors="replace")[-2000:]))
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return png_path


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(data, width, height, bpp):
    """The raw scanlines of a non-interlaced 8-bit image, PNG filters 0-4 undone."""
    stride = width * bpp
    rows = []
    previous = bytearray(stride)
    offset = 0
    for _ in range(height):
        kind = data[offset]
        row = bytearray(data[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        if len(row) != stride:
            raise ValueError("PNG image data is cut short")
        if kind == 0:
            pass
        elif kind == 1:  # Sub
            for i in range(bpp, stride):
                row[i] = (row[i] + row[i - bpp]) & 0xFF
        elif kind == 2:  # Up
            for i in range(stride):
                row[i] = (row[i] + previous[i]) & 0xFF
        elif kind == 3:  # Average
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                if i >= bpp:
                    row[i] = (row[i] + _paeth(row[i - bpp], previous[i], previous[i - bpp])) & 0xFF
                else:
                    row[i] = (row[i] + previous[i]) & 0xFF
        else:
            raise ValueError("unknown PNG filter type %d" % kind)
        rows.append(row)
        previous = row
    return rows


def read_png(png_path):
    """(width, height, rows): rows of RGB bytes (alpha composited over white) of an 8-bit,
    non-interlaced PNG of colour type 2 (RGB) or 6 (RGBA)."""
    with open(png_path, "rb") as f:
        blob = f.read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s is not a PNG" % png_path)
    offset = 8
    header = None
    idat = []
    while offset + 8 <= len(blob):
        length, kind = struct.unpack(">I4s", blob[offset:offset + 8])
        body = blob[offset + 8:offset + 8 + length]
        offset += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise ValueError("unsupported PNG: depth %d, colour type %d, interlace %d"
                         % (depth, colour_type, interlace))
    bpp = 3 if colour_type == 2 else 4
    rows = _unfilter(zlib.decompress(b"".join(idat)), width, height, bpp)
    if bpp == 4:
        rgb_rows = []
        for row in rows:
            out = bytearray(width * 3)
            for x in range(width):
                r, g, b, a = row[4 * x:4 * x + 4]
                if a != 255:
                    r, g, b = ((c * a + 255 * (255 - a)) // 255 for c in (r, g, b))
                out[3 * x:3 * x + 3] = bytes((r, g, b))
            rgb_rows.append(out)
        rows = rgb_rows
    return width, height, rows


def png_stats(png_path):
    """What a screenshot shows, in numbers: {"width", "height", "colours" (distinct RGB values),
    "non_white_share" (0..1), "counts" (Counter of RGB tuples)}."""
    width, height, rows = read_png(png_path)
    counts = collections.Counter()
    for row in rows:
        counts.update(zip(row[0::3], row[1::3], row[2::3]))
    total = width * height
    white = counts.get((255, 255, 255), 0)
    return {"width": width, "height": height, "colours": len(counts),
            "non_white_share": (total - white) / total if total else 0.0, "counts": counts}


def share_near(stats, rgb, tolerance=48):
    """Share of the pixels in `stats` within `tolerance` (per channel) of the colour `rgb`, e.g.
    to check that the blue and the green lines were both drawn."""
    total = stats["width"] * stats["height"]
    near = sum(n for colour, n in stats["counts"].items()
               if all(abs(c - t) <= tolerance for c, t in zip(colour, rgb)))
    return near / total if total else 0.0


def hex_rgb(text):
    """"#1f6fd1" -> (31, 111, 209)."""
    text = text.lstrip("#")
    return tuple(int(text[i:i + 2], 16) for i in (0, 2, 4))
