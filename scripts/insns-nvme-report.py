#!/usr/bin/env python3
"""scripts/insns-nvme-report.py: python3 -m rkw insns-nvme-report (scripts/rkw/nvmeinsns.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("insns-nvme-report", sys.argv[1:]))
