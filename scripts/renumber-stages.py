#!/usr/bin/env python3
"""For maintainers: make room for a new stage by moving every stage from
NN on one number up, everywhere the repository names a stage by number.

    scripts/renumber-stages.py --from 09 [--by 1] [--dry-run]
    scripts/renumber-stages.py --insert 90 --at 18 [--dry-run]

moves the folders and files named after the stages (solutions/NN-x,
steps/NN-x, tests/NN-x, book/src/NN-x.md, book/src/generated/NN-*,
book/src/transcripts/*-NN-*) with `git mv`, then rewrites, in every file
git tracks, what names a stage by its number:

- a stage's folder name, `NN-slug` (`09-blk-mq`), wherever it appears,
  and a chapter's title, `NN slug`;
- `stage NN`, `chapter NN`, `Stage NN`, `stages NN to MM`, `stages NN,
  MM and KK`, `stages NN-MM` (every number of the list);
- `STEP=NN`, `check-NN-`, `estimate NN`-style script arguments are left
  to the list this prints at the end.

One pass with a mapping function, so 09 -> 10 and 10 -> 11 never collide.
What it cannot know (bare numbers in scripts, "the last NVMe stage" in
prose) it lists afterwards: `grep` the printed patterns and fix by hand.
The new stage's own folder is yours to create after it.

`--insert 90 --at 18` is for a stage written under a temporary number
above the others (a split written beside the stage it splits, so that
nothing moves while it is written): it becomes stage 18, and 18 up to 89
move one number up, in the same single pass.
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A space between words, also where a line wraps: the break and the next
# line's indentation and comment leader (`#`, `//`, `///`, `//!`, `*`), so
# that "stages 16 to\n# 19" is one list.
SP = r"(?:[ \t]+|[ \t]*\n[ \t]*(?:(?://[/!]?|#|\*)[ \t]*)?)"
# Words after which a number (or a list of numbers) names stages.
WORDS = r"(?:(?:[Ss]tages?|[Cc]hapters?|[Ss]teps?)" + SP + r"|stage-|STEP=|check-|run-|--check |generated/)"
# What joins the numbers of a list: "14, 15 and 16", "14 to 16", "14-16".
JOIN = r"(?:," + SP + r"|" + SP + r"(?:and|to|or)" + SP + r"|-|–)"


def stages():
    """{number: slug} of the stages that exist."""
    out = {}
    for name in os.listdir(os.path.join(ROOT, "solutions")):
        m = re.fullmatch(r"(\d\d)-([a-z0-9-]+)", name)
        if m:
            out[int(m.group(1))] = m.group(2)
    return out


def tracked():
    r = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [p for p in r.stdout.decode().split("\0") if p]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="start", help="first stage to move (NN)")
    ap.add_argument("--insert", help="a stage under a temporary number (NN) to move to --at")
    ap.add_argument("--at", help="the number the --insert stage takes (MM); MM and up move one up")
    ap.add_argument("--by", type=int, default=1,
                    help="how many numbers up (default 1; negative: down, into numbers left free)")
    ap.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    args = ap.parse_args()
    known = stages()
    if args.insert is not None:
        if args.start is not None or args.at is None:
            sys.exit("--insert NN takes --at MM and no --from")
        temp, at = int(args.insert), int(args.at)
        if temp not in known or at not in known or at >= temp:
            sys.exit(f"--insert {temp:02d} --at {at:02d}: both must be stages, {at:02d} the lower")

        def new(n):
            if n == temp:
                return at
            return n + 1 if at <= n < temp else n

        by = 1
    else:
        if args.start is None:
            sys.exit("say --from NN, or --insert NN --at MM")
        start, by = int(args.start), args.by
        if start not in known:
            sys.exit(f"no stage {start:02d} in solutions/")
        last = max(known)

        def new(n):
            return n + by if start <= n <= last else n

    slugs = "|".join(sorted((re.escape(s) for s in known.values()), key=len, reverse=True))
    # "09-blk-mq" (a folder) and "09 blk-mq" (a chapter's title).
    folder = re.compile(r"\b(\d\d)([- ])(" + slugs + r")\b")
    # A list of stage numbers after a word that names stages: "stages 08 to
    # 10", "stage 09's", "stages 04, 05, 06 and 07", "stages 14-16".
    # The list may wrap onto the next line (SP, JOIN).
    numlist = re.compile(r"(" + WORDS + r")(\d\d(?:" + JOIN + r"\d\d)*)\b")

    def fix_folder(m):
        n = int(m.group(1))
        if known.get(n) != m.group(3):
            return m.group(0)
        return f"{new(n):02d}{m.group(2)}{m.group(3)}"

    def fix_list(m):
        nums = re.sub(r"\d\d", lambda d: f"{new(int(d.group(0))):02d}", m.group(2))
        return m.group(1) + nums

    changed = []
    for path in tracked():
        full = os.path.join(ROOT, path)
        # Not itself, and not the kernel's config fragments: their bytes are
        # the cached kernels' key (scripts/common.sh), and a comment that
        # names a stage is not worth two kernel builds on every machine.
        if os.path.islink(full) or not os.path.isfile(full) or path == "scripts/renumber-stages.py" \
                or path.startswith("kernel/"):
            continue
        try:
            text = open(full, encoding="utf-8").read()
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        out = numlist.sub(fix_list, folder.sub(fix_folder, text))
        if out != text:
            changed.append(path)
            if not args.dry_run:
                with open(full, "w", encoding="utf-8") as f:
                    f.write(out)

    # The files and folders named after stages, highest first so that a
    # move never lands on a name still in use.
    moves = []
    names = set()
    for path in tracked():
        bits = path.split("/")
        for i, b in enumerate(bits):
            m = re.fullmatch(r"(\d\d)-(" + slugs + r")(\.md)?", b)
            if m and known.get(int(m.group(1))) == m.group(2):
                names.add("/".join(bits[: i + 1]))
                break
            m = re.fullmatch(r"(\d\d)-(changes|estimate|unsafe)\.md", b)
            if m and bits[i - 1] == "generated":
                names.add("/".join(bits[: i + 1]))
                break
            m = re.fullmatch(r"(check|build|run)-(\d\d)(-.*)", b)
            if m and bits[i - 1] == "transcripts":
                names.add("/".join(bits[: i + 1]))
                break

    def renamed(p):
        head, base = os.path.split(p)
        m = re.fullmatch(r"(\d\d)(-.*)", base)
        if m:
            return os.path.join(head, f"{new(int(m.group(1))):02d}{m.group(2)}")
        m = re.fullmatch(r"(check|build|run)-(\d\d)(-.*)", base)
        return os.path.join(head, f"{m.group(1)}-{new(int(m.group(2))):02d}{m.group(3)}")

    def number(p):
        base = os.path.basename(p)
        return int(re.search(r"\d\d", base).group(0))

    # Moving up, the highest first; down, the lowest first: a move never
    # lands on a name still in use. An inserted stage moves down last, into
    # the number the others have just left.
    def order(p):
        n = number(p)
        return (new(n) < n, -n if by > 0 else n)

    for p in sorted(names, key=order):
        q = renamed(p)
        if q != p:
            moves.append((p, q))
    # An inserted stage first steps aside (its number may be the one the
    # stage below it moves up into), then lands after the others moved.
    parked = []
    for i, (p, q) in enumerate(moves):
        if number(q) < number(p) and by > 0:
            aside = p + ".renumbering"
            moves[i] = (aside, q)
            parked.append((p, aside))
    for p, q in parked + moves:
        print(f"git mv {p} {q}")
        if not args.dry_run:
            subprocess.run(["git", "mv", p, q], cwd=ROOT, check=True)
    print(f"{len(changed)} files rewritten, {len(moves)} moved", file=sys.stderr)
    print(
        "now look for what names a stage without these words, e.g.:\n"
        "  git grep -nE '\\b(for (n|s) in|BESIDE_ANSWERS|STAGES)\\b'\n"
        "  git grep -nE '\\b[0-9]{2}(-| to )[0-9]{2}\\b' -- book scripts tests Makefile README.md",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
