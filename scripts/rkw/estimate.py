"""estimate.py [--write | --check]: how long each stage takes a learner.

For every stage (tests/NN-name with steps/ and solutions/ folders):

  minutes = words / 200              reading the chapter's prose (book/src/
                                     NN-*.md without its code, its folded
                                     answers and its generated appendices)
          + code / 15                reading the code it shows: fenced
                                     lines and the lines its {{#include}}s
                                     bring in (anchors resolved), answers
                                     in <details> left out
          + 0.7 * lines              writing the exercises: the lines the
                                     solution adds to the skeleton (difflib
                                     over every .rs file both trees have;
                                     blank lines, comment-only lines and
                                     #[path] attributes left out)
          + 10 * exercises           debugging: an allowance per exercise
                                     (the TODO (exercise N) numbers)
          + 3 * check                three `make check` runs: check = 1 min
                                     for a host-only stage (VM=no), 5 for
                                     one with kmemleak (KMEMLEAK=yes) or a
                                     boot of its own (BOOT=own), else 2

rounded to the nearest 15 minutes (at least 15).

Calibration: 200 words and 15 lines of code a minute, and 0.7 minutes per
line written, are fitted to four reading walks a tester timed (issue 25:
reading, writing and checking, no debugging): old stage 12 (now 09 and 10)
3 h 30, old 10 (now 11 to 15) 5 h 30 to 6 h, 9p-server (then 15, now
20 to 22) 2 h 45 and 9p-hardening (then 16, now 23 to 25) 3 h. The fit is within
15 % on each. The debugging allowance is a guess until timed learner runs
give it.

Without options: prints the formula, each stage's inputs and its estimate.
--write: writes tests/estimates.txt ("NN-name minutes" lines), the
"time (est.)" column of README.md's stages table, the parts table of
book/src/teaching.md (each part's sum, and which stages are above a
sitting of 90 minutes), and
book/src/generated/NN-estimate.md, the line each chapter shows under its
title.
--check: exit status 1 if either of them is not what --write would write.
"""

import argparse
import difflib
import os
import re

from rkw import REPO, rust, stages

ROOT = REPO
WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 15
MINUTES_PER_LINE = 0.7
DEBUG_PER_EXERCISE = 10
CHECK_RUNS = 3
ROUND_TO = 15


def chapter(stage):
    prefix = stage.split("-")[0] + "-"
    book = os.path.join(ROOT, "book", "src")
    found = sorted(f for f in os.listdir(book) if f.startswith(prefix) and f.endswith(".md"))
    return os.path.join(book, found[0]) if found else None


INCLUDE = re.compile(r"\{\{#(?:include|rustdoc_include)\s+([^}\s]+)\s*\}\}")
EXERCISE = re.compile(r"TODO \(exercise (\d+)\)")


def included(md, spec):
    """The text `{{#include spec}}` brings into chapter `md`: a file, its
    anchor's lines, or a line range."""
    path, _, anchor = spec.partition(":")
    f = os.path.normpath(os.path.join(os.path.dirname(md), path))
    if not os.path.isfile(f):
        return ""
    lines = open(f, encoding="utf-8", errors="replace").read().split("\n")
    if anchor and not re.fullmatch(r"[\d:]*", anchor):
        out, on = [], False
        for line in lines:
            if re.search(r"ANCHOR_END:\s*" + re.escape(anchor) + r"\b", line):
                on = False
            elif re.search(r"ANCHOR:\s*" + re.escape(anchor) + r"\b", line):
                on = True
            elif on and "ANCHOR" not in line:
                out.append(line)
        return "\n".join(out)
    if anchor:
        a, _, b = anchor.partition(":")
        return "\n".join(lines[int(a or 1) - 1:int(b) if b else len(lines)])
    return "\n".join(line for line in lines if "ANCHOR" not in line)


def reading(path):
    """(prose words, code lines) a reader of the chapter goes through:
    folded answers and generated appendices left out, includes expanded."""
    if path is None:
        return 0, 0
    text = re.sub(r"<details>.*?</details>", "", open(path, encoding="utf-8").read(), flags=re.S)
    prose, code, fence = [], 0, False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            fence = not fence
            continue
        m = INCLUDE.search(line)
        if m:
            if not m.group(1).startswith("generated/"):
                code += sum(1 for x in included(path, m.group(1)).split("\n") if x.strip())
        elif fence:
            code += 1 if line.strip() else 0
        else:
            prose.append(line)
    return len(" ".join(prose).split()), code


def exercises(stage):
    """How many exercises the skeleton sets (its TODO (exercise N) numbers)."""
    found = set()
    for dirpath, _, names in os.walk(os.path.join(ROOT, "steps", stage)):
        for n in names:
            if n.endswith(".rs"):
                for _, _, comment in rust.parse(os.path.join(dirpath, n)).comments():
                    found |= set(EXERCISE.findall(comment))
    return len(found)


def rust_files(folder):
    found = set()
    for dirpath, _, names in os.walk(folder):
        for n in names:
            if n.endswith(".rs"):
                found.add(os.path.relpath(os.path.join(dirpath, n), folder))
    return found


def exercise_lines(stage):
    """Lines the solution adds to the skeleton: code lines only (not
    comments, nor `#[path]` attributes: which file a module comes from)."""
    steps = os.path.join(ROOT, "steps", stage)
    sol = os.path.join(ROOT, "solutions", stage)
    added = 0
    for f in sorted(rust_files(steps) & rust_files(sol)):
        with open(os.path.join(steps, f), encoding="utf-8") as a, open(os.path.join(sol, f), encoding="utf-8") as b:
            old, new = a.read().splitlines(), b.read().splitlines()
        facts = rust.parse(os.path.join(sol, f))
        skip = facts.comment_rows() | set(facts.path_attrs())
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                added += sum(1 for n in range(j1, j2) if new[n].strip() and n not in skip)
    return added


def check_minutes(stage):
    env = stages.env(stage)
    if env.get("VM") == "no":
        return 1
    if env.get("KMEMLEAK") == "yes" or env.get("BOOT") == "own":
        return 5
    return 2


def estimate(stage):
    w, code = reading(chapter(stage))
    lines = exercise_lines(stage)
    n = exercises(stage)
    check = check_minutes(stage)
    raw = (w / WORDS_PER_MINUTE + code / CODE_LINES_PER_MINUTE + MINUTES_PER_LINE * lines
           + DEBUG_PER_EXERCISE * n + CHECK_RUNS * check)
    minutes = max(ROUND_TO, int(raw / ROUND_TO + 0.5) * ROUND_TO)
    return {"words": w, "code": code, "lines": lines, "exercises": n, "check": check, "raw": raw,
            "minutes": minutes}


def human(minutes):
    """45 min, 1 h, 2 h 15 min."""
    if minutes < 60:
        return f"{minutes} min"
    h, m = divmod(minutes, 60)
    return f"{h} h" + (f" {m} min" if m else "")


def estimates_txt(table):
    head = [
        "# How long each stage takes a learner, in minutes: reading the chapter,",
        "# writing the exercises, three make check runs. Generated by",
        "# scripts/estimate.py --write, which prints the formula and its inputs.",
    ]
    return "\n".join(head + [f"{s} {e['minutes']}" for s, e in table]) + "\n"


def chapter_lines(table):
    """{path: text} of the estimate line each chapter includes."""
    out = {}
    for stage, e in table:
        n = stage.split("-")[0]
        out[os.path.join(ROOT, "book", "src", "generated", f"{n}-estimate.md")] = (
            f"*Time: about {human(e['minutes'])}, an estimate: reading this chapter, writing the"
            f" exercises' {e['lines']} lines, debugging them and a few `make check` runs"
            f" (`scripts/estimate.py` has the formula and how it was calibrated).*\n"
        )
    return out


def readme_with(text, table):
    """README.md's text with the stages table's "time (est.)" column set
    (added after the last column if it is not there yet)."""
    by_number = {s.split("-")[0]: e for s, e in table}
    lines = text.split("\n")
    if "## The stages" not in lines:
        raise SystemExit("estimate.py: README.md has no '## The stages' section")
    i = lines.index("## The stages") + 1
    while i < len(lines) and not lines[i].startswith("|"):
        i += 1
    column = "time (est.)"
    header = [c.strip() for c in lines[i].strip().strip("|").split("|")]
    have = header[-1] == column
    row = 0
    while i < len(lines) and lines[i].startswith("|"):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if row == 0:
            new = column
        elif row == 1:
            new = "---"
        else:
            e = by_number.get(cells[0])
            new = human(e["minutes"]) if e else ""
        if have:
            cells[-1] = new
        else:
            cells.append(new)
        lines[i] = "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"
        i += 1
        row += 1
    return "\n".join(lines)


TEACHING = os.path.join("book", "src", "teaching.md")
PARTS_BEGIN = "<!-- parts: scripts/estimate.py --write sums each row's stages, and lists the long ones -->"
PARTS_END = "<!-- end of parts -->"
SITTING = 90


def teaching_with(text, table):
    """teaching.md's text with its parts table (between the PARTS markers)
    given each row's estimate, the sum over the stages its "stages" cell
    names (NN-MM), and the sentence after it saying which stages are above
    a sitting (SITTING minutes)."""
    at, to = text.find(PARTS_BEGIN), text.find(PARTS_END)
    if at < 0 or to < at:
        raise SystemExit(f"estimate.py: {TEACHING} has no parts markers")
    minutes = {int(s.split("-")[0]): e["minutes"] for s, e in table}
    rows = [line for line in text[at + len(PARTS_BEGIN):to].split("\n") if line.startswith("|")]
    out = []
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"(\d+)-(\d+)", cells[1]) if len(cells) >= 3 else None
        if m:
            cells[2] = human(sum(v for n, v in minutes.items() if int(m.group(1)) <= n <= int(m.group(2))))
        out.append("| " + " | ".join(cells) + " |")
    long = [(s, e["minutes"]) for s, e in table if e["minutes"] > SITTING]
    if long:
        names = [f"{s.replace('-', ' ', 1)} ({human(m)})" for s, m in long]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        say = (f"By the estimate, {len(long)} stage{'s are' if len(long) > 1 else ' is'} above a sitting of"
               f" {SITTING} minutes: {listed}.")
    else:
        say = f"No stage is above {SITTING} minutes by the estimate: one stage, one sitting."
    part = PARTS_BEGIN + "\n" + "\n".join(out) + "\n\n" + say + "\n"
    return text[:at] + part + text[to:]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write tests/estimates.txt and README.md's column")
    mode.add_argument("--check", action="store_true", help="fail if they are stale")
    args = parser.parse_args(argv)

    table = [(s, estimate(s)) for s in stages.names(ROOT, ("tests", "steps", "solutions"))]
    txt_path = os.path.join(ROOT, "tests", "estimates.txt")
    readme_path = os.path.join(ROOT, "README.md")
    with open(readme_path, encoding="utf-8") as f:
        readme = f.read()
    want_txt, want_readme = estimates_txt(table), readme_with(readme, table)
    teaching_path = os.path.join(ROOT, TEACHING)
    with open(teaching_path, encoding="utf-8") as f:
        teaching = f.read()
    want_teaching = teaching_with(teaching, table)

    if args.check:
        stale = []
        current = open(txt_path, encoding="utf-8").read() if os.path.exists(txt_path) else ""
        if current != want_txt:
            stale.append("tests/estimates.txt")
        if readme != want_readme:
            stale.append("README.md's stages table")
        if teaching != want_teaching:
            stale.append(f"{TEACHING}'s parts")
        for path, text in chapter_lines(table).items():
            current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if current != text:
                stale.append(os.path.relpath(path, ROOT))
        if stale:
            print(f"estimate.py: {' and '.join(stale)} out of date: run scripts/estimate.py --write")
            return 1
        print(f"{len(table)} stages: tests/estimates.txt, README.md, the teaching page's parts and the"
              " chapters' estimates are up to date")
        return 0
    if args.write:
        with open(txt_path, "w", encoding="utf-8") as f:
            f.write(want_txt)
        if readme != want_readme:
            with open(readme_path, "w", encoding="utf-8") as f:
                f.write(want_readme)
        if teaching != want_teaching:
            with open(teaching_path, "w", encoding="utf-8") as f:
                f.write(want_teaching)
        for path, text in chapter_lines(table).items():
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        print(f"wrote tests/estimates.txt, README.md's stages table, the teaching page's parts and the chapters'"
              f" estimate lines ({len(table)} stages)")
        return 0

    print(
        f"minutes = words / {WORDS_PER_MINUTE} + code / {CODE_LINES_PER_MINUTE} (reading)"
        f" + {MINUTES_PER_LINE} x lines (writing) + {DEBUG_PER_EXERCISE} x exercises (debugging)"
        f" + {CHECK_RUNS} x check (1 host-only, 5 kmemleak or own boot, else 2),"
        f" rounded to the nearest {ROUND_TO} (at least {ROUND_TO})"
    )
    print(f"{'stage':<20} {'words':>6} {'code':>5} {'read':>5} {'lines':>5} {'write':>5} {'ex':>3}"
          f" {'check':>5} {'raw':>5}  estimate")
    total = 0
    for s, e in table:
        total += e["minutes"]
        read = e["words"] / WORDS_PER_MINUTE + e["code"] / CODE_LINES_PER_MINUTE
        print(
            f"{s:<20} {e['words']:>6} {e['code']:>5} {read:>5.0f} {e['lines']:>5}"
            f" {MINUTES_PER_LINE * e['lines']:>5.0f} {e['exercises']:>3} {CHECK_RUNS * e['check']:>5}"
            f" {e['raw']:>5.0f}  {e['minutes']:>4} min ({human(e['minutes'])})"
        )
    print(f"{'all stages':<20} {'':>6} {'':>5} {'':>5} {'':>5} {'':>5} {'':>3} {'':>5} {'':>5}  {total:>4} min ({human(total)})")
    return 0

