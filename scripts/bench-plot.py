#!/usr/bin/env python3
"""Draw ratios as dots with whiskers, one row each, in an SVG written by
hand (Python's standard library only), for the book's benchmark page.

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
    lo = min(vals) / 1.4
    hi = max(vals) * 1.4
    # Round the range out to 1-2-5 steps.
    lo = max(t for t in [m * 10**e for e in range(-4, 4) for m in (1, 2, 5)] if t <= lo)
    hi = min(t for t in [m * 10**e for e in range(-4, 4) for m in (1, 2, 5)] if t >= hi)
    x0, x1 = LEFT, W - RIGHT
    x = lambda v: x0 + (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (x1 - x0)
    h = TOP + ROW * len(rows) + BOTTOM
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" '
         f'font-family="sans-serif" font-size="13">',
         f'<rect width="{W}" height="{h}" fill="white"/>',
         f'<text x="{W / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">'
         f'{escape(spec["title"])}</text>']
    yb = TOP + ROW * len(rows)
    # Stripes behind every other row, then the grid, the reference line,
    # the rows.
    for i in range(0, len(rows), 2):
        s.append(f'<rect x="0" y="{TOP + ROW * i}" width="{W}" height="{ROW}" fill="#f4f6f8"/>')
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
        a, b, m = x(r["min"]), x(r["max"]), x(r["median"])
        s.append(f'<line x1="{a:.1f}" y1="{y:.1f}" x2="{b:.1f}" y2="{y:.1f}" stroke="#2c3e50" stroke-width="2"/>')
        for e in (a, b):
            s.append(f'<line x1="{e:.1f}" y1="{y - 6:.1f}" x2="{e:.1f}" y2="{y + 6:.1f}" '
                     f'stroke="#2c3e50" stroke-width="2"/>')
        s.append(f'<circle cx="{m:.1f}" cy="{y:.1f}" r="5.5" fill="#2980b9" stroke="#1b4f72"/>')
        s.append(f'<text x="{b + 8:.1f}" y="{y + 4:.1f}" fill="#1b4f72">{fmt(r["median"])}</text>')
    s.append(f'<text x="{(x0 + x1) / 2}" y="{yb + 38}" text-anchor="middle" fill="#333">'
             f'{escape(spec["xlabel"])}</text>')
    s.append("</svg>")
    return "\n".join(s) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: bench-plot.py SPEC.json OUT.svg")
    with open(sys.argv[1]) as f:
        svg = plot(json.load(f))
    with open(sys.argv[2], "w") as f:
        f.write(svg)
