#!/usr/bin/env python3
"""scripts/check-log-lines.py: python3 -m rkw check-log-lines (scripts/rkw/loglines.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("check-log-lines", sys.argv[1:]))
