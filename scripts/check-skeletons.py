#!/usr/bin/env python3
"""scripts/check-skeletons.py: python3 -m rkw check-skeletons (scripts/rkw/skeletons.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("check-skeletons", sys.argv[1:]))
