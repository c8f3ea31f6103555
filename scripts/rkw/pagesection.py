"""One generated part of the book's benchmark page (book/src/benchmarks.md):
the text between its two marker comments, replaced (the reports of
scripts/profile-nvme.sh, scripts/insns-nvme.sh and
scripts/bench-9p-reactor.sh)."""


def replace(path, begin, end, script, text):
    """Replace what the page at `path` has between `begin` and `end` with
    `text` (and a line saying `script` writes it); the page must have both
    markers, in that order."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    at, to = page.find(begin), page.find(end)
    if at < 0 or to < at:
        raise SystemExit(f"{script}: no '{begin}' ... '{end}' in {path}")
    note = f"<!-- Do not edit: {script} rewrites this part. -->\n\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(page[:at] + begin + "\n" + note + text + "\n" + page[to:])
