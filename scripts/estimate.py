#!/usr/bin/env python3
"""scripts/estimate.py: python3 -m rkw estimate (scripts/rkw/estimate.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("estimate", sys.argv[1:]))
