"""The stages and their settings: THE stage reader of the Python tooling.

A stage is a folder tests/NN-name (with steps/NN-name and solutions/NN-name
beside it). Its tests/NN-name/stage.env is shell (`KEY=value`, quotes,
comments), sourced by scripts/common.sh's `stage_env`; here it is read the
same way, by bash itself, once per file: `set -a; . FILE; env -0` in an
empty environment, the variables the file sets being those that differ
from what the same shell has without it. (common.sh keeps its own
`stage_env`: shell is the natural tool there.)
"""

import argparse
import functools
import os
import re
import subprocess
import sys

from rkw import REPO

STAGE_DIR = re.compile(r"^(\d\d)-[A-Za-z0-9_-]+$")


def names(root=REPO, trees=("tests",)):
    """The stage folders NN-name that every tree in `trees` has, in order."""
    found = None
    for tree in trees:
        here = {d for d in os.listdir(os.path.join(root, tree))
                if STAGE_DIR.match(d) and os.path.isdir(os.path.join(root, tree, d))}
        found = here if found is None else found & here
    return sorted(found or ())


def resolve(arg, root=REPO, trees=("tests",)):
    """The stage folder that 1, 01 or 01-hello names (among names(root,
    trees)); LookupError if there is none."""
    number = str(arg).split("-")[0]
    if not number.isdigit():
        raise LookupError(f"not a stage: {arg}")
    for name in names(root, trees):
        if int(name[:2]) == int(number):
            return name
    raise LookupError(f"no stage {arg}")


def from_args(task, doc, argv):
    """The arguments of a task that takes [--root DIR] [STAGE...] (`doc`'s
    first paragraph is its description), and the stages they name among
    those steps/ and solutions/ both have: all of them if none is named.
    A stage neither has: a message, and exit status 2."""
    parser = argparse.ArgumentParser(prog=task, description=doc.split("\n\n")[0])
    parser.add_argument("--root", default=REPO, help="the repository (default: this script's)")
    parser.add_argument("stages", nargs="*", metavar="STAGE")
    args = parser.parse_args(argv)
    trees = ("steps", "solutions")
    found = []
    for w in args.stages:
        try:
            found.append(resolve(w, args.root, trees))
        except LookupError:
            print(f"{task}: no stage {w} in both steps/ and solutions/", file=sys.stderr)
            raise SystemExit(2) from None
    return args, found or names(args.root, trees)


def _source(path):
    """The environment of `bash` in an empty environment after sourcing
    `path` with every variable exported."""
    out = subprocess.run(
        ["env", "-i", "bash", "--noprofile", "--norc", "-c", 'set -a; . "$1" >/dev/null; exec env -0', "bash", path],
        capture_output=True, check=True,
    ).stdout.decode("utf-8", "replace")
    return dict(kv.split("=", 1) for kv in out.split("\0") if "=" in kv)


@functools.cache
def _shell_base():
    return _source(os.devnull)


@functools.cache
def _env_file(path):
    base = _shell_base()
    return {k: v for k, v in _source(path).items() if base.get(k) != v}


def env(stage, root=REPO):
    """{KEY: value} of what tests/STAGE/stage.env sets ({} without one)."""
    path = os.path.join(root, "tests", stage, "stage.env")
    return dict(_env_file(path)) if os.path.isfile(path) else {}


def setting(stage, key, root=REPO):
    """KEY of tests/STAGE/stage.env, "" if it does not set it (as
    common.sh's `stage_env STAGE KEY`)."""
    return env(stage, root).get(key, "")
