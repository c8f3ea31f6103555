"""SVG plots of ratios for the book's benchmark pages, written by hand
(Python's standard library only): a logarithmic axis in 1-2-5 steps, rows
of dots with whiskers. The pieces (round_out, LogAxis, svg_open, stripes,
whisker) draw both plots: bench-plot's below and bench-9p-servers.py's.

    bench-plot.py SPEC.json OUT.svg

SPEC: {"title": str, "xlabel": str, "ref": 1.0, "reflabel": str, "rows": [{"label": str,
"median": float, "min": float, "max": float}, ...]}. The x axis is
logarithmic (a ratio of 0.5 is as far from 1 as 2 is), with a dashed line
at "ref" (labelled "reflabel"); each row is a dot at its median and a whisker from its min to its
max. The background is white, so the plot reads in every mdBook theme.
"""
import json
import math
import sys
from xml.sax.saxutils import escape

W, LEFT, RIGHT, TOP, ROW, BOTTOM = 780, 270, 60, 52, 34, 58
# 1-2-5 steps, 0.0001 to 50000: the ends of an axis.
STEPS = [m * 10**e for e in range(-4, 5) for m in (1, 2, 5)]


def round_out(lo, hi):
    """The range lo..hi rounded out to 1-2-5 steps."""
    return max(t for t in STEPS if t <= lo), min(t for t in STEPS if t >= hi)


class LogAxis:
    """Values lo..hi on a logarithmic axis from x0 to x1 (pixels)."""

    def __init__(self, lo, hi, x0, x1):
        self.lo, self.hi, self.x0, self.x1 = lo, hi, x0, x1

    def __call__(self, v):
        return self.x0 + (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo)) * (self.x1 - self.x0)


def svg_open(w, h, title, title_y):
    """The <svg> element's start: white background (it reads in every
    mdBook theme), a bold title."""
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'font-family="sans-serif" font-size="13">',
            f'<rect width="{w}" height="{h}" fill="white"/>',
            f'<text x="{w / 2}" y="{title_y}" text-anchor="middle" font-size="15" font-weight="bold">'
            f'{escape(title)}</text>']


def stripes(w, top, row, rows):
    """A light stripe behind every other row."""
    return [f'<rect x="0" y="{top + row * i}" width="{w}" height="{row}" fill="#f4f6f8"/>' for i in range(0, rows, 2)]


def whisker(x, lo, hi, y, colour, half, yspec=""):
    """A whisker from lo to hi (axis x) at height y, with end ticks of
    half-height half; yspec: the format of the heights."""
    def at(v):
        return format(v, yspec)

    out = [f'<line x1="{x(lo):.1f}" y1="{at(y)}" x2="{x(hi):.1f}" y2="{at(y)}" stroke="{colour}" stroke-width="2"/>']
    for e in (lo, hi):
        out.append(f'<line x1="{x(e):.1f}" y1="{at(y - half)}" x2="{x(e):.1f}" y2="{at(y + half)}" '
                   f'stroke="{colour}" stroke-width="2"/>')
    return out


def ticks(lo, hi):
    """1-2-5 steps between lo and hi."""
    out = []
    e = math.floor(math.log10(lo))
    while 10**e <= hi * 10:
        for m in (1, 2, 5):
            t = m * 10**e
            if lo <= t * 1.0001 and t <= hi * 1.0001:
                out.append(t)
        e += 1
    return out


def fmt(v):
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def plot(spec):
    rows = spec["rows"]
    ref = spec.get("ref", 1.0)
    vals = [v for r in rows for v in (r["min"], r["max"], r["median"])] + [ref]
    lo, hi = round_out(min(vals) / 1.4, max(vals) * 1.4)
    x0, x1 = LEFT, W - RIGHT
    x = LogAxis(lo, hi, x0, x1)
    h = TOP + ROW * len(rows) + BOTTOM
    s = svg_open(W, h, spec["title"], 24)
    yb = TOP + ROW * len(rows)
    # Stripes behind every other row, then the grid, the reference line,
    # the rows.
    s += stripes(W, TOP, ROW, len(rows))
    for t in ticks(lo, hi):
        s.append(f'<line x1="{x(t):.1f}" y1="{TOP - 6}" x2="{x(t):.1f}" y2="{yb}" stroke="#ccc"/>')
        s.append(f'<text x="{x(t):.1f}" y="{yb + 16}" text-anchor="middle" fill="#333">{t:g}</text>')
    s.append(f'<line x1="{x(ref):.1f}" y1="{TOP - 10}" x2="{x(ref):.1f}" y2="{yb}" '
             f'stroke="#c0392b" stroke-width="1.5" stroke-dasharray="5,3"/>')
    s.append(f'<text x="{x(ref) + 4:.1f}" y="{TOP - 12}" fill="#c0392b" font-size="12">{escape(spec.get("reflabel", ""))}</text>')
    s.append(f'<line x1="{x0}" y1="{yb}" x2="{x1}" y2="{yb}" stroke="#333"/>')
    for i, r in enumerate(rows):
        y = TOP + ROW * i + ROW / 2
        s.append(f'<text x="{x0 - 10}" y="{y + 4:.1f}" text-anchor="end">{escape(r["label"])}</text>')
        b, m = x(r["max"]), x(r["median"])
        s += whisker(x, r["min"], r["max"], y, "#2c3e50", 6, ".1f")
        s.append(f'<circle cx="{m:.1f}" cy="{y:.1f}" r="5.5" fill="#2980b9" stroke="#1b4f72"/>')
        s.append(f'<text x="{b + 8:.1f}" y="{y + 4:.1f}" fill="#1b4f72">{fmt(r["median"])}</text>')
    s.append(f'<text x="{(x0 + x1) / 2}" y="{yb + 38}" text-anchor="middle" fill="#333">'
             f'{escape(spec["xlabel"])}</text>')
    s.append("</svg>")
    return "\n".join(s) + "\n"


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: bench-plot.py SPEC.json OUT.svg")
    with open(argv[0]) as f:
        svg = plot(json.load(f))
    with open(argv[1], "w") as f:
        f.write(svg)
    return 0
