#!/usr/bin/env python3
"""scripts/teeth.py: python3 -m rkw teeth (scripts/rkw/teeth.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("teeth", sys.argv[1:]))
