"""Every kernel log line a stage's test requires is one the learner can know.

A check like

    expect_dmesg "rnvme logs the status" "^rnvme: queue [0-9]+ tag [0-9]+: 0x02 at block $NSZE failed: Target \\(SCT 0, SC 0x80\\)"

fails a correct driver that words its message differently. So each literal
piece of such a pattern (the text between its regex operators and shell
variables, 6 characters or more) must be found in what the learner has in
front of them:

- the stage's skeleton, steps/NN-name/, with every file it includes by
  `#[path]` (the code that prints the line, if it is given; a TODO comment
  that states it, if the exercise prints it), or
- its chapter, book/src/NN-name.md, with the transcripts it includes (the
  prose, not the folded answers or generated diffs, which show the
  solution's code).

In the skeleton, a format string's `{..}` stands for anything: the piece
"more Identify commands completed" is found in "{} more Identify commands
completed", and a piece is also found in a line of the skeleton or the
chapter that has its words in order (numbers, which a format's arguments
give, and the module's `pr_fmt` prefix aside). A piece that only the solution's code prints, with no TODO or
chapter line quoting it, is reported: quote it where the exercise is set.

Patterns of lines the kernel itself prints (not the module) are found the
same way: the chapter says what the kernel prints.

Usage: scripts/check-log-lines.py [--root DIR] [STAGE...]
"""

import os
import re
import sys

from rkw import stages as stage_reader
from rkw import modgraph as _modules

EXPECT = re.compile(r"\b(?:expect_dmesg|wait_dmesg)\s")
MIN_PIECE = 6

INCLUDE = re.compile(r"\{\{#include\s+([^}:\s]+)(?::[^}]*)?\}\}")


def shell_words(text):
    """The words of a shell command line (quotes, escapes, continuations),
    with "$VAR"/"${VAR}" kept as written: enough for our test scripts."""
    words, cur, i, q, have = [], "", 0, None, False
    while i < len(text):
        c = text[i]
        if q:
            if c == q:
                q = None
            elif c == "\\" and q == '"' and i + 1 < len(text) and text[i + 1] in '"\\$`':
                cur += text[i + 1]
                i += 1
            else:
                cur += c
        elif c in "\"'":
            q, have = c, True
        elif c == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                cur += text[i + 1]
                have = True
            i += 1
        elif c in " \t\n":
            if cur or have:
                words.append(cur)
            cur, have = "", False
        elif c in ";|&#" and not cur and not have:
            break
        else:
            cur += c
            have = True
        i += 1
    if cur or have:
        words.append(cur)
    return words


def patterns(test):
    """(line, pattern) of every log pattern the test script requires."""
    lines = open(test, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        start = i
        m = EXPECT.search(line)
        if m and not line.lstrip().startswith("#") and "() {" not in line:
            text = line[m.start():]
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i]
            words = shell_words(text)
            if len(words) >= 3:
                out.append((start + 1, words[2]))
        i += 1
    return out


def pieces(pattern):
    """The literal runs of an extended regex with shell variables in it."""
    p = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$\(\(.*?\)\)|\$\(.*?\)(?=[^)]*$)", "\0", pattern)
    out, cur, i = [], "", 0
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            cur += p[i + 1]
            i += 2
            continue
        if c == "[":
            j = p.find("]", i + 2)
            i = j + 1 if j > 0 else len(p)
            out.append(cur)
            cur = ""
            continue
        if c in "\0.^$()|":
            out.append(cur)
            cur = ""
        elif c in "*+?{":
            # The atom before it is optional or repeated: not literal.
            out.append(cur[:-1])
            cur = ""
            if c == "{":
                j = p.find("}", i)
                i = j if j > 0 else i
        else:
            cur += c
        i += 1
    out.append(cur)
    # ": " after a device name (`dev_info!`'s prefix) belongs to no message.
    out = [re.sub(r"^:\s*", "", x.strip()) for x in out]
    return [x for x in out if len(x) >= MIN_PIECE]


def words(text):
    """The words of a piece that a message's code or its description must
    have: numbers and the module's `pr_fmt` prefix may come from a
    format's arguments."""
    return [w for w in re.findall(r"[A-Za-z][A-Za-z_'-]+", text)]


def in_order(ws, line):
    """Whether `line` holds the words `ws`, in that order."""
    at = 0
    for w in ws:
        m = re.search(r"(?<![A-Za-z])" + re.escape(w) + r"(?![A-Za-z])", line[at:])
        if not m:
            return False
        at += m.end()
    return True


def skeleton_text(root, stage):
    """The text of the files steps/STAGE's modules compile (their own, and
    every file they include by `#[path]`: check-modules.py's module tree),
    with format placeholders `{..}` turned into a separator."""
    files = set()
    for crate_root in _modules.crate_roots(root, "steps", stage):
        files |= set(_modules.modules(crate_root).values())
    texts = [open(f, encoding="utf-8").read() for f in sorted(files)]
    text = "\n".join(texts)
    # Rust escapes in string literals, and a line continued with "\".
    text = re.sub(r"\\\n\s*", "", text).replace('\\"', '"').replace("\\n", "\n")
    return re.sub(r"\{[^{}\s]*\}", "\0", text)


def chapter_text(root, stage):
    """The chapter's prose and the transcripts it includes: not the code
    it includes (answers, generated diffs)."""
    md = os.path.join(root, "book", "src", stage + ".md")
    if not os.path.isfile(md):
        return ""
    t = open(md, encoding="utf-8").read()
    parts = [t]
    for m in INCLUDE.finditer(t):
        inc = os.path.normpath(os.path.join(os.path.dirname(md), m.group(1)))
        if "/transcripts/" in inc and os.path.isfile(inc):
            parts.append(open(inc, encoding="utf-8").read())
    return "\n".join(parts)


def main(argv):
    args, stages = stage_reader.from_args("check-log-lines", __doc__, argv)
    root = os.path.abspath(args.root)
    problems, checked = [], 0
    for stage in stages:
        test = os.path.join(root, "tests", stage, "test.sh")
        if not os.path.isfile(test):
            continue
        code = skeleton_text(root, stage)
        prose = chapter_text(root, stage)
        module = stage_reader.setting(stage, "MODULE", root)
        code_lines = code.replace("\0", " ").split("\n")
        prose_lines = prose.split("\n")
        for n, pat in patterns(test):
            checked += 1
            for piece in pieces(pat):
                ws = [w for w in words(piece) if w != module]
                if piece in prose or any(piece in frag for frag in code.split("\0")):
                    continue
                if ws and any(in_order(ws, l) for l in code_lines + prose_lines):
                    continue
                problems.append(f"tests/{stage}/test.sh:{n}: \"{piece}\" (of /{pat}/) is in neither "
                                f"steps/{stage} (its code, its TODOs) nor its chapter: say it where the "
                                f"exercise that prints it is set")
    for p in problems:
        print(p)
    if problems:
        print(f"check-log-lines: {len(problems)} required log text(s) the learner is never shown",
              file=sys.stderr)
        return 1
    print(f"check-log-lines: the {checked} log lines the tests require are each in a skeleton or a chapter")
    return 0

