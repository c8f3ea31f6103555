#!/usr/bin/env python3
"""book-browser-check.py [--static-only] [BOOK_DIR]: check the built book
(default build/book) as a reader's browser shows it.

Static checks, on the HTML files mdbook wrote (html.parser, always):
  - every internal link (<a href>, <link href>, <script src>) names a file
    that exists under BOOK_DIR, and its #fragment an id on that page;
  - every image (<img src>) exists;
  - no <code> element is empty (an {{#include}} that included nothing);
  - the search index (searchindex*.js / searchindex.json) has an API name
    the book explains (MiscDevice): search finds the chapters.
In the browser, if Debian's chromium is installed (and not --static-only):
each page is loaded headless with its scripts run (--dump-dom), and
  - the console must show no error (an uncaught exception, a resource that
    failed to load: the "CONSOLE" lines of chromium's stderr log);
  - the DOM after the scripts ran gets the static checks again (links and
    code blocks the scripts made, e.g. the sidebar);
  - index.html?search=MiscDevice shows at least one search result.
Prints one line per problem (page: what is wrong) and exits 1 if there is
any; prints "browser check skipped: chromium not installed" when it is not.
"""

import argparse
import concurrent.futures
import glob
import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

SEARCH_TERM = "MiscDevice"
CONSOLE = re.compile(r"CONSOLE[(:]")
CONSOLE_ERROR = re.compile(r"Uncaught|Error|error|Failed|failed|Refused|refused|violates|net::ERR")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.refs = []  # (kind, url, line)
        self.code_depth = 0
        self.code_text = []
        self.code_line = 0
        self.empty_code = []  # lines

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("id", "name"):
            if a.get(k) and (k == "id" or tag == "a"):
                self.ids.add(a[k])
        line = self.getpos()[0]
        if tag == "a" and a.get("href"):
            self.refs.append(("link", a["href"], line))
        elif tag == "link" and a.get("href"):
            self.refs.append(("resource", a["href"], line))
        elif tag == "script" and a.get("src"):
            self.refs.append(("resource", a["src"], line))
        elif tag == "img" and a.get("src") is not None:
            self.refs.append(("image", a["src"], line))
        if tag == "code":
            if self.code_depth == 0:
                self.code_text = []
                self.code_line = line
            self.code_depth += 1

    def handle_endtag(self, tag):
        if tag == "code" and self.code_depth:
            self.code_depth -= 1
            if self.code_depth == 0 and not "".join(self.code_text).strip():
                self.empty_code.append(self.code_line)

    def handle_data(self, data):
        if self.code_depth:
            self.code_text.append(data)


def parse(text):
    p = Page()
    p.feed(text)
    p.close()
    return p


class Checker:
    def __init__(self, book):
        self.book = os.path.abspath(book)
        self.problems = []
        self.id_cache = {}

    def report(self, page, msg):
        self.problems.append(f"{os.path.relpath(page, self.book)}: {msg}")

    def ids_of(self, path):
        if path not in self.id_cache:
            try:
                self.id_cache[path] = parse(open(path, encoding="utf-8", errors="replace").read()).ids
            except OSError:
                self.id_cache[path] = set()
        return self.id_cache[path]

    def check_page(self, path, parsed, where=""):
        for line in parsed.empty_code:
            self.report(path, f"{where}line {line}: an empty <code> element (did an {{{{#include}}}} include nothing?)")
        for kind, url, line in parsed.refs:
            u = urllib.parse.urlsplit(url)
            if u.scheme in ("http", "https", "mailto", "javascript", "data") or url.startswith("//"):
                continue
            if u.scheme == "file":
                target = urllib.parse.unquote(u.path)
            elif u.scheme:
                continue
            elif u.path:
                target = os.path.normpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(u.path)))
            else:
                target = path
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            if not target.startswith(self.book + os.sep) and target != self.book:
                self.report(path, f"{where}line {line}: {kind} {url} leads out of the book")
                continue
            if not os.path.exists(target):
                self.report(path, f"{where}line {line}: {kind} {url}: {os.path.relpath(target, self.book)} does not exist")
                continue
            if u.fragment and target.endswith(".html"):
                frag = urllib.parse.unquote(u.fragment)
                ids = parsed.ids if target == path else self.ids_of(target)
                if frag not in ids:
                    self.report(path, f"{where}line {line}: {kind} {url}: no id \"{frag}\" on {os.path.relpath(target, self.book)}")

    def pages(self):
        return sorted(glob.glob(os.path.join(self.book, "**", "*.html"), recursive=True))

    def static(self):
        pages = self.pages()
        if not pages:
            self.problems.append(f"{self.book}: no HTML pages (build the book first: make book)")
            return
        for path in pages:
            self.check_page(path, parse(open(path, encoding="utf-8", errors="replace").read()))
        index = glob.glob(os.path.join(self.book, "searchindex*.js")) + glob.glob(os.path.join(self.book, "searchindex*.json"))
        if not index:
            self.problems.append("search: no searchindex*.js or searchindex*.json (is search off in book.toml?)")
        elif not any(SEARCH_TERM in open(f, encoding="utf-8", errors="replace").read() for f in index):
            self.problems.append(f"search: the search index does not know {SEARCH_TERM}")

    # ---- the browser ----------------------------------------------------
    @staticmethod
    def chromium():
        for name in ("chromium", "chromium-browser"):
            if shutil.which(name):
                return shutil.which(name)
        return None

    def load(self, browser, url):
        """(DOM, stderr) of url after its scripts ran."""
        with tempfile.TemporaryDirectory(prefix="rkw-chromium-") as profile:
            r = subprocess.run(
                [browser, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
                 f"--user-data-dir={profile}", "--virtual-time-budget=3000", "--dump-dom", url],
                capture_output=True, text=True, timeout=120)
        return r.stdout, r.stderr

    def browser(self, browser):
        pages = [p for p in self.pages()]

        def one(path):
            return path, self.load(browser, "file://" + urllib.parse.quote(path))
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            for path, (dom, err) in pool.map(one, pages):
                for l in err.splitlines():
                    if CONSOLE.search(l) and CONSOLE_ERROR.search(l):
                        self.report(path, "console: " + l.split("] ", 1)[-1][:300])
                if not dom.strip():
                    self.report(path, "the browser gave no DOM")
                    continue
                self.check_page(path, parse(dom), where="in the browser, ")
        index = os.path.join(self.book, "index.html")
        dom, _ = self.load(browser, "file://" + urllib.parse.quote(index) + "?search=" + SEARCH_TERM)
        m = re.search(r"(\d+) search results? for", dom)
        if not m or int(m.group(1)) == 0:
            self.problems.append(f"search: index.html?search={SEARCH_TERM} shows no result in the browser")
        return len(pages)


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--static-only", action="store_true")
    ap.add_argument("book", nargs="?", default=os.path.join(repo, "build", "book"))
    args = ap.parse_args()
    c = Checker(args.book)
    c.static()
    browser = None if args.static_only else c.chromium()
    n = 0
    if browser:
        n = c.browser(browser)
    elif not args.static_only:
        print("browser check skipped: chromium not installed (the static checks ran)")
    for p in c.problems:
        print(p)
    if c.problems:
        print(f"book-browser-check: {len(c.problems)} problem(s)", file=sys.stderr)
        return 1
    what = f"{n} pages loaded in chromium, " if browser else ""
    print(f"book-browser-check: {what}links, images, code blocks and search are fine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
