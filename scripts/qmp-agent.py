#!/usr/bin/env python3
"""scripts/qmp-agent.py: python3 -m rkw qmp-agent (scripts/rkw/qmpagent.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("qmp-agent", sys.argv[1:]))
