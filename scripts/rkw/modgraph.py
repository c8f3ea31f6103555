"""check-modules.py [--root DIR] [STAGE...]: each stage's module graph is a
tree a reader can follow.

For every crate root of a stage (a `.rs` file with `module!`,
`module_pci_driver!` or `InPlaceModule`), in steps/ and solutions/, the
modules it declares are followed through `mod x;` and `#[path = "..."]`,
and each file's `crate::`, `super::` and `self::` paths are resolved to the
modules they name. Two rules:

  (1) No two modules import each other (`a` names `b` and `b` names `a`):
      reported as `TREE/STAGE: a <-> b (import each other)`.
  (2) A file included by several crates of a tree means the same in each:
      every `crate::`/`super::` path of it resolves to the same file in
      every solution (or every skeleton) that includes it; each stage's own
      root of a module tree (`nvme.rs`) may differ, the files it lists may
      not (a skeleton's exercise file counts as its answer, which it
      becomes). Reported as `FILE: crate::x is A in STAGE1 but B in STAGE2`.

A parent and its own submodules (a module tree's root and its files) are
not "each other". Exit status 1 if anything is reported, 2 for a stage that
is not in both trees.
"""

import os
import re

from rkw import rust, stages as stage_reader

PATHREF = re.compile(r"\b(crate|super|self)::((?:\w+::)*\w+)")
LISTREF = re.compile(r"\b(crate|super|self)::((?:\w+::)*)\{")
ROOT = re.compile(r"\bmodule(?:_pci_driver)?!|\bInPlaceModule\b")


def code(path):
    """The file's text with comments and literals blanked (rust.py)."""
    return rust.parse(path).masked()


def modules(root_file):
    """{module path (tuple): file} of the crate whose root is `root_file`."""
    found = {(): os.path.normpath(root_file)}

    def walk(path, prefix):
        if len(prefix) > 6:
            return
        base = os.path.dirname(path)
        for name, rel, _, _ in rust.parse(path).mod_decls():
            target = os.path.normpath(os.path.join(base, rel if rel else name + ".rs"))
            if not os.path.exists(target):
                continue
            found[prefix + (name,)] = target
            walk(target, prefix + (name,))

    walk(root_file, ())
    return found


def use_paths(text, start):
    """The full paths (lists of names) of the use tree whose brace list
    opens at `start` (nested lists flattened)."""
    out = []

    def parse(i, prefix):
        cur = ""
        while i < len(text):
            c = text[i]
            if c == "{":
                inner = [p for p in cur.strip().split("::") if p]
                i = parse(i + 1, prefix + inner)
                cur = ""
            elif c in ",}":
                names = [p for p in cur.strip().split("::") if p]
                if names:
                    out.append(prefix + names)
                cur = ""
                if c == "}":
                    return i + 1
                i += 1
            else:
                cur += c
                i += 1
        return i

    parse(start, [])
    return out


def references(path, modpath, mods):
    """{module path: first path text} that `path` (module `modpath`) names."""
    text = code(path)
    parent = modpath[:-1] if modpath else ()

    def base(kind):
        return () if kind == "crate" else parent if kind == "super" else modpath

    out = {}

    def resolve(start, parts, shown):
        for i in range(len(parts), 0, -1):
            cand = start + tuple(parts[:i])
            if cand in mods:
                out.setdefault(cand, shown)
                return

    for m in PATHREF.finditer(text):
        parts = m.group(2).split("::")
        resolve(base(m.group(1)), parts, m.group(0))
    for m in LISTREF.finditer(text):
        prefix = [p for p in m.group(2).split("::") if p]
        for item in use_paths(text, m.end()):
            parts = [p for p in prefix + item if p != "self"] if item != ["self"] else prefix
            resolve(base(m.group(1)), parts, f"{m.group(1)}::{'::'.join(parts)}")
    out.pop(modpath, None)
    return out


def crate_roots(root, tree, stage):
    folder = os.path.join(root, tree, stage)
    roots = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".rs"):
            if ROOT.search(code(os.path.join(folder, name))):
                roots.append(os.path.join(folder, name))
    return roots


def main(argv):
    args, stages = stage_reader.from_args("check-modules", __doc__, argv)
    problems = []
    # file -> {reference text -> {resolved file -> [crate]}}
    meaning = {}
    crates = 0
    for tree in ("solutions", "steps"):
        for stage in stages:
            for root_file in crate_roots(args.root, tree, stage):
                crates += 1
                mods = modules(root_file)
                refs = {m: references(f, m, mods) for m, f in mods.items()}
                where = os.path.relpath(root_file, args.root)
                for a, names in refs.items():
                    for b in names:
                        related = a[: len(b)] == b or b[: len(a)] == a
                        if a < b and not related and a in refs.get(b, {}):
                            problems.append(
                                f"{where}: {'::'.join(a) or 'crate'} <-> {'::'.join(b)} (import each other)"
                            )
                for m, f in mods.items():
                    rel = os.path.relpath(f, args.root)
                    for b, shown in refs[m].items():
                        if shown.startswith("self::"):
                            continue
                        target = os.path.relpath(mods[b], args.root)
                        # A skeleton's exercise file stands for its answer.
                        if target.startswith("steps" + os.sep):
                            target = "solutions" + target[len("steps"):]
                        meaning.setdefault((tree, rel), {}).setdefault(shown, {}).setdefault(target, []).append(where)
    for (_, f), shown in sorted(meaning.items()):
        for text, targets in sorted(shown.items()):
            if len(targets) > 1:
                (ta, ca), (tb, cb) = sorted(targets.items())[:2]
                problems.append(f"{f}: {text} is {ta} in {ca[0]} but {tb} in {cb[0]}")
    for p in problems:
        print(p)
    if problems:
        print(f"{crates} crates, {len(problems)} problem(s)")
        return 1
    print(f"{crates} crates: no two modules import each other, every shared file means the same everywhere")
    return 0

