#!/usr/bin/env python3
"""scripts/gen-book-extras.py: python3 -m rkw gen-book-extras (scripts/rkw/bookextras.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("gen-book-extras", sys.argv[1:]))
