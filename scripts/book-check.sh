#!/bin/bash
# book-check.sh: the book builds and says only what is true of the code.
#   1. mdbook builds it into build/book with no warning and no error (any
#      line of mdbook's other than INFO fails);
#   2. scripts/book-lint.py: every path, `make` target, script and
#      {{#include}} anchor the book and the code comments name exists, and
#      no page shows typed output of the workshop's commands;
#   3. scripts/book-browser-check.py on build/book: links, images, empty code
#      blocks, search; in Debian's chromium (headless) too, with the pages'
#      scripts run and their console errors, if chromium is installed.
# One line per part, the problems under it; exit status 1 if a part fails.
# make test runs it ("the book" check).
set -uo pipefail
. "$(dirname "$0")/common.sh"

FAILED=0
part() { # part OK|FAIL TEXT [DETAILS]
	printf '%-4s %s\n' "$1" "$2"
	[ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/     /'
	[ "$1" = ok ] || FAILED=1
}

[ -x "$MDBOOK" ] || die "no mdbook at $MDBOOK: run make book (it installs it) or make setup"
if out=$("$MDBOOK" build "$REPO/book" 2>&1) && ! grep -vE '^[[:space:]]*INFO ' <<<"$out" | grep -q .; then
	part ok "mdbook builds the book without a warning"
else
	part FAIL "mdbook builds the book without a warning" "$out"
fi

if out=$(python3 "$REPO/scripts/book-lint.py" 2>&1); then
	part ok "book-lint: paths, make targets, includes and outputs are the code's"
else
	part FAIL "book-lint: paths, make targets, includes and outputs are the code's" "$out"
fi

args=()
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
	echo "     browser check skipped: chromium not installed (apt-get install chromium); static checks only"
	args=(--static-only)
fi
if out=$(python3 "$REPO/scripts/book-browser-check.py" "${args[@]}" "$REPO/build/book" 2>&1); then
	part ok "${out##*$'\n'}"
else
	part FAIL "the built book: links, images, code blocks, search" "$out"
fi
exit "$FAILED"
