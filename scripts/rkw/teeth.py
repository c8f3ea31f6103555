"""teeth.py [options] STAGE [STAGE...]: does every exercise's requirement have
a check that fails without it? (A maintainer's tool; the learner never runs it.)

For each stage (01, 1 or 01-hello), it makes variants of the solution tree,
each missing one piece of work, builds them against the workshop kernel, runs
the stage's test on all of them in one VM boot, and reports how many checks
each variant fails. A variant that passes everything has NO TEETH: a learner
could leave that piece out and never know.

Variants (tree names teeth-NN-ID, in build/teeth/ and build/modules-FLAVOUR/):
  eK       exercise K undone: every region of the skeleton whose `// TODO`
           names exercise K (an exercise region as scripts/check-skeletons.py
           finds it: the innermost `fn`/`impl` with a TODO, or the change
           block holding the TODO) is put back to the skeleton's text; the
           rest of the tree is the solution.
  eKrM     (exercises with several regions) region M of exercise K undone.
  eK-lM    (--lines) one statement of exercise K's solved text deleted: the
           statements that are not declarations (`let`), returns, tail
           values or items; at most --max-lines per exercise. A variant that
           does not compile is a tooth at compile time and is not run.
  wN       a plausible wrong version a learner could write (an off-by-one,
           a missing bound, a wrong field), from tests/NN-name/wrong.txt:
               == wN K what the wrong version does (K: its exercise)
               --- FILE            (a file of the solution's folder, or of a
                                    folder beside it the stage includes:
                                    ../lib/r9p/session.rs)
               the solution's lines, exactly (they must occur once)
               +++
               the wrong version's lines
           (several ---/+++ pairs may follow one ==; lines starting with
           # before the first == are comments). Every wrong version must
           fail a check: one that passes everything is NO TEETH too.

  --lines           also make the statement-deletion variants
  --max-lines N     at most N statement variants per exercise (6)
  --only IDS        only these variants (comma-separated ids, e.g. e1,e2-l3)
  --list            print the variants (and the statements chosen) and stop
  --no-vm           build only
  --report FILE     keep FILE's table of results (a section per stage,
                    replaced on each run; default tests/teeth/report.md,
                    the record kept in the repository)
  -j N              parallel builds (2)

The solution itself runs in the same boot (tree `solutions`), as the
baseline: its failures, if any, are reported and make every result suspect.
The solutions of the stages whose modules the test loads too (USES in
stage.env: 34 and 35 load stage 20's rnvme) are built as make test builds
them (build_uses in scripts/common.sh).
Environment: RKW_FLAVOUR (fast unless set: no KASAN or kmemleak, so leak
checks SKIP there and a leak has no teeth on it), RKW_TEST_TIMEOUT (seconds per
tree in the guest; default the stage's TIMEOUT).

Stages tested on the host (VM=no in stage.env: 06, 15, 25, 30): each variant is
tested by tests/host's cargo tests (the stage's filter) in a copy of the repository's
layout (build/teeth/host/ws/: tests/host and a solutions/ of links, the
stage's folder the variant's), since host-test.sh only takes steps|solutions.
The after-vm.sh checks (stage 12's prp host tests, stage 13's image stamp)
are run for the solution only: stage 13's test writes every non-solution
tree's stamp at the same offset, and host-test.sh cannot take a variant
tree; a variant that changes prp.rs gets the prp host tests (filter
nvme_prp) in such a copy instead, counted as more checks.

Logs: build/teeth/logs/NN-name.vm.log (the runs; each boot's output in
vm-NN-name-FLAVOUR-N.out), .build.log (compiler
output of the variants that failed), .details (each variant's failed checks).
"""

import argparse
import concurrent.futures
import difflib
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time

from rkw import REPO, boots, ktap, rust, stages
from rkw import skeletons as cs

TEETH = os.path.join(REPO, "build", "teeth")
LOGS = os.path.join(TEETH, "logs")




# ---- regions ----------------------------------------------------------------------
class Region:
    """One exercise region of one file: the change blocks (difflib opcodes,
    solution side i, skeleton side j) that revert it."""

    def __init__(self, file, key, name):
        self.file = file
        self.key = key
        self.name = name
        self.blocks = []
        self.exercise = None

    @property
    def sol_span(self):
        return min(b[0] for b in self.blocks), max(b[1] for b in self.blocks)


def item_name(line):
    m = re.search(r"\bfn\s+(\w+)", line)
    if m:
        return m.group(1)
    m = re.search(r"\bimpl\b(.*?)(\{|$)", line)
    return ("impl" + m.group(1)).strip() if m else line.strip()[:40]


def read_lines(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace").splitlines(keepends=True)


def regions_of(stage):
    """{file: [Region]} and the regions in order, for one stage."""
    steps_dir = os.path.join(REPO, "steps", stage)
    sol_dir = os.path.join(REPO, "solutions", stage)
    out = []
    texts = {}
    for f in sorted(cs.files(steps_dir) & cs.files(sol_dir)):
        if not f.endswith(".rs"):
            continue
        sol, step = read_lines(os.path.join(sol_dir, f)), read_lines(os.path.join(steps_dir, f))
        if sol == step:
            continue
        texts[f] = (sol, step)
        ops = difflib.SequenceMatcher(None, sol, step, autojunk=False).get_opcodes()
        step_items = cs.items(step)
        sol_uses, step_uses = cs.use_lines(sol), cs.use_lines(step)
        todos = cs.todo_lines(step)
        by_key = {}
        for tag, i1, i2, j1, j2 in ops:
            if tag == "equal":
                continue
            why = cs.exercise(i1, i2, j1, j2, sol, step, step_items, sol_uses, step_uses)
            if why not in ("TODO", "in an item with a TODO"):
                continue  # imports, module docs, #[path]: the solution's stay
            lo, hi = (j1, j2 - 1) if j2 > j1 else (j1 - 1, j1)
            around = [
                it for it in step_items
                if it[0] <= lo and hi <= it[1] and any(n in todos for n in range(it[0], it[1] + 1))
            ]
            if around:
                first, last, _ = max(around, key=lambda it: (it[0], -it[1]))
                key, name, rows = ("item", first), item_name(step[first]), range(first, last + 1)
            else:
                key, name, rows = ("block", j1), f"line {j1 + 1}", range(j1, j2)
            if key not in by_key:
                r = Region(f, key, name)
                for n in rows:
                    if todos.get(n) is not None and r.exercise is None:
                        r.exercise = todos[n]
                by_key[key] = r
                out.append(r)
            by_key[key].blocks.append((i1, i2, j1, j2))
    # Regions without "exercise N" get numbers of their own, after the rest.
    top = max([r.exercise for r in out if r.exercise is not None], default=0)
    for r in out:
        if r.exercise is None:
            top += 1
            r.exercise = top
    return out, texts


def apply_blocks(sol, step, blocks):
    """The solution's lines with these change blocks put back to the skeleton's."""
    lines = list(sol)
    for i1, i2, j1, j2 in sorted(blocks, reverse=True):
        lines[i1:i2] = step[j1:j2]
    return lines


# ---- statements (for --lines) -----------------------------------------------------
def masked(lines):
    """The lines with comments, strings and char literals blanked (same
    lengths), so that brackets and `;` can be read off them."""
    return rust.of("".join(lines)).masked().splitlines(keepends=True)


SKIP_START = re.compile(
    r"^(let\b|return\b|break\b|continue\b|Ok\(|Err\(|Some\(|None\b|fn\b|pub\b|use\b|const\b|static\b|struct\b"
    r"|enum\b|impl\b|mod\b|type\b|#|\}|\)|\]|\.|\?|else\b|=>|where\b|unsafe\s+fn\b|async\s+fn\b)"
)
BLOCK_START = re.compile(r"^(if|for|while|loop|match|unsafe)\b|^\{")


def statements(sol, span):
    """[(first, last, kind, text)] of the statements in sol[span[0]:span[1]]
    that may be deleted: not declarations, returns or items."""
    m = masked(sol)
    # The bracket stack at each line's start.
    stacks, stack = [], []
    for line in m:
        stacks.append(tuple(stack))
        for c in line:
            if c in "([{":
                stack.append(c)
            elif c in ")]}" and stack:
                stack.pop()
    stacks.append(tuple(stack))
    a, b = span
    found = []

    def prev_code(n):
        n -= 1
        while n >= 0 and not m[n].strip():
            n -= 1
        return m[n].rstrip() if n >= 0 else ""

    for n in range(a, b):
        s = m[n].strip()
        if not s or not stacks[n] or stacks[n][-1] != "{":
            continue
        if not prev_code(n).endswith((";", "{", "}")) or SKIP_START.match(s):
            continue
        if "=>" in s and not BLOCK_START.match(s):
            continue  # a match arm
        depth = len(stacks[n])
        last = None
        for k in range(n, len(m)):
            t = m[k].rstrip()
            if len(stacks[k + 1]) < depth:
                break  # left the block: a tail expression ended without `;`
            if len(stacks[k + 1]) == depth and t.strip():
                if t.endswith(";"):
                    last = k
                    break
                if t.endswith("}"):
                    nxt = k + 1
                    while nxt < len(m) and not m[nxt].strip():
                        nxt += 1
                    if nxt < len(m) and m[nxt].strip().startswith(("else", ".", "?")):
                        continue
                    last = k
                    break
                if t.endswith(","):
                    break  # an arm or a field, not a statement
        if last is None or last >= b:
            continue
        body = "".join(m[n: last + 1])
        if not body.rstrip().endswith(";") and not BLOCK_START.match(s):
            continue  # a tail value
        if not body.rstrip().endswith(";"):
            nxt = last + 1
            while nxt < len(m) and not m[nxt].strip():
                nxt += 1
            tail = nxt < len(m) and m[nxt].strip().startswith("}")
            unit = re.match(r"(for|while)\b", s) or (re.match(r"if\b", s) and "else" not in top_level(body))
            if tail and not unit:
                continue  # the block's value (its tail): deleting it cannot compile
        d = re.match(r"(?:core::mem::|mem::)?drop\((\w+)\);$", s)
        if d and not any(re.search(rf"\blet\s+(mut\s+)?{d.group(1)}\b.*\.(lock|lock_irqsave|write|read)\(\)\s*;", x)
                         for x in m[max(0, n - 40): n]):
            continue  # dropping a value early that goes at the block's end anyway (not a lock guard)
        kind = "block" if BLOCK_START.match(s) else "statement"
        if kind == "statement" and re.search(r"(?<![=!<>+\-*/|&^%])(=|\+=|-=|\|=|&=|\*=)(?![=>])", top_level(body)):
            kind = "assignment"
        text = " ".join(x.strip() for x in sol[n: last + 1])
        found.append((n, last, kind, text))
    # A block whose body is one other candidate (`if c { x(); }`): deleting
    # either is the same; keep the inner one.
    keep = []
    for c in found:
        inner = [d for d in found if d is not c and c[0] < d[0] and d[1] < c[1]]
        code = [k for k in range(c[0] + 1, c[1]) if m[k].strip() and not m[k].strip().startswith("}")]
        if c[2] == "block" and len(inner) == 1 and all(inner[0][0] <= k <= inner[0][1] for k in code):
            continue
        keep.append(c)
    return keep


def top_level(text):
    """The characters of (masked) text outside any brackets."""
    out, depth = [], 0
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def choose(stmts, limit):
    """At most `limit` statements: assignments and calls before whole
    blocks, then in the file's order."""
    rank = {"assignment": 0, "statement": 1, "block": 2}
    best = sorted(stmts, key=lambda s: (rank[s[2]], s[0]))[:limit]
    return sorted(best, key=lambda s: s[0])


# ---- variants ---------------------------------------------------------------------
class Variant:
    def __init__(self, stage, vid, exercise, what, files):
        self.stage = stage
        self.id = vid
        self.tree = f"teeth-{stage[:2]}-{vid}"
        self.exercise = exercise
        self.what = what
        self.files = files  # {relative path: [lines]}
        self.built = None  # True, False (does not compile)
        self.build_error = ""
        self.counts = None  # (pass, fail, skip, ended)
        self.failed = []
        self.root = None  # the folder Kbuild builds in (write_tree)


def wrong_versions(stage):
    """The variants of tests/STAGE/wrong.txt (see the module's doc)."""
    path = os.path.join(REPO, "tests", stage, "wrong.txt")
    if not os.path.exists(path):
        return []
    out, cur, edit, part = [], None, None, None
    for n, line in enumerate(read_lines(path), 1):
        m = re.match(r"== (w\d+) (\d+) (.*)$", line.rstrip("\n"))
        if m:
            cur = {"id": m.group(1), "exercise": int(m.group(2)), "what": m.group(3), "edits": []}
            out.append(cur)
            part = None
        elif cur is None:
            if line.strip() and not line.startswith("#"):
                sys.exit(f"{path}:{n}: text before the first '== wN K what'")
        elif line.startswith("--- "):
            edit = {"file": line[4:].strip(), "old": [], "new": []}
            cur["edits"].append(edit)
            part = "old"
        elif line.rstrip("\n") == "+++" and part == "old":
            part = "new"
        elif part:
            edit[part].append(line)
        elif line.strip():
            sys.exit(f"{path}:{n}: expected '--- FILE' after '== {cur['id']} ...'")
    variants = []
    for w in out:
        files = {}
        for e in w["edits"]:
            f = e["file"]
            if f not in files:
                files[f] = read_lines(os.path.join(REPO, "solutions", stage, f))
            text = "".join(files[f])
            old = "".join(e["old"]).rstrip("\n") + "\n"
            new = "".join(e["new"]).rstrip("\n") + "\n" if "".join(e["new"]).strip() else ""
            if text.count(old) != 1:
                sys.exit(f"{path}: {w['id']}: its {f} lines occur {text.count(old)} times in "
                         f"solutions/{stage}/{f}, not once")
            files[f] = text.replace(old, new).splitlines(keepends=True)
        variants.append(Variant(stage, w["id"], w["exercise"], f"wrong version: {w['what']}", files))
    return variants


def variants_of(stage, lines=False, max_lines=6):
    regions, texts = regions_of(stage)
    out = []
    exercises = sorted({r.exercise for r in regions})
    for k in exercises:
        mine = [r for r in regions if r.exercise == k]
        files = {}
        for f in sorted({r.file for r in mine}):
            sol, step = texts[f]
            files[f] = apply_blocks(sol, step, [b for r in mine if r.file == f for b in r.blocks])
        names = ", ".join(f"{r.file}:{r.name}" for r in mine)
        out.append(Variant(stage, f"e{k}", k, f"exercise {k} undone ({names})", files))
        if len(mine) > 1:
            for n, r in enumerate(mine, 1):
                sol, step = texts[r.file]
                out.append(Variant(stage, f"e{k}r{n}", k, f"exercise {k}, region {r.file}:{r.name} undone",
                                   {r.file: apply_blocks(sol, step, r.blocks)}))
        if lines:
            # Assignments, then calls, then whole blocks; taken in turn from
            # each region of the exercise.
            rank = {"assignment": 0, "statement": 1, "block": 2}
            queues = []
            for r in mine:
                sol, _ = texts[r.file]
                queues.append(sorted(((r.file,) + s for s in statements(sol, r.sol_span)),
                                     key=lambda c: (rank[c[3]], c[1])))
            cands = []
            while len(cands) < max_lines and any(queues):
                for q in queues:
                    if q and len(cands) < max_lines:
                        cands.append(q.pop(0))
            cands.sort(key=lambda c: (c[0], c[1]))
            for n, (f, first, last, kind, text) in enumerate(cands, 1):
                sol, _ = texts[f]
                new = sol[:first] + sol[last + 1:]
                short = text if len(text) <= 90 else text[:87] + "..."
                out.append(Variant(stage, f"e{k}-l{n}", k, f"exercise {k}: {f}:{first + 1} deleted: `{short}`",
                                   {f: new}))
    return out + wrong_versions(stage)


def write_tree(v):
    """build/teeth/TREE/STAGE: the solution with the variant's files, and
    what Kbuild needs around it. A file outside the stage's folder
    (`../lib/r9p/session.rs`, `../28-9p-server/server.rs`: shared code the
    crate root includes by `#[path = "../../solutions/X/f.rs"]`) goes into
    a solutions/ of the tree's own, build/teeth/TREE/solutions/ (a copy of
    the folders it changes, links to the rest), and the tree sits one level
    deeper, build/teeth/TREE/t/STAGE, so that its `../../solutions` is that
    one: the repository's files and the other trees stay untouched. Returns
    the folder Kbuild builds in (v.root)."""
    top = os.path.join(TEETH, v.tree)
    shutil.rmtree(top, ignore_errors=True)
    shared = {f for f in v.files if f.startswith("../")}
    root = os.path.join(top, "t") if shared else top
    os.makedirs(root)
    shutil.copy(os.path.join(REPO, "Kbuild"), root)
    shutil.copytree(os.path.join(REPO, "solutions", v.stage), os.path.join(root, v.stage))
    for f, lines in v.files.items():
        if f not in shared:
            with open(os.path.join(root, v.stage, f), "w", encoding="utf-8") as out:
                out.write("".join(lines))
    if shared:
        sols = os.path.join(top, "solutions")
        # The folders of solutions/ the variant changes (lib, 28-9p-server).
        changed = {os.path.normpath(os.path.join(v.stage, f)).split(os.sep)[0] for f in shared}
        if ".." in changed:
            sys.exit(f"teeth: {v.tree}: a file outside solutions/: {sorted(shared)}")
        os.makedirs(sols)
        for s in os.listdir(os.path.join(REPO, "solutions")):
            if s in changed:
                shutil.copytree(os.path.join(REPO, "solutions", s), os.path.join(sols, s))
            else:
                os.symlink(os.path.join(REPO, "solutions", s), os.path.join(sols, s))
        for f in shared:
            with open(os.path.normpath(os.path.join(sols, v.stage, f)), "w", encoding="utf-8") as out:
                out.write("".join(v.files[f]))
    else:
        # `#[path = "../../solutions/X/f.rs"]` from build/teeth/TREE/STAGE/.
        link = os.path.join(TEETH, "solutions")
        if not os.path.islink(link):
            os.symlink("../../solutions", link)
    v.root = root
    return root


# ---- building ---------------------------------------------------------------------
def shell_env():
    """KDIR, MODULES_DIR and the make arguments, from scripts/common.sh."""
    out = subprocess.run(
        ["bash", "-c", f'. "{REPO}/scripts/common.sh"; echo "$(current_kdir)"; echo "$MODULES_DIR"; kmake_args'],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    return out[0], out[1], out[2].split()


def build(v, kdir, modules_dir, kargs):
    root = write_tree(v)
    mo = os.path.join(modules_dir, v.tree)
    shutil.rmtree(mo, ignore_errors=True)
    os.makedirs(mo)
    r = subprocess.run(
        ["make", "-C", kdir, f"M={root}", f"MO={mo}", f"STAGE_DIR={v.stage}"] + kargs + ["modules"],
        capture_output=True, text=True,
    )
    v.built = r.returncode == 0
    if not v.built:
        said = [x for x in (r.stdout + r.stderr).splitlines()
                if not re.match(r"^make(\[\d+\])?: |^  [A-Z]+( \[M\])? ", x)]
        v.build_error = "\n".join(said)
    return v


# ---- running ----------------------------------------------------------------------
def run_vm(stage, trees, log, boot=0):
    """All trees in as few boots as possible, as make test boots them
    (rkw.boots: test.sh's run_boots). boot: the boots this stage had
    before (0: a fresh log). after-vm.sh checks the solution only (see the
    usage). Returns the number of boots after this."""
    if boot == 0:
        open(log, "w").close()
        # run_boots's records of the boots (test.sh reads them; here they
        # would only grow).
        for f in ("boots", "vm.seconds"):
            if os.path.exists(os.path.join(LOGS, f)):
                os.remove(os.path.join(LOGS, f))
    t0 = time.time()
    print(f"  booting for {', '.join(trees)}", flush=True)
    after = boots.run_stage(stage, trees, log, LOGS, boot, boot_id=stage, after_vm_trees="solutions")
    print(f"  {after - boot} boots, {time.time() - t0:.0f} s", flush=True)
    return after


# The host tests (tests/host) that test a stage's files: run on a variant
# that changes one of those files. Stages 06, 15, 27 and 32 have no other
# test; stage 12's after-vm.sh runs its prp tests (on the solution: see
# the usage); the others are core-only files whose rules the host tests check
# one by one (the VM test only samples them): 02's parameter checks, 04's
# register fields.
HOST_TESTS = {
    "27-9p-protocol": ("p9", None),
    "02-params": ("params_", {"config.rs"}),
    "04-pci-probe": ("nvme_", {"cap.rs"}),
    "06-nvme-rings": ("nvme_ring", None),
    "12-prp-lists": ("nvme_prp", {"prp.rs"}),
    "15-passthru-check": ("nvme_passthru", None),
    "32-9p-passwd": ("r9p_", None),
}


def host_test(stage, v, filter_="p9"):
    """tests/host's tests matching filter_ on the variant (or the solution),
    in a copy of the repository's layout, build/teeth/host/ws/ (host-test.sh
    takes steps|solutions only): tests/host, scripts/host-test.sh and a
    solutions/ of links but for the stage's folder, which is a copy of the
    tree under test. One place for every run, its files copied with fresh
    times: cargo's fingerprints (absolute paths, mtimes) then see each
    variant's change. Returns (pass, fail, failed names)."""
    root = os.path.join(TEETH, "host", "ws")
    # Synced on every run (times kept, so cargo rebuilds only what changed):
    # a workspace made once would go on testing an old tests/host.
    shutil.copytree(os.path.join(REPO, "tests", "host"), os.path.join(root, "tests", "host"),
                    ignore=shutil.ignore_patterns("target"), dirs_exist_ok=True)
    os.makedirs(os.path.join(root, "scripts"), exist_ok=True)
    shutil.copy2(os.path.join(REPO, "scripts", "host-test.sh"), os.path.join(root, "scripts"))
    sols = os.path.join(root, "solutions")
    os.makedirs(sols, exist_ok=True)
    for s in os.listdir(os.path.join(REPO, "solutions")):
        link = os.path.join(sols, s)
        if s == stage:
            if os.path.islink(link):
                os.remove(link)
            shutil.rmtree(link, ignore_errors=True)
            src = os.path.join(v.root, stage) if v is not None else os.path.join(REPO, "solutions", s)
            shutil.copytree(src, link, copy_function=shutil.copy)
        elif not os.path.islink(link):
            shutil.rmtree(link, ignore_errors=True)
            os.symlink(os.path.join(REPO, "solutions", s), link)
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(TEETH, "host", "target"))
    r = subprocess.run(["nice", "-n", "10", "bash", os.path.join(root, "scripts", "host-test.sh"),
                        "--tree", "solutions", "--filter", filter_], capture_output=True, text=True, env=env)
    out = r.stdout
    m = re.findall(r"^(\d+) passed, (\d+) failed", out, re.M)
    p, f = (int(m[-1][0]), int(m[-1][1])) if m else (0, 1)
    failed = [x[7:] for x in out.splitlines() if x.startswith("FAIL ")]
    with open(os.path.join(LOGS, f"{stage}.{v.tree if v else 'solutions'}.host.log"), "w") as lf:
        lf.write(out + r.stderr)
    return p, f, failed


# ---- the report -------------------------------------------------------------------
def verdict(v):
    if v.built is False:
        return "does not compile (a compile-time tooth)"
    if v.counts is None:
        return "not run"
    p, f, s, ended = v.counts
    if not ended and p + f == 0:
        return "did not run to the end, no results (VM timeout or crash): has teeth"
    if f == 0 and ended:
        return f"**NO TEETH** (passes all {p} checks{f', {s} skipped' if s else ''})"
    extra = "" if ended else ", the run did not finish"
    return f"{f} of {p + f} fail{extra}"


def update_report(path, stage, text):
    """Replace the stage's section of the report (under a lock: several runs
    may share the file)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _update_report(path, stage, text)


def _update_report(path, stage, text):
    old = open(path).read() if os.path.exists(path) else (
        "# Teeth report (issue 15, item 6)\n\n"
        "Generated by `scripts/teeth.py`: one section per stage, replaced on each run.\n"
        "Each variant is the solution with one piece of an exercise taken out; a variant\n"
        "that passes every check has NO TEETH.\n\n")
    begin, end = f"<!-- teeth {stage} -->", f"<!-- /teeth {stage} -->"
    block = f"{begin}\n{text}{end}\n"
    if begin in old:
        a = old.index(begin)
        b = old.index(end) + len(end) + 1
        new = old[:a] + block + old[b:]
    else:
        # Sections in stage order, before any non-stage text at the end.
        marks = [(m.start(), m.group(1)) for m in re.finditer(r"<!-- teeth (\S+) -->", old)]
        after = [pos for pos, s in marks if s > stage]
        if after:
            new = old[:after[0]] + block + "\n" + old[after[0]:]
        else:
            tail = re.search(r"\n## (Checks added|Notes|Actions)", old)
            at = tail.start() + 1 if tail else len(old)
            new = old[:at] + block + "\n" + old[at:]
    with open(path, "w") as f:
        f.write(new)


def old_rows(path, stage):
    """{variant id: table row} of the stage's section in the report."""
    if not os.path.exists(path):
        return {}
    text = open(path).read()
    begin, end = f"<!-- teeth {stage} -->", f"<!-- /teeth {stage} -->"
    if begin not in text:
        return {}
    rows = {}
    for line in text[text.index(begin): text.index(end)].splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) > 2 and re.match(r"e\d", cells[1]):
            rows[cells[1]] = line + "\n"
    return rows


def stage_report(stage, flavour, variants, base, seconds, note="", keep=None, order=()):
    out = [f"### {stage} ({flavour} kernel, {time.strftime('%Y-%m-%d %H:%M')}, "
           f"{seconds['build']:.0f} s build + {seconds['test']:.0f} s test)\n\n"]
    if base is not None:
        p, f, s, ended = base
        ok = ended and f == 0 and p > 0
        out.append(f"Baseline, the solution: {p} pass, {f} fail, {s} skip"
                   f"{'' if ended else ', did not finish'}{'' if ok else ' -- RESULTS SUSPECT'}.\n\n")
    if note:
        out.append(note + "\n\n")
    rows = dict(keep or {})
    for v in variants:
        what = v.what.replace("|", "\\|")
        rows[v.id] = f"| {v.exercise} | {v.id} | {what} | {verdict(v)} | |\n"
    ids = [i for i in order if i in rows] + [i for i in rows if i not in order]
    if keep:
        out.append(f"(Rows of {', '.join(v.id for v in variants)} from this run; the others from earlier runs.)\n\n")
    out.append("| exercise | variant | what is missing | failed checks | action |\n|---|---|---|---|---|\n")
    out.extend(rows[i] for i in ids)
    return "".join(out)


# ---- main -------------------------------------------------------------------------
def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("stages", nargs="+", metavar="STAGE")
    ap.add_argument("--lines", action="store_true")
    ap.add_argument("--max-lines", type=int, default=6)
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-vm", action="store_true")
    ap.add_argument("--report", default=os.path.join(REPO, "tests", "teeth", "report.md"))
    ap.add_argument("-j", type=int, default=2)
    args = ap.parse_args(argv)
    os.environ.setdefault("RKW_FLAVOUR", "fast")
    flavour = os.environ["RKW_FLAVOUR"]
    os.makedirs(LOGS, exist_ok=True)
    only = {x for x in args.only.split(",") if x}
    status = 0
    for arg in args.stages:
        try:
            stage = stages.resolve(arg)
        except LookupError as e:
            sys.exit(f"teeth: {e}")
        variants = variants_of(stage, args.lines or any("-l" in x for x in only), args.max_lines)
        order = [v.id for v in variants]
        if only:
            variants = [v for v in variants if v.id in only]
        print(f"== {stage}: {len(variants)} variants", flush=True)
        if args.list:
            for v in variants:
                print(f"  {v.tree}: {v.what}")
            continue
        t0 = time.time()
        # The report's section: one per stage and kernel flavour.
        key = stage if flavour == "fast" else f"{stage}@{flavour}"
        host = stages.setting(stage, "VM") == "no"
        kdir, modules_dir, kargs = shell_env()
        if not host:
            r = subprocess.run([os.path.join(REPO, "scripts", "build-stage.sh"), "solutions", stage],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout + r.stderr)
                sys.exit(f"teeth: solutions/{stage} does not build")
            # The modules the stage's test loads too (USES in its
            # stage.env: 34 and 35 load stage 20's rnvme), built by the
            # same function as scripts/test.sh's: without them every tree's
            # insmod fails and the results are suspect.
            r = subprocess.run(["bash", "-c", f'. "{REPO}/scripts/common.sh" && build_uses "$1" "$FLAVOUR"',
                                "build_uses", stage], capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout + r.stderr)
                sys.exit(f"teeth: a module the test of {stage} loads (USES) does not build")
        if host:
            for v in variants:
                write_tree(v)
                v.built = True
        else:
            with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
                list(pool.map(lambda v: build(v, kdir, modules_dir, kargs), variants))
        with open(os.path.join(LOGS, f"{stage}.build.log"), "w") as f:
            for v in variants:
                if not v.built:
                    f.write(f"=== {v.tree}: {v.what}\n{v.build_error}\n")
        for v in variants:
            print(f"  {v.tree}: {'builds' if v.built else 'DOES NOT COMPILE'}: {v.what}", flush=True)
        t_build = time.time() - t0
        base = None
        if not args.no_vm:
            t1 = time.time()
            runnable = [v for v in variants if v.built]
            if host:
                filt = HOST_TESTS.get(stage, ("p9", None))[0]
                p, f, failed = host_test(stage, None, filt)
                base = (p, f, 0, 1)
                for v in runnable:
                    p, f, failed = host_test(stage, v, filt)
                    v.counts, v.failed = (p, f, 0, 1), failed
                    if any("the host tests build" in x for x in failed):
                        v.built, v.counts = False, None  # a compile-time tooth
            else:
                log = os.path.join(LOGS, f"{stage}.vm.log")
                if stages.setting(stage, "TEETH_BOOTS") == "each":
                    # A variant that writes wrong data spoils the disk for
                    # the trees after it (stage 13 checks a pattern the host
                    # put in the image before the boot): a boot per tree.
                    n = run_vm(stage, ["solutions"], log)
                    for v in runnable:
                        n = run_vm(stage, [v.tree], log, n)
                else:
                    run_vm(stage, ["solutions"] + [v.tree for v in runnable], log)
                runs, _ = ktap.load(log)
                b = runs.get((stage, "solutions"), ktap.Run())
                base = b.counts() + (1 if b.ended else 0,)
                for v in runnable:
                    r = runs.get((stage, v.tree), ktap.Run())
                    v.counts = r.counts() + (1 if r.ended else 0,)
                    v.failed = [c.desc for c in r.checks if not c.ok]
                # Host tests of the files a variant changed, as more checks.
                filt, files = HOST_TESTS.get(stage, (None, None))
                for v in runnable:
                    if filt and files and files & set(v.files):
                        p, f, failed = host_test(stage, v, filt)
                        pp, ff, ss, ended = v.counts
                        v.counts = (pp + p, ff + f, ss, ended)
                        v.failed += [f"host test {x}" for x in failed] or ([] if f == 0 else ["host tests"])
            t_test = time.time() - t1
            with open(os.path.join(LOGS, f"{stage}.details"), "w") as f:
                for v in variants:
                    f.write(f"=== {v.tree}: {v.what}\n    {verdict(v)}\n")
                    for d in v.failed:
                        f.write(f"    x {d}\n")
            note = ""
            if os.path.exists(os.path.join(REPO, "tests", stage, "after-vm.sh")):
                note = "after-vm.sh (host-side checks) ran for the solution only."
            text = stage_report(stage, flavour, variants, base,
                                {"build": t_build, "test": t_test}, note,
                                old_rows(args.report, key) if only else None, order)
            update_report(args.report, key, text)
            print(text)
            if any(v.counts and v.counts[1] == 0 and v.counts[3] for v in variants):
                status = 1
    return status

