"""Read the stage tests' KTAP results out of a VM log: the one parser of them.

The guest (tests/guest-run.sh) prints one KTAP document per boot; each
stage's tree is a subtest ("    # Subtest: 03-miscdev steps"), its checks
indented by four spaces (tests/lib.sh), closed at the top level by
"ok N 03-miscdev steps" or "not ok N ...". Kernel console lines and anything
else in the log are ignored. Host-side checks after the VM (after-vm.sh)
add subtests of the same name; they are merged.

    ktap.py counts  LOG STAGE TREE   "PASS FAIL SKIP ENDED"
    ktap.py details LOG STAGE TREE   the failed checks with their "#" lines
    ktap.py report  LOG STAGE TREE   every check as a learner sees it (✓/✗)
    ktap.py reached LOG              "STAGE TREE" of every subtest that began
"""
import re
import sys

RESULT = re.compile(r"^(not )?ok (\d+)(?: ([^#]*))?(?:#\s*(\w+)\s*(.*))?$")
INDENT = "    "


class Check:
    def __init__(self, ok, desc, directive, reason):
        self.ok = ok
        self.desc = desc.strip()
        self.skip = (directive or "").upper() == "SKIP"
        self.reason = reason.strip()
        self.diags = []


class Run:
    """One stage tree's results (every block of that name in the log)."""

    def __init__(self):
        self.checks = []
        self.notes = []  # "#" lines before the first check
        self.blocks = 0
        self.closed = 0

    @property
    def ended(self):
        return self.blocks > 0 and self.closed == self.blocks

    def counts(self):
        p = sum(1 for c in self.checks if c.ok and not c.skip)
        f = sum(1 for c in self.checks if not c.ok)
        s = sum(1 for c in self.checks if c.ok and c.skip)
        return p, f, s


def parse(lines):
    runs = {}
    order = []
    current = None  # the Run being read, while inside a subtest
    for raw in lines:
        line = raw.rstrip("\r\n")
        m = re.match(r"^    # Subtest: (\S+) (\S+)\s*$", line)
        if m:
            key = (m.group(1), m.group(2))
            if key not in runs:
                runs[key] = Run()
                order.append(key)
            runs[key].blocks += 1
            current = (key, runs[key])
            continue
        if line.startswith(INDENT):
            if current is None:
                continue
            body = line[len(INDENT):]
            m = RESULT.match(body)
            if m:
                current[1].checks.append(Check(not m.group(1), m.group(3) or "", m.group(4), m.group(5) or ""))
            elif body.startswith("#"):
                text = body[1:].strip()
                (current[1].checks[-1].diags if current[1].checks else current[1].notes).append(text)
            continue
        if line.startswith("KTAP version"):
            current = None
            continue
        m = RESULT.match(line)
        if m and current is not None:
            if tuple((m.group(3) or "").split()[:2]) == current[0]:
                if (m.group(4) or "").upper() != "SKIP":
                    current[1].closed += 1
                current = None
    return runs, order


def load(path):
    with open(path, errors="replace") as f:
        return parse(f)


def main(argv):
    argv = ["ktap.py", *argv]
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd, log = argv[1], argv[2]
    runs, order = load(log)
    if cmd == "reached":
        for stage, tree in order:
            print(stage, tree)
        return 0
    if len(argv) != 5:
        sys.exit(__doc__)
    run = runs.get((argv[3], argv[4]), Run())
    p, f, s = run.counts()
    if cmd == "counts":
        print(p, f, s, 1 if run.ended else 0)
    elif cmd == "details":
        for c in run.checks:
            if not c.ok:
                print("x " + c.desc)
                for d in c.diags:
                    print("    " + d)
    elif cmd == "report":
        green, red, dim, off = "\033[32m", "\033[31m", "\033[2m", "\033[0m"
        for n in run.notes:
            print("      " + n)
        totals = re.compile(r"^Totals: ")
        for c in run.checks:
            if c.skip:
                print(f"{dim}  - {c.desc} (skipped: {c.reason}){off}")
            elif c.ok:
                print(f"{green}  ✓{off} {c.desc}")
            else:
                print(f"{red}  ✗{off} {c.desc}")
            for d in c.diags:
                if not totals.match(d):
                    print("      " + d)
    else:
        sys.exit(__doc__)
    return 0

