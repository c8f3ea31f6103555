"""One generated part of the book's benchmark page: the text between its two
marker comments in DIR/benchmarks.md, replaced (the reports of
scripts/profile-nvme.sh and scripts/insns-nvme.sh)."""

import os


def replace(page_dir, begin, end, script, text):
    """Replace what DIR/benchmarks.md has between `begin` and `end` with
    `text` (and a line saying `script` writes it); the page must have both
    markers, in that order. Returns the page's path."""
    path = os.path.join(page_dir, "benchmarks.md")
    with open(path, encoding="utf-8") as f:
        page = f.read()
    at, to = page.find(begin), page.find(end)
    if at < 0 or to < at:
        raise SystemExit(f"{script}: no '{begin}' ... '{end}' in {path}")
    note = f"<!-- Do not edit: {script} rewrites this part. -->\n\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(page[:at] + begin + "\n" + note + text + "\n" + page[to:])
    return path
