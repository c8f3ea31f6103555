#!/usr/bin/env python3
"""scripts/bench-plot.py: python3 -m rkw bench-plot (scripts/rkw/svgplot.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("bench-plot", sys.argv[1:]))
