#!/bin/bash
# make book: build the book into build/book.
set -euo pipefail
. "$(dirname "$0")/common.sh"
"$MDBOOK" build "$REPO/book"
say "the book is in build/book/index.html"
