"""One generated part of the book's benchmark page (book/src/benchmarks.md):
the text between its two marker comments, replaced (the reports of
scripts/bench-nvme.sh, scripts/profile-nvme.sh, scripts/insns-nvme.sh,
scripts/bench-9p-servers.sh and scripts/bench-9p-reactor.sh)."""


import os
import re


def replace(path, begin, end, script, text, append=False, new_page=None):
    """Replace what the page at `path` has between `begin` and `end` with
    `text` (and a line saying `script` writes it). The page must have both
    markers, in that order; with `append`, a page without `begin` (or no
    page) gets the part at its end, and a `begin` with no `end` after it
    is replaced up to the next heading; with `new_page`, a page without
    both (or no page) is first replaced by new_page(its text, "" if none),
    which has them."""
    page = ""
    if os.path.exists(path) or not (append or new_page):
        with open(path, encoding="utf-8") as f:
            page = f.read()
    at = page.find(begin)
    to = page.find(end, at) if at >= 0 else -1
    if new_page and (at < 0 or to < 0):
        page = new_page(page)
        at = page.find(begin)
        to = page.find(end, at)
    note = f"<!-- Do not edit: {script} rewrites this part. -->\n\n"
    part = begin + "\n" + note + text + "\n"
    if at >= 0 and to >= 0:
        new = page[:at] + part + page[to:]
    elif not append:
        raise SystemExit(f"{script}: no '{begin}' ... '{end}' in {path}")
    elif at < 0:
        new = (page.rstrip("\n") + "\n\n" if page else "") + part + end + "\n"
    else:
        heading = re.search(r"^#", page[at:], re.M)
        tail = page[at + heading.start():] if heading else ""
        new = page[:at] + part + end + "\n" + ("\n" + tail if tail else "")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(new)
    os.replace(path + ".tmp", path)
