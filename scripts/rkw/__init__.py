"""rkw: the maintainer tooling of rust-kernel-workshop, one package.

Run a task as `python3 -m rkw TASK [ARGS...]` with scripts/ on sys.path
(`PYTHONPATH=scripts`), or through its wrapper, scripts/TASK.py, the name
the Makefile, the tests and the book call. A task's module has the usage in
its docstring. The modules the tasks share: `stages` (the stages and their
stage.env), `rust` (Rust source facts on tree-sitter-rust), `boots` (VM
boots for tests: scripts/test.sh's run_boots, the one way to boot).
"""

import importlib
import importlib.util
import os
import re
import sys

# The repository: scripts/rkw/.. /.. (not resolving symlinks: the harness's
# copy of the layout links scripts/rkw, and must stay its own repository).
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(SCRIPTS)

# TASK: (module, whether it parses Rust, so needs tree-sitter).
TASKS = {
    "check-skeletons": ("skeletons", True),
    "check-modules": ("modgraph", True),
    "check-log-lines": ("loglines", True),
    "estimate": ("estimate", True),
    "gen-book-extras": ("bookextras", True),
    "teeth": ("teeth", True),
    "ktap": ("ktap", False),
    "bench-plot": ("svgplot", False),
    "book-lint": ("booklint", True),
    "qmp-agent": ("qmpagent", False),
    "profile-nvme-report": ("nvmeprofile", False),
    "insns-nvme-report": ("nvmeinsns", False),
    "ab-nvme-report": ("nvmeab", False),
}


def pin(key):
    """A version pinned in versions.env (KEY=value lines)."""
    with open(os.path.join(REPO, "versions.env"), encoding="utf-8") as f:
        return dict(re.findall(r"^([A-Z0-9_]+)=(.*)$", f.read(), re.M))[key]


def venv():
    """The venv `make setup` installs the Python packages into (VENV in
    scripts/common.sh)."""
    home = os.environ.get("HOME", "")
    cache = os.environ.get("RKW_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "rust-kernel-workshop")
    return os.path.join(cache, f"venv-virtme-ng-{pin('VIRTME_NG_VERSION')}")


def _in_venv(task, argv):
    """Run the task by the venv's Python (which has tree-sitter) when this
    one cannot import it: the scripts are run by whatever python3 is first
    on PATH."""
    if importlib.util.find_spec("tree_sitter") is not None:
        return
    v = venv()
    py = os.path.join(v, "bin", "python3")
    if os.access(py, os.X_OK) and os.path.realpath(sys.prefix) != os.path.realpath(v):
        path = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=SCRIPTS + (os.pathsep + path if path else ""))
        os.execve(py, [py, "-m", "rkw", task, *argv], env)
    sys.exit(f"{task}: the Rust parser (tree-sitter {pin('TREE_SITTER_VERSION')}, tree-sitter-rust"
             f" {pin('TREE_SITTER_RUST_VERSION')}) is not installed in {v}: run make setup")


def run(task, argv):
    """Run TASK with arguments argv; its exit status."""
    if task not in TASKS:
        print(f"rkw: no task {task!r}; the tasks: {', '.join(sorted(TASKS))}", file=sys.stderr)
        return 2
    module, parses = TASKS[task]
    if parses:
        _in_venv(task, argv)
    sys.argv = [f"{task}.py", *argv]
    return importlib.import_module(f"rkw.{module}").main(argv)
