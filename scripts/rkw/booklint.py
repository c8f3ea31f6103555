"""book-lint.py: the book and the code's comments name only what exists.

Scans book/src/*.md, README.md, and the comments of steps/**/*.rs and
solutions/**/*.rs, and reports as `file:line: what is wrong`:

  path     a repository path in an inline code span, a link, a code block or
           a comment (a name starting with book/ steps/ solutions/ tests/
           scripts/ kernel/ .ci/, or ../../ followed by one of them) that does
           not exist. Placeholders are globs: NN-name, NN-*, <module>, `*`,
           a trailing `...`. A path under build/ or the cache
           (~/.cache/rust-kernel-workshop/, <cache>/, $CACHE/, logs/NAME) is
           made by the scripts: its leading components must match a path
           that the scripts, the Makefile, Kbuild or book.toml write (their
           $VARIABLES are globs). kernel/a/b.c with no kernel/a/ here is the
           Linux tree's, not ours, and not checked.
  make     `make TARGET` (an inline code span starting with `make`, a
           command in a code block, a comment) whose TARGET the Makefile does
           not have. The Linux tree's own targets (KERNEL_MAKE_TARGETS) are
           allowed where the book explains the kernel build.
  include  {{#include FILE[:ANCHOR|:LINES]}}: FILE is missing, ANCHOR has no
           `ANCHOR: name` line in it (mdbook then includes nothing, silently),
           or the region or line range is empty.
  link     a link to a book page that does not exist or that SUMMARY.md
           does not list (mdbook makes no page of it, and says nothing), or
           to a #fragment that is none of that page's headings.
  typed    a ```console or ```text block of the book that shows a line of
           the workshop's own output (starting with `==> `, `ok `, `FAIL `,
           `✓` or `✗`) typed into the page: such output must be captured by
           scripts/transcripts.sh and included from book/src/transcripts/.
  solved   a captured `make check` of a finished stage
           (transcripts/check-NN-solutions.txt) that does not end in
           "N passed, 0 failed": the book would show a solution failing.
  insmod   a comment of steps/ or solutions/ that tells you to
           `insmod NAME.ko`: the VM's shell starts in the repository, where
           the module is build/modules-fast/TREE/NN-name/NAME.ko.

Exit status 0 if nothing is wrong, 1 otherwise. --root DIR lints another
checkout (the tests use it).
"""

import argparse
import fnmatch
import glob
import os
import re
import sys

from rkw import REPO, rust

# The Makefile targets the book may already name but the Makefile does not
# have yet (they are on their way). Delete each one once the Makefile has it:
# the lint then checks it like any other.
PENDING_MAKE_TARGETS: set = set()

# The Linux tree's own make targets, named where the book explains how the
# kernel is configured and built (setup.md), not commands of this Makefile.
KERNEL_MAKE_TARGETS = {"rustavailable", "tinyconfig", "bzImage", "modules"}

# Pages whose shown outputs are still typed in, not captured: the `typed`
# rule skips them. Delete a page from here once its outputs come from
# book/src/transcripts/ (scripts/transcripts.sh).
TYPED_OUTPUT_PENDING = set()

TOP = r"(?:book|steps|solutions|tests|scripts|kernel|build|\.ci)"
# A path: starts at a word boundary that is not part of a longer path
# (not after / . ~ $ or a letter: /sys/kernel/debug is the guest's).
PATH_CHARS = r"[^\s`'\"(),;:<>\[\]{}|&]"
REPO_PATH = re.compile(
    r"(?<![\w/.$~@-])(?:\$PWD/|\$REPO/|\$\{REPO\}/)?((?:\.\./)*)(" + TOP +
    r"(?:/(?:<[^>\s]*>|" + PATH_CHARS + r")*)?)")
CACHE_PATH = re.compile(
    r"(?:(?<![\w/.$-])(?:~|\$HOME|/home/[\w.-]+|/root)/\.cache/rust-kernel-workshop"
    r"|<cache>|\$CACHE|\$\{CACHE\})((?:/(?:<[^>\s]*>|" + PATH_CHARS + r")*)?)")
CACHE_LOG = re.compile(r"(?<![\w/.$~-])(logs/" + PATH_CHARS + r"+)")
MAKE_CMD = re.compile(r"(?:^|[;&|(]\s*|\$\s+|#\s+)make((?:\s+\S+)*)")
INCLUDE = re.compile(r"(?<!\\)\{\{#(include|rustdoc_include|playground)\s+([^}\s]+)\s*\}\}")
LINK = re.compile(r"(!?)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
TYPED = re.compile(r"^(?:==> |ok |FAIL |\s*✓|\s*✗)")
BARE_INSMOD = re.compile(r"\binsmod\s+([\w.-]+\.ko)\b")
ANCHOR_START = re.compile(r"ANCHOR:\s*([\w_-]+)")
ANCHOR_END = re.compile(r"ANCHOR_END:\s*([\w_-]+)")


class Lint:
    def __init__(self, root):
        self.root = root
        self.problems = []
        self.targets = self.make_targets()
        self.build_patterns, self.cache_patterns = self.generated_patterns()
        self.heading_ids = {}

    def report(self, path, line, msg):
        self.problems.append((os.path.relpath(path, self.root), line, msg))

    # ---- what exists --------------------------------------------------------
    def make_targets(self):
        targets = set()
        try:
            text = open(os.path.join(self.root, "Makefile"), encoding="utf-8").read()
        except OSError:
            return targets
        for line in text.splitlines():
            if line.startswith(("\t", "#", " ")) or not line.strip():
                continue
            m = re.match(r"^([^:=#]+?)\s*::?(?!=)(.*)$", line)
            if not m or "=" in m.group(1):
                continue
            names = m.group(1).split()
            if names == [".PHONY"]:
                targets.update(m.group(2).split())
            else:
                targets.update(n for n in names if not n.startswith("."))
        return targets

    def code_files(self):
        pats = ["scripts/*.sh", "scripts/*.py", "tests/*.sh", "tests/*/*.sh",
                "tests/*/*.py", "Makefile", "Kbuild", "book/book.toml", ".ci/*"]
        for p in pats:
            for f in sorted(glob.glob(os.path.join(self.root, p))):
                if os.path.isfile(f) and not os.path.basename(f).startswith("book-lint"):
                    yield f

    def generated_patterns(self):
        """Globs (lists of components) of the paths under build/ and under the
        cache that the code writes, from its non-comment lines."""
        build, cache = [], []
        aliases = {"CACHE": ""}
        texts = []
        for f in self.code_files():
            try:
                lines = open(f, encoding="utf-8", errors="replace").read().splitlines()
            except OSError:
                continue
            texts.append([l for l in lines if not l.lstrip().startswith("#")])
        # Variables that name a folder of the cache: TOOLS="$CACHE/tools", ...
        assign = re.compile(r"^\s*(?:local\s+|export\s+|readonly\s+)?([A-Z_][A-Z0-9_]*)=[\"']?\$\{?([A-Z_][A-Z0-9_]*)\}?(/[^\"'\s;)]*)?")
        for _ in range(3):
            for lines in texts:
                for l in lines:
                    m = assign.match(l)
                    if m and m.group(2) in aliases and m.group(1) not in aliases:
                        aliases[m.group(1)] = (aliases[m.group(2)] + (m.group(3) or "")).lstrip("/")
        use = re.compile(r"\$\{?(" + "|".join(sorted(aliases, key=len, reverse=True)) + r")\}?\b(/[^\s\"'`;|&)]*)?")
        bpat = re.compile(r"(?:^|[\s\"'=(]|\$\{?\w+\}?/|\.\./)build/([^\s\"'`;|&)]*)")
        for lines in texts:
            for l in lines:
                if re.search(r"\brm\s+-", l):
                    continue  # what the code removes is not what it makes
                for m in bpat.finditer(l):
                    build.append(self.glob_components(m.group(1)))
                for m in use.finditer(l):
                    p = (aliases[m.group(1)] + (m.group(2) or "")).strip("/")
                    if p:
                        cache.append(self.glob_components(p))
        return build, cache

    @staticmethod
    def glob_components(p):
        # $(cmd), ${VAR...} (nested too) and $VAR stand for any text.
        prev = None
        while prev != p:
            prev = p
            p = re.sub(r"\$\{[^{}]*\}", "*", p)
        p = re.sub(r"\$\([^()]*\)", "*", p)
        p = re.sub(r"\$\w+", "*", p)
        p = p.split("}")[0]
        return [c for c in p.split("/") if c]

    @staticmethod
    def doc_glob(p):
        """A path of the book as a glob: its placeholders become wildcards."""
        p = re.sub(r"<[^>]*>", "*", p)
        p = re.sub(r"\bNN-name\b", "[0-9][0-9]-*", p)
        p = re.sub(r"\bNN\b", "[0-9][0-9]", p)
        p = re.sub(r"\.\.\.+$", "", p)
        p = p.replace("…", "*")
        return p

    def generated_ok(self, comps, patterns):
        """comps (a doc path's components below build/ or the cache) match
        the leading components of one of the patterns."""
        if not comps:
            return bool(patterns)
        for pat in patterns:
            ok = True
            for i, c in enumerate(comps):
                if i >= len(pat):
                    ok = False  # deeper than anything this code names
                    break
                q = pat[i]
                if q == "*":
                    break  # a whole component from a variable: anything below
                if c in ("...", "…") or c.endswith("..."):
                    break
                if not (fnmatch.fnmatchcase(c, q) or fnmatch.fnmatchcase(q, c)):
                    ok = False
                    break
            if ok:
                return True
        return False

    # ---- the checks ---------------------------------------------------------
    def check_paths(self, path, lineno, text):
        for m in REPO_PATH.finditer(text):
            ups, p = m.group(1), m.group(2)
            p = p.rstrip(".,:;!?")
            if text[m.end():m.end() + 3] == "...":
                p += "/..."
            if not p:
                continue
            self.check_repo_path(path, lineno, p, ups)
        for m in CACHE_PATH.finditer(text):
            rest = m.group(1).rstrip(".,:;!?")
            comps = [c for c in self.doc_glob(rest).split("/") if c]
            if not self.generated_ok(comps, self.cache_patterns):
                self.report(path, lineno, f"`{m.group(0)}`: no script makes this path in the cache")
        for m in CACHE_LOG.finditer(text):
            rest = m.group(1).rstrip(".,:;!?")
            comps = [c for c in self.doc_glob(rest).split("/") if c]
            if not self.generated_ok(comps, self.cache_patterns):
                self.report(path, lineno, f"`{rest}`: no script writes this log in the cache ($CACHE/logs/)")

    def check_repo_path(self, path, lineno, p, ups):
        comps = p.split("/")
        if ups and len(ups) // 3 != 2:
            return  # ../ that does not lead from book/src or a stage to the root
        if comps[0] == "build":
            rest = [c for c in self.doc_glob("/".join(comps[1:])).split("/") if c]
            if not self.generated_ok(rest, self.build_patterns):
                self.report(path, lineno, f"`{p}`: no script makes this path under build/")
            return
        if comps[0] == "kernel" and len([c for c in comps if c]) > 2 \
                and not os.path.isdir(os.path.join(self.root, "kernel", comps[1])):
            return  # the Linux tree's kernel/irq/..., not ours
        g = self.doc_glob(p)
        if g.endswith("/..."):
            g = g[:-4]
        full = os.path.join(self.root, g.rstrip("/"))
        if any(ch in g for ch in "*?["):
            if not glob.glob(full):
                self.report(path, lineno, f"`{p}`: nothing in the repository matches")
        elif not os.path.exists(full):
            self.report(path, lineno, f"`{p}`: no such file or folder in the repository")

    def check_make(self, path, lineno, words):
        """words: what follows `make` in a command."""
        skip_next = False
        for w in words.split():
            if skip_next:
                skip_next = False
                continue
            if w in ("-C", "-f", "-j", "-o", "-I"):
                skip_next = True
                continue
            if w.startswith("-") or "=" in w:
                continue
            w = w.strip("`.,;:)'\"")
            if not re.fullmatch(r"[a-z][a-z0-9_-]*", w):
                return
            if w in self.targets or w in PENDING_MAKE_TARGETS or w in KERNEL_MAKE_TARGETS:
                return
            self.report(path, lineno, f"`make {w}`: the Makefile has no target {w}")
            return

    def check_inline_code(self, path, lineno, code):
        self.check_paths(path, lineno, code)
        m = re.match(r"\s*make(\s.*)?$", code, re.S)
        if m:
            self.check_make(path, lineno, m.group(1) or "")

    # ---- markdown -----------------------------------------------------------
    def ids_of(self, md):
        if md in self.heading_ids:
            return self.heading_ids[md]
        ids, seen = set(), {}
        lines = self.expanded_lines(md)
        fence = None
        for l in lines:
            f = FENCE.match(l)
            if f:
                if fence is None:
                    fence = f.group(2)
                    continue
                if f.group(2).startswith(fence) and not f.group(3):
                    fence = None
                continue
            if fence:
                continue
            h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", l)
            if not h:
                continue
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h.group(1))
            text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
            hid = "".join(ch.lower() if (ch.isalnum() or ch in "_-") else "-" if ch.isspace() else ""
                          for ch in text)
            n = seen.get(hid, 0)
            seen[hid] = n + 1
            ids.add(hid if n == 0 else f"{hid}-{n}")
        self.heading_ids[md] = ids
        return ids

    def summary(self):
        """The pages SUMMARY.md lists."""
        if not hasattr(self, "_summary"):
            try:
                text = open(os.path.join(self.root, "book", "src", "SUMMARY.md"), encoding="utf-8").read()
            except OSError:
                text = ""
            self._summary = {os.path.normpath(m.group(2)) for m in LINK.finditer(text)} | {"SUMMARY.md"}
        return self._summary

    def expanded_lines(self, md, depth=0):
        """The lines of a page with the Markdown files it includes inlined
        (their headings are the page's)."""
        try:
            lines = open(md, encoding="utf-8").read().splitlines()
        except OSError:
            return []
        out = []
        for l in lines:
            m = INCLUDE.search(l)
            if m and depth < 5 and m.group(2).split(":")[0].endswith(".md"):
                inc = os.path.normpath(os.path.join(os.path.dirname(md), m.group(2).split(":")[0]))
                out.extend(self.expanded_lines(inc, depth + 1))
            else:
                out.append(l)
        return out

    def check_link(self, path, lineno, target, image):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
            return  # http:, mailto:, ...
        file_part, _, frag = target.partition("#")
        # A page's links are relative to it; those of a Markdown file that
        # pages include (book/src/generated/) to the page, in book/src.
        book = os.path.join(self.root, "book", "src")
        base = os.path.dirname(path)
        if os.path.commonpath([base, book]) == book and base != book:
            base = book
        dest = os.path.normpath(os.path.join(base, file_part)) if file_part else path
        if not os.path.exists(dest):
            self.report(path, lineno, f"link `{target}`: {os.path.relpath(dest, self.root)} does not exist")
            return
        if dest.endswith(".md") and os.path.dirname(dest) == book and file_part \
                and os.path.basename(dest) not in self.summary():
            self.report(path, lineno, f"link `{target}`: {os.path.basename(dest)} is not in SUMMARY.md, so mdbook does not make a page of it")
        if frag and dest.endswith(".md") and frag not in self.ids_of(dest):
            self.report(path, lineno, f"link `{target}`: {os.path.basename(dest)} has no heading #{frag}")

    def check_include(self, path, lineno, arg):
        parts = arg.split(":")
        fname = parts[0]
        full = os.path.normpath(os.path.join(os.path.dirname(path), fname))
        if not os.path.isfile(full):
            hint = " (run scripts/transcripts.sh)" if "/transcripts/" in full else ""
            self.report(path, lineno, f"{{{{#include {arg}}}}}: {os.path.relpath(full, self.root)} does not exist{hint}")
            return
        lines = open(full, encoding="utf-8", errors="replace").read().splitlines()
        rest = parts[1:]
        if not rest or rest == [""]:
            region = lines
        elif len(rest) == 1 and not re.fullmatch(r"\d*", rest[0]):
            name = rest[0]
            region, found, ended = [], False, False
            for l in lines:
                if found:
                    e = ANCHOR_END.search(l)
                    if e and e.group(1) == name:
                        ended = True
                        break
                    if not ANCHOR_START.search(l) and not ANCHOR_END.search(l):
                        region.append(l)
                else:
                    s = ANCHOR_START.search(l)
                    if s and s.group(1) == name:
                        found = True
            if not found:
                self.report(path, lineno, f"{{{{#include {arg}}}}}: {fname} has no `ANCHOR: {name}` (mdbook would include nothing)")
                return
            if not ended:
                self.report(path, lineno, f"{{{{#include {arg}}}}}: {fname} has no `ANCHOR_END: {name}` (mdbook would include the rest of the file)")
        else:
            try:
                nums = [int(x) if x else None for x in rest]
            except ValueError:
                self.report(path, lineno, f"{{{{#include {arg}}}}}: not a line range")
                return
            if len(nums) == 1:
                start, end = nums[0], nums[0]
            else:
                start, end = nums[0], nums[1]
            start = (start or 1) - 1
            end = len(lines) if end is None else end
            if start >= len(lines) or end > len(lines):
                self.report(path, lineno, f"{{{{#include {arg}}}}}: {fname} has only {len(lines)} lines")
            region = lines[start:end]
        if not any(l.strip() for l in region):
            self.report(path, lineno, f"{{{{#include {arg}}}}}: the included region is empty")

    def lint_markdown(self, path, book_page):
        text = open(path, encoding="utf-8").read()
        lines = text.split("\n")
        name = os.path.basename(path)
        typed = book_page and name not in TYPED_OUTPUT_PENDING
        fence, lang = None, ""
        prose = []  # (lineno, line) outside fences
        for n, l in enumerate(lines, 1):
            for m in INCLUDE.finditer(l):
                self.check_include(path, n, m.group(2))
            f = FENCE.match(l)
            if fence is None and f:
                fence, lang = f.group(2), f.group(3)
                continue
            if fence is not None:
                if f and f.group(2).startswith(fence[0]) and len(f.group(2)) >= len(fence) and not f.group(3):
                    fence = None
                    continue
                code = INCLUDE.sub("", l)
                self.check_paths(path, n, code)
                for m in MAKE_CMD.finditer(code):
                    self.check_make(path, n, m.group(1))
                if typed and lang in ("console", "text") and TYPED.match(code):
                    self.report(path, n, f"typed output in a ```{lang} block: `{l.strip()[:60]}`: capture it (scripts/transcripts.sh) and {{{{#include}}}} it")
                continue
            prose.append((n, l))
        # Inline code spans and links, per paragraph (a span may wrap).
        para = []
        for n, l in prose + [(len(lines) + 1, "")]:
            if l.strip():
                para.append((n, l))
                continue
            if para:
                self.lint_paragraph(path, para)
                para = []

    def lint_paragraph(self, path, para):
        text = ""
        starts = []
        for n, l in para:
            starts.append((len(text), n))
            text += l + "\n"

        def line_at(pos):
            ln = para[0][0]
            for off, n in starts:
                if off <= pos:
                    ln = n
            return ln
        spans = []
        for m in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", text, re.S):
            spans.append((m.start(), m.end()))
            self.check_inline_code(path, line_at(m.start()), m.group(2).replace("\n", " ").strip())
        for m in LINK.finditer(text):
            if any(a <= m.start() < b for a, b in spans):
                continue
            self.check_link(path, line_at(m.start()), m.group(2), bool(m.group(1)))

    # ---- Rust comments ------------------------------------------------------
    def lint_rust(self, path):
        for row, text in rust.parse(path).line_comments():
            n, c = row + 1, re.sub(r"^//[/!]?", "", text)
            for m in re.finditer(r"(`+)(.+?)\1", c):
                self.check_inline_code(path, n, m.group(2))
            # Paths and make commands outside code spans too.
            bare = re.sub(r"(`+)(.+?)\1", " ", c)
            self.check_paths(path, n, bare)
            for m in re.finditer(r"\bmake\s+([a-z][\w-]*)\s+STEP=", bare):
                self.check_make(path, n, m.group(1))
            for m in BARE_INSMOD.finditer(c):
                self.report(path, n, f"`insmod {m.group(1)}`: the VM's shell starts in the repository; "
                            f"name the module as build/modules-fast/steps/NN-name/{m.group(1)}")

    def lint_solved_transcript(self, path):
        """A finished stage's captured check must end with nothing failed."""
        with open(path, encoding="utf-8") as f:
            totals = [(n, m) for n, l in enumerate(f, 1)
                      if (m := re.fullmatch(r"\d+ passed, (\d+) failed", l.strip()))]
        if not totals:
            self.report(path, 1, "a solution's captured check with no \"N passed, N failed\" line: recapture it (scripts/transcripts.sh)")
        elif int(totals[-1][1].group(1)) != 0:
            n, m = totals[-1]
            self.report(path, n, f"a solution's captured check shows failures ({m.group(0)}): recapture it (scripts/transcripts.sh)")

    def run(self):
        book = os.path.join(self.root, "book", "src")
        for tr in sorted(glob.glob(os.path.join(book, "transcripts", "check-*-solutions.txt"))):
            self.lint_solved_transcript(tr)
        for md in sorted(glob.glob(os.path.join(book, "**", "*.md"), recursive=True)):
            self.lint_markdown(md, True)
        readme = os.path.join(self.root, "README.md")
        if os.path.isfile(readme):
            self.lint_markdown(readme, False)
        for tree in ("steps", "solutions"):
            for rs in sorted(glob.glob(os.path.join(self.root, tree, "**", "*.rs"), recursive=True)):
                self.lint_rust(rs)
        return self.problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=REPO)
    args = ap.parse_args(argv)
    problems = Lint(os.path.abspath(args.root)).run()
    seen = sorted(set(problems))
    for f, n, msg in seen:
        print(f"{f}:{n}: {msg}")
    if problems:
        print(f"book-lint: {len(seen)} problem(s)", file=sys.stderr)
        return 1
    print("book-lint: the book and the comments name only what exists")
    return 0

