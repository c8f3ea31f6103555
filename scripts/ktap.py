#!/usr/bin/env python3
"""scripts/ktap.py: python3 -m rkw ktap (scripts/rkw/ktap.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("ktap", sys.argv[1:]))
