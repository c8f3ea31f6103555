"""rkw: the maintainer tooling of rust-kernel-workshop, one package.

Run a task as `python3 -m rkw TASK [ARGS...]` with scripts/ on sys.path
(`PYTHONPATH=scripts`), or through its wrapper, scripts/TASK.py, the name
the Makefile, the tests and the book call. A task's module has the usage in
its docstring. The modules the tasks share: `stages` (the stages and their
stage.env), `rust` (Rust source facts on tree-sitter-rust).
"""

import importlib
import os
import sys

# The repository: scripts/rkw/.. /.. (not resolving symlinks: the harness's
# copy of the layout links scripts/rkw, and must stay its own repository).
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# TASK: (module, whether it parses Rust, so needs tree-sitter).
TASKS = {
    "check-skeletons": ("skeletons", True),
    "check-modules": ("modgraph", True),
    "check-log-lines": ("loglines", True),
    "estimate": ("estimate", True),
    "gen-book-extras": ("bookextras", True),
    "teeth": ("teeth", True),
    "ktap": ("ktap", False),
}


def run(task, argv):
    """Run TASK with arguments argv; its exit status."""
    if task not in TASKS:
        print(f"rkw: no task {task!r}; the tasks: {', '.join(sorted(TASKS))}", file=sys.stderr)
        return 2
    module, parses = TASKS[task]
    sys.argv = [f"{task}.py", *argv]
    return importlib.import_module(f"rkw.{module}").main(argv)
