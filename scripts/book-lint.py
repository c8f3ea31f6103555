#!/usr/bin/env python3
"""scripts/book-lint.py: python3 -m rkw book-lint (scripts/rkw/booklint.py has its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkw import run  # noqa: E402

sys.exit(run("book-lint", sys.argv[1:]))
