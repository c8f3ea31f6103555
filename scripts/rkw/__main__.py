"""python3 -m rkw TASK [ARGS...]: see rkw/__init__.py."""

import sys

from rkw import TASKS, run

if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    print(f"usage: python3 -m rkw TASK [ARGS...]; the tasks: {', '.join(sorted(TASKS))}")
    sys.exit(0 if len(sys.argv) > 1 else 2)
sys.exit(run(sys.argv[1], sys.argv[2:]))
