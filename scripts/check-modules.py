#!/usr/bin/env python3
"""scripts/check-modules.py: python3 -m rkw check-modules (scripts/rkw/modgraph.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("check-modules", sys.argv[1:]))
