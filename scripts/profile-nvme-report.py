#!/usr/bin/env python3
"""scripts/profile-nvme-report.py: python3 -m rkw profile-nvme-report (scripts/rkw/nvmeprofile.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("profile-nvme-report", sys.argv[1:]))
