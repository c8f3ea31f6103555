"""gen-book-extras.py [--check]: the generated end-of-chapter sections.

For every stage NN-name (a folder of solutions/) this writes two Markdown
files, which chapter NN includes at its end with mdbook's
`{{#include generated/NN-changes.md}}` and
`{{#include generated/NN-unsafe.md}}`:

  book/src/generated/NN-changes.md   "What changed since stage MM": the
      module's files, each new, changed (from the stage that last had it), or
      reused by `#[path]` from another stage's solution; then, folded in a
      <details> element, a unified diff of each changed file.
  book/src/generated/NN-unsafe.md    "Where this stage trusts the
      programmer": the `unsafe` sites (blocks, `unsafe fn`, `unsafe impl`,
      and a macro's `unsafe(...)` declaration such as `global_lock!`'s
      `unsafe(uninit) static`) that are new or changed in this stage, with
      the first sentence of what each relies on; the unchanged ones and
      those in files reused by `#[path]` are counted, with the chapter that
      shows them.

Headings are `###`, so the sections sit inside a chapter. The output is
deterministic: sorted, no dates, no absolute paths.

Without an argument the files are written, and one line per stage is
printed on stdout:
    NN-name: unsafe=T new_or_changed=N unchanged=U reused=R undocumented=D
(T = N + U + R: every `unsafe` site the stage's module compiles).
--check regenerates everything in memory and exits 1, naming the files, when
a committed file is stale or missing; it also exits 1 when an `unsafe` site
has nothing saying why it is sound (the lint): a block, `unsafe impl` or
`unsafe(...)` declaration without a `// SAFETY:` comment above it (above
the statement that holds it), an `unsafe fn` without a
`# Safety` section in its doc comment. Such sites are printed on stderr in
both modes (write mode still writes and exits 0).

The files of a stage's module. The crate root is the `.rs` file named after
MODULE in tests/NN-name/stage.env, or, when the Kbuild makes the module of
several objects (`r9p-y := r9p_main.o cred_helpers.o`), the one of them with
a `.rs` source; a stage without a MODULE (06, 15, 25, 30: host-tested libraries) has
one `.rs` file at its top that no other declares, its crate root. From the
root, `mod x;` declarations (outside any braces, not in comments) are
followed, with rustc's rules: `#[path = "..."]` is relative to the folder of
the declaring file when that file is the crate root or was itself reached by
`#[path]`, else to the folder named after the declaring file; without
`#[path]`, `x.rs` (or `x/mod.rs`) is looked up in that same folder. The C
files of the Kbuild's object list and the `*.c`/`*.h` files of the folder
are the module's files too. A file is known by its module path as the stage
sees it (`owned_queue.rs` for `#[path = ".../23-executor/queue.rs"] mod
owned_queue;`, `p9/dirent.rs`); the crate root by the module's name.

The previous stage MM ("the stage this one started from"), decided from the
code first, then from the book's parts:
  1. the nearest earlier stage whose MODULE is the same (the crate goes on:
     05-15 follow 04-14, 21-25 follow 20-24);
  2. else the nearest earlier stage whose solution files this one includes
     by `#[path]` (18 follows 17, 20 follows 19);
  3. else the stage just before it in the same part of book/src/SUMMARY.md
     (02, 03, 17, 19);
  4. else -- the first stage of a later part, sharing no code with what
     precedes it -- the last stage of the book's first part, the
     introduction every track builds on (04 and 16 follow 03).
  01 has none. Rules 1 and 2 must land in the same part (or on that base
  stage): anything else is reported as an error (exit 2), as the parts
  would then be out of step with the code.

A file's status: "reused from solutions/KK-name/f.rs (by #[path])" when its
source lies in another stage's solution folder; else "changed from KK" when
the stage chain NN -> MM -> MM's previous ... has a file of the same module
path (the crate root: the previous crate root of the same MODULE), KK being
the nearest such stage -- its version, wherever it lies (a `#[path]` include
too), is what the diff is against; else "new". Of a continuing crate (rule
1), the previous stage's files it no longer has are listed as dropped.

Lines with an mdbook anchor (`// ANCHOR: x`, `// ANCHOR_END: x`) are book
plumbing, and mdbook drops them from whole-file includes anyway: the diffs
are computed without them (their @@ line numbers count the lines that
remain). The unsafe table's `file.rs:LINE` are real line numbers of the
solution files, as text (no links: they drift).

An `unsafe` site is new or changed when the text of its span -- its SAFETY
comment (or doc comment) through its last line (a block's closing brace; a
fn's or impl's header) -- with indentation stripped, is not the span of a
site of the file's previous version; so a block that merely moved is
unchanged.
"""

import difflib
import os
import re
import sys
from collections import Counter

from rkw import REPO, rust
from rkw import stages as stage_reader
from rkw.stages import STAGE_DIR

SOLUTIONS = "solutions"
OUT_DIR = os.path.join("book", "src", "generated")
SUMMARY = os.path.join("book", "src", "SUMMARY.md")
LARGE_DIFF = 400  # lines: a diff this long is still shown, folded, and flagged

# mdbook's anchor markers (mdbook/src/utils/string.rs).
ANCHOR = rust.ANCHOR


def fail(msg, code=2):
    print(f"gen-book-extras: {msg}", file=sys.stderr)
    sys.exit(code)


def read(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return f.read()


def exists(rel):
    return os.path.isfile(os.path.join(REPO, rel))


def norm(rel):
    """A repository-relative, normalised path (it must stay in the repo)."""
    p = os.path.normpath(rel)
    if p.startswith("..") or os.path.isabs(p):
        fail(f"{rel}: outside the repository")
    return p.replace(os.sep, "/")


# ---- Rust text ----------------------------------------------------------------------


def mod_decls(text):
    """(name, path attribute or None) of the file's `mod x;` declarations
    at the top level (not inside braces, comments or strings)."""
    return [(d.name, d.path) for d in rust.of(text).mod_decls() if d.top]


# ---- stages and their modules -----------------------------------------------------


class File:
    """One file of a stage's module."""

    def __init__(self, key, src, owner, kind, via_path, user):
        self.user = user  # the stage whose module this is
        self.key = key  # module path as the stage sees it: "queue.rs", "p9/dirent.rs"; root: "<root>"
        self.src = src  # repository-relative path of its source
        self.owner = owner  # the stage folder the source lies in
        self.kind = kind  # "root", "rs", "c"
        self.via_path = via_path  # reached through a #[path] attribute

    def display(self):
        """Its name in the tables: a file of the stage's own folder by its
        path there; a reused one by its module path in this stage."""
        if self.kind == "root" or not self.via_path or self.user == self.owner:
            return self.src.split("/", 2)[2]
        return self.key


class Stage:
    def __init__(self, name):
        self.name = name
        self.num = name[:2]
        self.dir = f"{SOLUTIONS}/{name}"
        self.module = stage_reader.setting(name, "MODULE")
        self.files = {}  # key -> File
        self.prev = None
        self.rule = ""
        self.part = None

    def ident(self):
        """The crate's identity for matching roots across stages."""
        return self.module or os.path.splitext(os.path.basename(self.root.src))[0]


LIBRARY = "lib"  # solutions/lib/: the libraries' given files (no stage's answers)


def stage_of(src):
    """The stage folder (NN-name) a solutions/ path lies in, `LIBRARY` for
    solutions/lib/, or None."""
    parts = src.split("/")
    if len(parts) >= 3 and parts[0] == SOLUTIONS and (STAGE_DIR.match(parts[1]) or parts[1] == LIBRARY):
        return parts[1]
    return None


def kbuild_objects(stage):
    """The objects the Kbuild makes the module of (`m-y :=`/`m-objs :=`),
    as stems; [] for a one-object module."""
    kb = f"{stage.dir}/Kbuild"
    if not stage.module or not exists(kb):
        return []
    objs = []
    text = read(kb).replace("\\\n", " ")
    for line in text.splitlines():
        m = re.match(rf"^\s*{re.escape(stage.module)}-(?:y|objs)\s*[:+]?=\s*(.*)$", line)
        if m:
            objs += [os.path.splitext(o)[0] for o in m.group(1).split() if o.endswith(".o")]
    return objs


def resolve(stage):
    """Fill stage.files from its crate root."""
    objs = kbuild_objects(stage)
    if objs:
        roots = [o for o in objs if exists(f"{stage.dir}/{o}.rs")]
        if len(roots) != 1:
            fail(f"{stage.dir}/Kbuild: {stage.module}'s objects {objs} have {len(roots)} Rust sources, not one")
        root = f"{stage.dir}/{roots[0]}.rs"
    elif stage.module:
        root = f"{stage.dir}/{stage.module}.rs"
    else:
        # No module: the top .rs file that no other file of the folder declares.
        tops = sorted(f for f in os.listdir(os.path.join(REPO, stage.dir)) if f.endswith(".rs"))
        declared = set()
        for f in tops:
            declared |= {n + ".rs" for n, _ in mod_decls(read(f"{stage.dir}/{f}"))}
        tops = [f for f in tops if f not in declared]
        if len(tops) != 1:
            fail(f"{stage.dir}: no MODULE in its stage.env, and {len(tops)} candidate crate roots {tops}")
        root = f"{stage.dir}/{tops[0]}"
    if not exists(root):
        fail(f"{root}: the crate root of {stage.name} is missing")
    stage.root = File("<root>", root, stage.name, "root", False, stage.name)
    stage.files["<root>"] = stage.root

    def walk(src, modpath, dir_owner):
        # dir_owner: the file is the root or was reached by #[path] (rustc
        # then resolves its children from its own folder).
        here = os.path.dirname(src)
        base = here if dir_owner else os.path.join(here, os.path.splitext(os.path.basename(src))[0])
        for name, path in mod_decls(read(src)):
            if path is not None:
                # A `#[path]` is resolved from the declaring file's own folder.
                child = norm(os.path.join(here, path))
            else:
                child = norm(os.path.join(base, name + ".rs"))
                if not exists(child):
                    child = norm(os.path.join(base, name, "mod.rs"))
            if not exists(child):
                fail(f"{src}: `mod {name};` resolves to {child}, which does not exist")
            key = "/".join(modpath + [name]) + ".rs"
            owner = stage_of(child)
            if owner is None:
                fail(f"{src}: `mod {name};` resolves to {child}, outside {SOLUTIONS}/")
            stage.files[key] = File(key, child, owner, "rs", path is not None, stage.name)
            walk(child, modpath + [name], path is not None or os.path.basename(child) == "mod.rs")

    walk(root, [], True)
    cfiles = {f"{o}.c" for o in objs if exists(f"{stage.dir}/{o}.c")}
    cfiles |= {f for f in os.listdir(os.path.join(REPO, stage.dir)) if f.endswith((".c", ".h"))}
    for f in sorted(cfiles):
        stage.files[f] = File(f, f"{stage.dir}/{f}", stage.name, "c", False, stage.name)
    # Every .rs file of the folder should be part of the module.
    used = {f.src for f in stage.files.values()}
    for dirpath, _, names in os.walk(os.path.join(REPO, stage.dir)):
        for n in names:
            rel = norm(os.path.relpath(os.path.join(dirpath, n), REPO))
            if n.endswith(".rs") and rel not in used:
                print(f"gen-book-extras: warning: {rel} is in no module of {stage.name}", file=sys.stderr)


def book_parts():
    """stage name -> index of its part (`# Title` section) in SUMMARY.md."""
    parts, part = {}, 0
    for line in read(SUMMARY).splitlines():
        if re.match(r"^#\s", line):
            part += 1
        m = re.search(r"\]\((\d\d-[A-Za-z0-9_-]+)\.md\)", line)
        if m:
            parts[m.group(1)] = part
    return parts


def link_stages(stages):
    parts = book_parts()
    for s in stages:
        if s.name not in parts:
            fail(f"{s.name}: no chapter {s.name}.md in {SUMMARY}")
        s.part = parts[s.name]
    first_part = min(s.part for s in stages)
    base = [s for s in stages if s.part == first_part][-1]
    for i, s in enumerate(stages):
        earlier = stages[:i][::-1]
        if not earlier:
            continue
        same_module = [e for e in earlier if s.module and e.module == s.module]
        included = {f.owner for f in s.files.values() if f.owner != s.name}
        inc = [e for e in earlier if e.name in included]
        same_part = [e for e in earlier if e.part == s.part]
        if same_module:
            s.prev, s.rule = same_module[0], "same module"
        elif inc:
            s.prev, s.rule = inc[0], "includes its files"
        elif same_part:
            s.prev, s.rule = same_part[0], "the stage before it in the book's part"
        else:
            s.prev, s.rule = base, "a new part starts from the introduction's last stage"
        if s.prev.part != s.part and s.prev is not base:
            fail(f"{s.name}: previous stage {s.prev.name} ({s.rule}) is in another part of the book")


def chain(stage):
    """The stages before `stage`, nearest first, along the previous links."""
    out, s = [], stage.prev
    while s is not None:
        out.append(s)
        s = s.prev
    return out


def earlier_version(stage, f):
    """(stage, File) of the nearest earlier version of `f` along the chain."""
    for s in chain(stage):
        if f.kind == "root":
            if s.ident() == stage.ident():
                return s, s.root
        elif f.key in s.files:
            return s, s.files[f.key]
    return None, None


def status(stage, f):
    """("reused", owner) | ("changed", (stage, File)) | ("same", ...) | ("new", None)."""
    if f.owner != stage.name:
        return "reused", f.owner
    s, g = earlier_version(stage, f)
    if g is None:
        return "new", None
    if read(g.src) == read(f.src):
        return "same", (s, g)
    return "changed", (s, g)


# ---- unsafe sites ------------------------------------------------------------------


class Site:
    def __init__(self, line, kind, reason, span_text):
        self.line = line  # 1-based line of the `unsafe` keyword
        self.kind = kind
        self.reason = reason  # first sentence, or None when undocumented
        self.span_text = span_text


def first_sentence(text):
    text = re.sub(r"\s+", " ", text).strip()
    text = text[:1].upper() + text[1:]
    # [`x`] intra-doc links: just the code.
    text = re.sub(r"\[(`[^`]*`)\](?!\()", r"\1", text)
    # A sentence ends at . ! ? (perhaps closed by ) " ') before a space and a
    # capital or code; not inside backticks.
    inside = False
    for i, ch in enumerate(text):
        if ch == "`":
            inside = not inside
        elif not inside and ch in ".!?":
            j = i + 1
            while j < len(text) and text[j] in ")\"'":
                j += 1
            if j == len(text):
                return text[:j]
            if text[j] == " " and j + 1 < len(text) and (text[j + 1].isupper() or text[j + 1] in "`(["):
                if re.search(r"\b(?:e\.g|i\.e|etc|cf|vs)\.$", text[: i + 1]):
                    continue
                return text[:j]
    return text


# The kinds of unsafe sites (rust.py's) as the tables name them.
KINDS = {"block": "`unsafe {}` block", "fn": "`unsafe fn`", "impl": "`unsafe impl`", "trait": "`unsafe trait`"}


def unsafe_sites(text):
    lines = text.split("\n")
    sites = []
    for u in rust.of(text).unsafe_sites():
        kind = KINDS.get(u.kind) or f"`unsafe{u.decl}`"
        span = "\n".join(l.strip() for l in lines[u.top : u.last + 1] if not ANCHOR.search(l))
        sites.append(Site(u.row + 1, kind, first_sentence(u.reason) if u.reason and u.reason.strip() else None, span))
    return sites


_site_cache = {}


def sites_of(src):
    if src not in _site_cache:
        _site_cache[src] = unsafe_sites(read(src)) if src.endswith(".rs") else []
    return _site_cache[src]


# ---- Markdown ----------------------------------------------------------------------


def md_cell(text):
    """Inline Markdown for a table cell: code spans kept, `|` escaped, `<`,
    `>` and `*` made literal outside code."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if i % 2:
            out.append(part.replace("|", "\\|"))
        else:
            out.append(part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*").replace("|", "\\|"))
    return "".join(out)


def chapter_link(stage_name):
    if stage_name == LIBRARY:
        return f"the library (`{SOLUTIONS}/{LIBRARY}/`)"
    return f"[chapter {stage_name[:2]}]({stage_name}.md)"


def no_anchors(text):
    return [l for l in text.splitlines() if not ANCHOR.search(l)]


def fence_for(lines):
    longest = max([len(m.group(0)) for l in lines for m in re.finditer(r"`{3,}", l)] + [2])
    return "`" * (longest + 1)


def changes_md(stage):
    prev = stage.prev
    out = []
    if prev is None:
        out.append(f"### The files of stage {stage.num}")
        out.append("")
        out.append(f"Stage {stage.num} is the first: every file is new.")
    else:
        out.append(f"### What changed since stage {prev.num}")
        out.append("")
        out.append({
            "same module": f"This stage takes stage {prev.num}'s module, `{stage.module}`, one step further.",
            "includes its files": f"This stage builds on stage {prev.num}, the latest stage whose files it includes.",
            "the stage before it in the book's part": f"This stage follows stage {prev.num}; it shares no file with it.",
            "a new part starts from the introduction's last stage": f"This part of the book starts from stage {prev.num}, the end of the introduction; it shares no file with it.",
        }[stage.rule])
    out.append("")
    rows, diffs = [], []
    order = {"changed": 0, "same": 0, "new": 1, "reused": 2}
    entries = []
    for f in stage.files.values():
        st, info = status(stage, f)
        entries.append((order[st], 0 if f.kind == "root" else 1, f.display(), st, info, f))
    dropped = []
    if prev is not None and stage.rule == "same module":
        for key, g in prev.files.items():
            if key not in stage.files:
                dropped.append(g)
    counts = Counter(e[3] for e in entries)
    n_files = len(entries)
    # A reused file's submodules, reused from the same stage, are named on
    # its row (`p9.rs` and `p9/*.rs`).
    reused_src = {e[5].src: e for e in entries if e[3] == "reused"}
    children = {}
    for e in entries:
        f = e[5]
        if e[3] != "reused" or "/" not in f.key:
            continue
        parent_key = f.key.rsplit("/", 1)[0] + ".rs"
        parent = stage.files.get(parent_key)
        if parent is not None and parent.src in reused_src and parent.owner == f.owner:
            children.setdefault(parent_key, []).append(f)
    folded = {f.key for fs in children.values() for f in fs}
    entries = [e for e in entries if e[5].key not in folded]
    entries.sort(key=lambda e: e[:3])
    summary = [f"{counts[k]} {label}" for k, label in (("changed", "changed"), ("same", "copied unchanged"), ("new", "new"), ("reused", "reused by `#[path]`")) if counts[k]]
    what = f"module `{stage.module}`" if stage.module else f"crate `{os.path.basename(stage.root.src)}` (no module: tested on the host)"
    out.append(f"The {what}: {n_files} file{'s' if n_files != 1 else ''}; " + ", ".join(summary) + ("; " + f"{len(dropped)} dropped" if dropped else "") + ".")
    out.append("")
    out.append("| File | Status |")
    out.append("|---|---|")
    for _, _, disp, st, info, f in entries:
        name = f"`{disp}`"
        if f.kind == "root":
            name += " (crate root)"
        elif f.kind == "rs" and f.via_path and os.path.basename(f.src) != os.path.basename(f.key):
            name += f" (`mod {os.path.splitext(os.path.basename(f.key))[0]}`)"
        if st == "reused" and f.owner == LIBRARY:
            text = f"given: the library's `{f.src}` (by `#[path]`)"
        elif st == "reused":
            text = f"reused from `{f.src}` (by `#[path]`)"
            kids = sorted(children.get(f.key, []), key=lambda g: g.key)
            if kids:
                text += f", with its {len(kids)} submodules " + ", ".join(f"`{g.key}`" for g in kids)
        elif st == "new":
            text = "new"
        else:
            s, g = info
            where = ""
            if g.src != f"{s.dir}/{os.path.basename(g.src)}" or os.path.basename(g.src) != os.path.basename(f.src):
                where = f" (`{g.src}`)"
            if st == "same":
                text = f"copied unchanged from {s.num}{where}"
            else:
                text = f"changed from {s.num}{where}"
                diffs.append((disp, g, f))
        rows.append(f"| {name} | {text} |")
    for g in sorted(dropped, key=lambda g: g.display()):
        rows.append(f"| `{g.display()}` | dropped: stage {prev.num} had it, this stage does not |")
    out += rows
    out.append("")
    for disp, g, f in diffs:
        a, b = no_anchors(read(g.src)), no_anchors(read(f.src))
        body = list(difflib.unified_diff(a, b, f"a/{g.src}", f"b/{f.src}", lineterm="", n=3))
        plus = sum(1 for l in body if l.startswith("+") and not l.startswith("+++"))
        minus = sum(1 for l in body if l.startswith("-") and not l.startswith("---"))
        large = f", a long diff ({len(body)} lines)" if len(body) > LARGE_DIFF else ""
        fence = fence_for(body)
        out.append(f"<details><summary>{disp}: +{plus} −{minus} lines{large}</summary>")
        out.append("")
        out.append(fence + "diff")
        out += body
        out.append(fence)
        out.append("")
        out.append("</details>")
        out.append("")
    return finish(out), diffs


def unsafe_md(stage):
    out = ["### Where this stage trusts the programmer", ""]
    rows, unchanged, reused, undocumented = [], Counter(), {}, []
    for f in sorted(stage.files.values(), key=lambda f: (f.kind != "root", f.display())):
        sites = sites_of(f.src)
        st, info = status(stage, f)
        if st == "reused":
            if sites:
                reused.setdefault(f.owner, []).append((f.display(), len(sites)))
            continue
        before = Counter()
        if st in ("changed", "same"):
            before = Counter(s.span_text for s in sites_of(info[1].src))
        for s in sites:
            if s.reason is None:
                undocumented.append((f, s))
            if before[s.span_text] > 0:
                before[s.span_text] -= 1
                unchanged[(info[0].name, f.display())] += 1
                continue
            reason = md_cell(s.reason) if s.reason else "**nothing: no `// SAFETY:` comment**" if "fn" not in s.kind else "**nothing: no `# Safety` section**"
            rows.append(f"| {f.display()}:{s.line} | {s.kind} | {reason} |")
    n_new = len(rows)
    n_unchanged = sum(unchanged.values())
    n_reused = sum(c for v in reused.values() for _, c in v)
    total = n_new + n_unchanged + n_reused
    if total == 0:
        out.append(f"Stage {stage.num}'s code has no `unsafe`: the compiler checks all of it.")
    else:
        parts = [f"{n_new} new or changed in this stage"]
        if n_unchanged:
            parts.append(f"{n_unchanged} unchanged in the files it changed")
        if n_reused:
            parts.append(f"{n_reused} in files it reuses by `#[path]`")
        out.append(f"Stage {stage.num}'s module has {total} `unsafe` site{'s' if total != 1 else ''}: " + ", ".join(parts) + ".")
    out.append("")
    if rows:
        out.append("| Where | Kind | What it relies on |")
        out.append("|---|---|---|")
        out += rows
        out.append("")
    elif total:
        out.append("None of them is new in this stage.")
        out.append("")
    by_stage = {}
    for (where, disp), c in unchanged.items():
        by_stage.setdefault(where, []).append((disp, c))
    for where in sorted(by_stage):
        lst = ", ".join(f"`{d}` {c}" for d, c in sorted(by_stage[where]))
        out.append(f"- Unchanged in the files this stage changed, as in {chapter_link(where)}: {lst}.")
    for owner in sorted(reused):
        lst = ", ".join(f"`{d}` {c}" for d, c in sorted(reused[owner]))
        out.append(f"- Reused, reviewed in {chapter_link(owner)}: {lst}.")
    if unchanged or reused:
        out.append("")
    counts = dict(total=total, new=n_new, unchanged=n_unchanged, reused=n_reused, undocumented=len(undocumented))
    return finish(out), counts, undocumented


def finish(lines):
    while lines and lines[-1] == "":
        lines.pop()
    text = "\n".join(lines) + "\n"
    # mdbook would expand `{{#...}}` in included text: escape it.
    return text.replace("{{#", "\\{{#")


# ---- main --------------------------------------------------------------------------


def main(argv):
    check = False
    for a in argv:
        if a == "--check":
            check = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            fail(f"unknown argument {a!r} (--check or nothing)")
    names = stage_reader.names(REPO, (SOLUTIONS,))
    stages = [Stage(n) for n in names]
    for s in stages:
        resolve(s)
    link_stages(stages)

    wanted, summary, lint = {}, [], []
    for s in stages:
        changes, _ = changes_md(s)
        unsafe, counts, undocumented = unsafe_md(s)
        wanted[f"{OUT_DIR}/{s.num}-changes.md"] = changes
        wanted[f"{OUT_DIR}/{s.num}-unsafe.md"] = unsafe
        summary.append(f"{s.name}: unsafe={counts['total']} new_or_changed={counts['new']} unchanged={counts['unchanged']} reused={counts['reused']} undocumented={counts['undocumented']}")
        lint += [(f.src, site) for f, site in undocumented]

    for src, site in sorted(set((src, (site.line, site.kind)) for src, site in lint)):
        line, kind = site
        what = "a `# Safety` doc section" if "fn" in kind or "trait" in kind else "a `// SAFETY:` comment"
        print(f"{src}:{line}: {kind.replace('`', '')} without {what.replace('`', '')}", file=sys.stderr)

    out_abs = os.path.join(REPO, OUT_DIR)
    if check:
        stale = []
        for rel, text in sorted(wanted.items()):
            p = os.path.join(REPO, rel)
            if not os.path.isfile(p):
                stale.append(f"{rel} (missing)")
            else:
                with open(p, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(rel)
        if os.path.isdir(out_abs):
            for n in sorted(os.listdir(out_abs)):
                rel = f"{OUT_DIR}/{n}"
                if re.match(r"^\d\d-(changes|unsafe)\.md$", n) and rel not in wanted:
                    stale.append(f"{rel} (no such stage any more)")
        for s in stale:
            print(f"gen-book-extras: stale: {s}", file=sys.stderr)
        if stale:
            print("gen-book-extras: run scripts/gen-book-extras.py and commit book/src/generated/", file=sys.stderr)
        bad = bool(stale) or bool(lint)
        if not bad:
            print(f"gen-book-extras: {len(wanted)} generated files up to date, every unsafe site documented")
        return 1 if bad else 0

    os.makedirs(out_abs, exist_ok=True)
    for rel, text in sorted(wanted.items()):
        p = os.path.join(REPO, rel)
        old = None
        if os.path.isfile(p):
            with open(p, encoding="utf-8") as f:
                old = f.read()
        if old != text:
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
    for n in sorted(os.listdir(out_abs)):
        if re.match(r"^\d\d-(changes|unsafe)\.md$", n) and f"{OUT_DIR}/{n}" not in wanted:
            os.remove(os.path.join(out_abs, n))
    for line in summary:
        print(line)
    return 0

