#!/usr/bin/env python3
"""scripts/ab-nvme-report.py: python3 -m rkw ab-nvme-report (scripts/rkw/nvmeab.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("ab-nvme-report", sys.argv[1:]))
