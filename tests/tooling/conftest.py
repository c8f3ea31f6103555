"""pytest for scripts/rkw, the maintainer tooling (make test runs it, in the
venv make setup installs pytest and tree-sitter into)."""

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
