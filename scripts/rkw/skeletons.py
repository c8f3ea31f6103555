"""check-skeletons.py [--root DIR] [STAGE...]: the skeletons in steps/ may
differ from the solutions in solutions/ only in their exercises, and no Rust
file in either tree is a byte copy of another.

For every stage folder in both trees (or the stages named: 01, 1 or
01-hello), the two folders hold the same files; files other than Rust
sources are identical, and every difference between steps/X/f.rs and
solutions/X/f.rs (a difflib change block) is part of an exercise:

  (a) its steps side has a `// TODO` comment, or
  (b) it lies inside a `fn` or `impl` item (the innermost one around it,
      signature to closing brace) whose steps-side text has a `// TODO`, or
  (c) it only touches `//!` module-doc lines (the skeletons add "Check your
      work with ..." lines), or only lines of `use` declarations (a skeleton
      may drop an import that its exercise will need), or
  (d) it only adds `#[path = "../../solutions/X/f.rs"]` attributes, or
      turns other `#[path]` attributes into such ones: the skeleton includes
      a file of its own stage's solution that has no exercise, instead of a
      copy of it. Such a file need not exist in steps/X/ at all.

But a skeleton should not include a file that sits beside the answers to its
own exercises (one click from them): given files live in solutions/lib/ or
in the exercise file that uses them. Every `#[path]` of steps/X/ into
solutions/X/ is reported as `steps/X/f:LINE: includes solutions/X/g, beside
its answers` (exit status 1), but for the few listed in BESIDE_ANSWERS,
which the 9P track still has (each to go; the list only shrinks).

Anything else is drift: reported as `steps/X/f:LINE: differs from solutions
outside an exercise` with the lines around it; exit status 1. Exit status 2
for a stage that is not in both trees.

No Rust file is a byte copy of another: a stage includes a file it does not
change from the earliest solution that has it (`#[path]` on its `mod` line),
in steps/ and solutions/ alike, and a skeleton includes its own solution's
files that have no exercise. Of the `.rs` files under steps/ and solutions/
(subfolders too) with the same bytes, the first in stage order (solutions/
before steps/) is the original; every other one in the stages checked is
reported as `TREE/X/f:1: a byte copy of solutions/Y/f.rs` (exit status 1),
but for a skeleton's copy of its own stage's module-tree root (`nvme.rs`: only
`#[path]` and `mod` lines), whose paths to the exercise files must resolve
next to the skeleton's files.

And the solutions repeat themselves less and less: when every stage is
checked, the pairs of places in solutions/ that share a run of 6 or more
identical lines (`shared_runs`: blank, comment, punctuation-only, `use` and
`mod` lines left out, as they are boilerplate, and so are the lines every
PCI driver's crate root has, DRIVER_SHAPE: its table, driver type, `probe`
and `unbind` signatures and module macro) may be at most
SHARED_RUNS_ALLOWED. A change that adds one fails; one that removes some
lowers the number in the same commit, so it only goes down.
"""

import difflib
import os
import re

from rkw import rust, stages

CONTEXT = 2  # lines of context around a reported difference

# The skeleton files still included from beside their stage's answers.
# A check, not a wish: the list only shrinks (it is empty: keep it so).
BESIDE_ANSWERS: set[tuple[str, str]] = set()

# A `#[path]` to a file of a stage's solution: (stage, file).
SOLUTION_FILE = re.compile(r"^\.\./\.\./solutions/([^/]+)/(.+)$")


def parsed(lines):
    """The parsed Rust source of a file's lines (rust.py's facts)."""
    return rust.of("".join(lines))


def items(lines):
    """(first, last, kind) of every `fn` item with a body and `impl` item:
    from its signature's first line to its closing brace."""
    return parsed(lines).items()


def use_lines(lines):
    """The indices of the lines of `use` declarations."""
    return parsed(lines).use_rows()


def todo_lines(lines):
    """{index: exercise number or None} of the lines with a `TODO` comment."""
    return {row: n for row, n, _ in parsed(lines).todos()}


def exercise(i1, i2, j1, j2, sol, step, step_items, sol_uses, step_uses):
    """Why this change block is part of an exercise, or None."""
    changed = sol[i1:i2] + step[j1:j2]
    todos = todo_lines(step)
    if any(n in todos for n in range(j1, j2)):
        return "TODO"
    # The innermost fn or impl item around the change, on the steps side. A
    # pure deletion sits between lines j1 - 1 and j1.
    lo, hi = (j1, j2 - 1) if j2 > j1 else (j1 - 1, j1)
    around = [it for it in step_items if it[0] <= lo and hi <= it[1]]
    if around:
        first, last, _ = max(around, key=lambda it: (it[0], -it[1]))
        if any(n in todos for n in range(first, last + 1)):
            return "in an item with a TODO"
    if all(line.lstrip().startswith("//!") for line in changed):
        return "module doc"
    if all(n in sol_uses for n in range(i1, i2)) and all(n in step_uses for n in range(j1, j2)):
        return "imports"
    step_paths, sol_paths = parsed(step).path_attrs(), parsed(sol).path_attrs()
    if (j1 < j2 and all(SOLUTION_FILE.match(step_paths.get(n, "")) for n in range(j1, j2))
            and all(n in sol_paths for n in range(i1, i2))):
        return "reuses a solution file"
    return None


def render(ops, first, last, sol, step):
    """A unified diff of change blocks ops[first..last] (with what lies
    between them), with CONTEXT lines of context where those are equal."""
    i_lo, j_lo = ops[first][1], ops[first][3]
    i_hi, j_hi = ops[last][2], ops[last][4]
    if first > 0 and ops[first - 1][0] == "equal":
        before = min(CONTEXT, i_lo - ops[first - 1][1])
        i_lo, j_lo = i_lo - before, j_lo - before
    if last + 1 < len(ops) and ops[last + 1][0] == "equal":
        after = min(CONTEXT, ops[last + 1][2] - i_hi)
        i_hi, j_hi = i_hi + after, j_hi + after
    out = [f"@@ -{i_lo + 1},{i_hi - i_lo} +{j_lo + 1},{j_hi - j_lo} @@"]
    for tag, i1, i2, j1, j2 in ops:
        a1, a2 = max(i1, i_lo), min(i2, i_hi)
        b1, b2 = max(j1, j_lo), min(j2, j_hi)
        if tag == "equal":
            out += [" " + line.rstrip("\n") for line in sol[a1:a2]]
        else:
            if i1 >= i_lo and i2 <= i_hi:
                out += ["-" + line.rstrip("\n") for line in sol[i1:i2]]
            if j1 >= j_lo and j2 <= j_hi:
                out += ["+" + line.rstrip("\n") for line in step[j1:j2]]
    return out


def check_rust(name, sol, step):
    """(exercise change blocks, [drift reports]) of one Rust file."""
    ops = difflib.SequenceMatcher(None, sol, step, autojunk=False).get_opcodes()
    step_items = items(step)
    sol_uses, step_uses = use_lines(sol), use_lines(step)
    changes, drift = 0, []
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        changes += 1
        if exercise(i1, i2, j1, j2, sol, step, step_items, sol_uses, step_uses) is None:
            drift.append(k)
    # One report per group of nearby drifting blocks.
    reports, g = [], 0
    while g < len(drift):
        first = last = drift[g]
        g += 1
        while g < len(drift) and ops[drift[g]][3] - ops[last][4] <= 2 * CONTEXT:
            last = drift[g]
            g += 1
        line = min(ops[first][3] + 1, max(len(step), 1))
        reports.append([f"{name}:{line}: differs from solutions outside an exercise"] + render(ops, first, last, sol, step))
    return changes - len(drift), reports


def files(folder):
    found = set()
    for dirpath, _, names in os.walk(folder):
        for n in names:
            found.add(os.path.relpath(os.path.join(dirpath, n), folder))
    return found


def check_stage(root, stage):
    """(files, exercise change blocks, [drift reports]) of one stage."""
    steps_dir = os.path.join(root, "steps", stage)
    sol_dir = os.path.join(root, "solutions", stage)
    steps_files, sol_files = files(steps_dir), files(sol_dir)
    reports = []
    # Solution files the skeleton includes by #[path] instead of copying.
    reused = set()
    for f in sorted(steps_files):
        if f.endswith(".rs"):
            for row, path in sorted(rust.parse(os.path.join(steps_dir, f)).path_attrs().items()):
                m = SOLUTION_FILE.match(path)
                if m and m.group(1) == stage:
                    reused.add(m.group(2))
                    if (stage, m.group(2)) not in BESIDE_ANSWERS:
                        reports.append([
                            f"steps/{stage}/{f}:{row + 1}: includes solutions/{stage}/{m.group(2)}, beside its answers:"
                            " move the given file to solutions/lib/ or into the exercise file that uses it"
                        ])
    for f in sorted(sol_files - steps_files - reused):
        reports.append([f"steps/{stage}/{f}:1: missing (solutions/{stage}/{f} has it)"])
    for f in sorted(steps_files - sol_files):
        reports.append([f"steps/{stage}/{f}:1: not in solutions/{stage}/"])
    exercises = 0
    for f in sorted(steps_files & sol_files):
        name = f"steps/{stage}/{f}"
        with open(os.path.join(sol_dir, f), "rb") as s, open(os.path.join(steps_dir, f), "rb") as t:
            sol_bytes, step_bytes = s.read(), t.read()
        if sol_bytes == step_bytes:
            continue
        sol = sol_bytes.decode("utf-8", "replace").splitlines(keepends=True)
        step = step_bytes.decode("utf-8", "replace").splitlines(keepends=True)
        if f.endswith(".rs"):
            n, drift = check_rust(name, sol, step)
            exercises += n
            reports += drift
        else:
            diff = list(difflib.unified_diff(sol, step, n=CONTEXT, lineterm=""))[2:]
            line = next((j + 1 for j, (a, b) in enumerate(zip(sol, step)) if a != b), min(len(sol), len(step)) + 1)
            reports.append([f"{name}:{line}: differs from solutions (only Rust files may have exercises)"] + [d.rstrip("\n") for d in diff])
    return len(steps_files | sol_files), exercises, reports


def copies(root, stages):
    """[reports] of the `.rs` files in `stages` (of either tree) that are byte
    copies of an earlier file in steps/ or solutions/."""
    def order(path):
        tree, stage = path.split(os.sep)[:2]
        number = stage.split("-")[0]
        return (int(number) if number.isdigit() else 0, stage, tree != "solutions", path)

    by_bytes = {}
    for tree in ("solutions", "steps"):
        for stage in os.listdir(os.path.join(root, tree)):
            folder = os.path.join(tree, stage)
            if not os.path.isdir(os.path.join(root, folder)):
                continue
            for f in files(os.path.join(root, folder)):
                if f.endswith(".rs"):
                    path = os.path.join(folder, f)
                    with open(os.path.join(root, path), "rb") as t:
                        by_bytes.setdefault(t.read(), []).append(path)
    found = []
    for text, same in by_bytes.items():
        original, *others = sorted(same, key=order)
        found += [
            (path, original)
            for path in others
            if path.split(os.sep)[1] in stages and not tree_root_of_its_stage(text, path, original)
        ]
    return [
        [f"{path}:1: a byte copy of {original}: include that file with #[path] instead"]
        for path, original in sorted(found, key=lambda pair: order(pair[0]))
    ]


MOD_ONLY = re.compile(r'^\s*(?://.*|#!?\[[^\]]*\]|(?:pub(?:\([^)]*\))?\s+)?mod \w+;)?\s*$')


def tree_root_of_its_stage(text, path, original):
    """Whether `path` (in steps/) is its stage's copy of a module-tree root
    such as `nvme.rs` that only lists files (`#[path]` and `mod` lines): the
    skeleton needs its own, since the paths in it that name the stage's
    exercise files resolve next to the root."""
    same_place = path.split(os.sep)[1:] == original.split(os.sep)[1:]
    lines = text.decode("utf-8", "replace").splitlines()
    return same_place and all(MOD_ONLY.match(line) for line in lines)


# The pairs of places of solutions/ sharing 6 or more identical lines, at
# most (a ratchet: lower it when a change removes some). 8 on 2026-12-05,
# after the NVMe track became one library: the 9P track's copies (11 vs 13,
# 13 vs 15 vs 16, 15 vs 16: issue 25 splits those stages) and passthru.rs's
# two views of one ioctl structure (the C layout, and the checked command).
# 9 after stage 16 of the time was split into 11-13 (issue 25): the roots of
# 12 and 13 end alike (the driver data's last initialisers, the call to
# `removal::unbind`, the lingering module's field), 13 being 12 plus zero
# copy; what they share otherwise is in stage files or the driver's shape.
# Still 5 with stage 20 (the disk a user sees, stage 19 plus limits): the
# production roots' common tail became driver shape (18 vs 19 gone), and
# 19 vs 21 share the probe that makes the disk and spreads the interrupts.
SHARED_RUNS_ALLOWED = 5
SHARED_RUN = 6
BORING = re.compile(
    r"^(?:[\s{}()\[\];,.]*|//.*|#\[path = .*|#\[allow\(\w+\)\]|#\[pin(?:_data)?\]"
    r"|(?:pub(?:\([^)]*\))?\s+)?mod \w+;)$"
)
# The shape every PCI driver's crate root has (the table, the driver type,
# `probe`'s and `unbind`'s signatures): crate-root boilerplate, like `use`.
DRIVER_SHAPE = re.compile(
    r"^(?:kernel::pci_device_table!\(|PCI_TABLE,|<\w+ as pci::Driver>::IdInfo,"
    r"|\[\(pci::DeviceId::from_id\(.*\)\]|struct \w+Driver;|impl pci::Driver for \w+ \{"
    r"|type IdInfo = .*;|type Data<'b> = .*;|const ID_TABLE: .*;|fn probe<'b>\("
    r"|pdev: &'b pci::Device<Core<'_>>,|_info: Option<&'b \(\)>,"
    r"|\) -> impl PinInit<\w+<'b>, Error> \+ 'b \{|fn unbind<'b>\(.*\) \{"
    # The module macro: its type, name, authors, description, license and
    # parameters' declarations (each stage declares its own).
    r"|kernel::(?:prelude::)?module(?:_pci_driver)?! \{|type: \w+,|name: \"\w+\",|authors: \[.*\],"
    r"|description: \".*\",|license: \"GPL\",|params: \{|\w+: u32 \{|default: \d+,"
    # The NVMe driver's own shape, in every root from stage 09 on: its two
    # promises stay in `probe` by design (the DMA mask and the handlers;
    # chapter 10), after `map` and before `Controller::new`; the driver
    # data's common fields, and their initialisers.
    r"|pin_init::pin_init_scope\(move \|\| \{|let \(bar, cap\) = map\(pdev\)\?;"
    r"|unsafe \{ pdev\.dma_set_mask_and_coherent\(DmaMask::new::<64>\(\)\)\? \};"
    r"|let ctrl = Controller::new\(pdev, bar, cap\)\?;"
    r"|let mut irqs =|(?:let mut irqs = )?unsafe \{ Interrupts::new\(pdev, .*\) \}\?;"
    r"|let \(id, io\) = io_queues::start\(.*\)\?;|Ok\(try_pin_init!\(RNvme \{"
    r"|pdev: &'b pci::Device,|ctrl: Controller,|id: IdCtrl,|io: KVec<IoQueue<\w+>>,"
    r"|_irqs: Interrupts<'b, \w+>,|pdev,|ctrl,|io,|id,|_irqs: irqs,"
    # A module written out (`InPlaceModule`) instead of `module_pci_driver!`.
    r"|struct \w+Module \{|driver: kernel::driver::Registration<pci::Adapter<\w+>>,"
    r"|impl kernel::InPlaceModule for \w+ \{"
    r"|fn init\(module: &'static kernel::ThisModule\) -> impl PinInit<Self, Error> \{|try_pin_init!\(Self \{"
    r"|driver <- kernel::driver::Registration::new\(<Self as kernel::ModuleMetadata>::NAME, module\),"
    r"|dev_info!\(this\.pdev, \"unbinding \{\}\\n\", ascii\(&this\.id\.mn\)\);"
    # The production driver's shape (stages 18 on): the driver data's
    # watchdog, disk and nodes, and their initialisers; `unbind` through the
    # watchdog and stage 18's removal; the module's lingering disks.
    r"|let number = disk\.number\(\);|watchdog,|disk <- new_mutex!\(Some\(disk\), \"rnvme_disk\"\),"
    r"|nodes <- Nodes::new\(passthrough, number\)\?,"
    r"|watchdog::unbind\(pdev, &this\.ctrl, &this\.watchdog, &this\.io, \|\| \{"
    r"|removal::delete_disk\(this\.pdev\.as_ref\(\), &this\.disk\)"
    r"|lingering: Lingering,|lingering: Lingering::new\(c\"rnvme_lingering\"\)\?,)$"
)
USE_START = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?use\s")


def code_lines(text):
    """(line number, text) of the lines that count for `shared_runs`."""
    out, in_use = [], False
    for n, raw in enumerate(text.splitlines(), 1):
        line = " ".join(raw.split())
        if in_use:
            in_use = not line.endswith(";")
            continue
        if USE_START.match(line):
            in_use = not line.endswith(";")
            continue
        if not BORING.match(line) and not DRIVER_SHAPE.match(line):
            out.append((n, line))
    return out


def shared_runs(root):
    """{(file a, file b): (line in a, line in b)}: the pairs of places in
    solutions/ (two files, or two places of one) that share a run of
    SHARED_RUN identical lines; runs found in more than 8 places are a
    pattern, not a copy, and are left out."""
    windows = {}
    base = os.path.join(root, "solutions")
    for folder, _, names in sorted(os.walk(base)):
        for name in sorted(names):
            if not name.endswith(".rs"):
                continue
            path = os.path.relpath(os.path.join(folder, name), root)
            with open(os.path.join(root, path), encoding="utf-8") as f:
                lines = code_lines(f.read())
            for i in range(len(lines) - SHARED_RUN + 1):
                key = "\n".join(t for _, t in lines[i : i + SHARED_RUN])
                windows.setdefault(key, []).append((path, lines[i][0]))
    pairs = {}
    for places in windows.values():
        if not 2 <= len(places) <= 8:
            continue
        for i, (fa, la) in enumerate(places):
            for fb, lb in places[i + 1 :]:
                if fa == fb and abs(la - lb) < SHARED_RUN:
                    continue
                pairs.setdefault((fa, fb) if fa <= fb else (fb, fa), (la, lb) if fa <= fb else (lb, la))
    return pairs


def main(argv):
    args, names = stages.from_args("check-skeletons", __doc__, argv)
    drift = 0
    for stage in names:
        nfiles, exercises, reports = check_stage(args.root, stage)
        for report in reports:
            print("\n".join(report))
        if reports:
            print(f"{stage}: {len(reports)} difference(s) outside an exercise")
        else:
            print(f"{stage}: {nfiles} files, {exercises} differences, all in exercises")
        drift += len(reports)
    copied = copies(args.root, names)
    for report in copied:
        print("\n".join(report))
    problems = []
    if not args.stages:
        shared = shared_runs(args.root)
        if len(shared) > SHARED_RUNS_ALLOWED:
            for (fa, fb), (la, lb) in sorted(shared.items()):
                print(f"{fa}:{la} ~ {fb}:{lb}: {SHARED_RUN} or more lines the same")
            problems.append(
                f"{len(shared)} pairs of places in solutions/ share {SHARED_RUN} or more lines"
                f" (at most {SHARED_RUNS_ALLOWED}: include the shared code from one place)"
            )
        else:
            print(f"solutions/: {len(shared)} pairs of places share {SHARED_RUN} or more lines (at most {SHARED_RUNS_ALLOWED})")
    if drift:
        problems.append(f"{drift} difference(s) outside an exercise")
    if copied:
        problems.append(f"{len(copied)} byte cop{'y' if len(copied) == 1 else 'ies'} of another file")
    if problems:
        print(f"{len(names)} stages, {', '.join(problems)}")
        return 1
    print(f"{len(names)} stages, no drift, no copies")
    return 0

