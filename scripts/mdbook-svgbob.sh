#!/bin/bash
# The book's diagram preprocessor: book/book.toml runs this script (a path
# relative to the book) in place of mdbook-svgbob, so that every mdbook run
# (make book, make test, scripts/book-check.sh, a manual `mdbook serve`)
# finds the one `make setup` put into the cache, wherever the cache is.
# mdbook calls it as `mdbook-svgbob.sh supports RENDERER`, then with the book
# as JSON on stdin.
set -euo pipefail
. "$(dirname "$0")/common.sh"
exe=${MDBOOK_SVGBOB:-$TOOLS/mdbook-svgbob-$MDBOOK_SVGBOB_VERSION/bin/mdbook-svgbob}
if [ ! -x "$exe" ]; then
	echo "error: no mdbook-svgbob at $exe: run make book (it installs it) or make setup" >&2
	# mdbook asks `supports html` first, and it quietly skips a preprocessor
	# that says no (the diagrams would stay ```bob code): say yes, so that
	# the run itself fails, and with it the build.
	[ "${1:-}" = supports ] && exit 0
	exit 1
fi
exec "$exe" "$@"
