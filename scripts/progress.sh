#!/bin/bash
# make progress [BUILD=1]: where you are, one line per stage, then what to
# do next.
#
#   progress.sh [--build]
#
# A stage is
#   untouched            steps/NN-* is as git HEAD has it (and every TODO
#                        comment of the skeleton is still there);
#   in progress          changed, and not checked since (with how many of
#                        its TODO comments are left, by tests/NN-*/hints.md);
#   passed / failing     as your last `make check STEP=NN` said, if your
#                        files are still the ones it tested ("passed
#                        (checked on <date>)");
#   changed since your last check   your files changed after it.
# It only reads files and asks git: no build, no VM, under a second. With
# --build it also compiles every stage you changed since its last check
# (on the fast kernel, if it is built), and runs the host-only stages'
# tests (stage 27: about a minute), recording their result like make check.
# It ends with "next: make check STEP=NN": the first stage not passed, in
# track order (the first steps, then the NVMe track and the 9P track, both
# named while both are open: a stage's track is the part of the book,
# book/src/SUMMARY.md, its chapter is in).
#
# scripts/test.sh --learner (make check) records each result here:
#   progress.sh --begin STAGE...           before it builds: the content of
#                                          steps/STAGE it is about to test
#   progress.sh --record PASSED FAILED STAGE...   at its end
# in build/progress/NN-name: "pass|fail PASSED FAILED HASH FLAVOUR DATE",
# HASH being steps_hash below (of the files the run tested).
set -uo pipefail
. "$(dirname "$0")/common.sh"

PROGRESS="$REPO/build/progress"

# steps_hash NN-name: a hash of the content of steps/NN-name: every file's
# path and bytes, hidden files (editor swap files) and backups (*~) left
# out.
steps_hash() {
	(
		cd "$REPO/steps/$1" || exit 1
		find . -name '.?*' -prune -o -type f ! -name '*~' -print0 | LC_ALL=C sort -z |
			xargs -0 -r sha256sum | sha256sum | cut -c1-16
	)
}

# The stages, in order: every tests/NN-name with a steps/NN-name.
all_stages() {
	local d
	for d in "$REPO"/tests/[0-9][0-9]-*/; do
		d=$(basename "$d")
		[ -d "$REPO/steps/$d" ] && echo "$d"
	done
}

# ---- make check's records ---------------------------------------------------------
# --begin STAGE...: remember what the run is about to build and test.
begin() {
	local s
	mkdir -p "$PROGRESS"
	for s in "$@"; do
		s=$(stage_name "$s") || continue
		steps_hash "$s" >"$PROGRESS/.$s.begin"
	done
}

# --record PASSED FAILED STAGE...: the result of the run. With several
# stages the counts are the run's, not a stage's: they are recorded only if
# everything passed.
record() {
	local p=$1 f=$2 s hash result flavour
	shift 2
	[ "$#" -eq 1 ] || [ "$f" = 0 ] || return 0
	result=fail
	[ "$f" = 0 ] && [ "$p" -gt 0 ] && result=pass
	mkdir -p "$PROGRESS"
	for s in "$@"; do
		s=$(stage_name "$s") || continue
		hash=$(cat "$PROGRESS/.$s.begin" 2>/dev/null) || hash=$(steps_hash "$s")
		rm -f "$PROGRESS/.$s.begin"
		flavour=$FLAVOUR
		[ "$(stage_env "$s" VM)" != no ] || flavour=host
		echo "$result $p $f $hash $flavour $(date +%Y-%m-%dT%H:%M)" >"$PROGRESS/$s"
	done
}

# ---- the report ---------------------------------------------------------------------
if [ -t 1 ]; then
	GREEN=$'\033[32m' RED=$'\033[31m' YELLOW=$'\033[33m' BOLD=$'\033[1m' OFF=$'\033[0m'
else
	GREEN="" RED="" YELLOW="" BOLD="" OFF=""
fi

# todo_markers NN-name: the TODO comments the skeleton has, as
# tests/NN-name/hints.md lists them ("FILE: TEXT" lines).
todo_markers() {
	sed -n 's/^<!-- \(.*\) -->$/\1/p' "$REPO/tests/$1/hints.md" 2>/dev/null | grep -E '^[^ ]+: .*TODO' || true
}

# todos_left NN-name: "LEFT TOTAL", the skeleton's TODO comments still in
# steps/NN-name; empty without hints.md.
todos_left() {
	local m file text left=0 total=0
	while IFS= read -r m; do
		file=${m%%: *} text=${m#*: }
		total=$((total + 1))
		grep -qF -- "$text" "$REPO/steps/$1/$file" 2>/dev/null && left=$((left + 1))
	done < <(todo_markers "$1")
	[ "$total" = 0 ] || echo "$left $total"
}

# The heading of the part of book/src/SUMMARY.md that lists stage $1.
part_of() {
	awk -v f="($1.md)" '/^# /{p=$0} index($0,f){print p; exit}' "$REPO/book/src/SUMMARY.md"
}

# The git view of steps/, once: the stages with changes, tracked or not.
# Without git (a tarball), nothing counts as untouched.
if git -C "$REPO" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	HAVE_GIT=1
	CHANGED=$(git -C "$REPO" status --porcelain --untracked-files=all -- steps 2>/dev/null |
		sed -E 's/^.. //; s/.* -> //; s/^"//' | awk -F/ '$1 == "steps" { print $2 }' | sort -u)
else
	HAVE_GIT="" CHANGED=""
fi

# built NN-name: compile steps/NN-name on the fast kernel: "builds",
# "does not build ..." or "not built ...".
built() {
	local s=$1 kdir
	kdir=$(current_kdir fast)
	if [ -z "$kdir" ] || [ ! -f "$kdir/Module.symvers" ]; then
		echo "not built (no kernel yet: make setup)"
	elif RKW_FLAVOUR=fast "$REPO/scripts/build-stage.sh" steps "$s" >/dev/null 2>&1; then
		if grep -qE '^(warning|error)(\[[A-Za-z0-9_]+\])?:|: warning:' "$REPO/build/modules-fast/steps/$s.log" 2>/dev/null; then
			echo "builds, with warnings (make build STEP=${s%%-*})"
		else
			echo "builds"
		fi
	else
		echo "${RED}does not build${OFF} (make build STEP=${s%%-*} shows why)"
	fi
}

# host_check NN-name: run a host-only stage's test on steps/, and record it
# like make check does.
host_check() {
	local s=$1 log="$PROGRESS/$1.log" p f
	mkdir -p "$PROGRESS"
	begin "$s"
	bash "$REPO/tests/$s/test.sh" steps >"$log" 2>&1
	read -r p f < <(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | awk '{print $1, $3}')
	FLAVOUR=host record "${p:-0}" "${f:-1}" "$s"
}

# status NN-name: prints "STATE TEXT": STATE is passed, failing, changed,
# progress or untouched.
status() {
	local s=$1 rec result p f hash flavour date current left total text="" state
	current=$(steps_hash "$s")
	if [ -f "$PROGRESS/$s" ]; then
		read -r result p f hash flavour date <"$PROGRESS/$s"
		date=${date:-$(date -r "$PROGRESS/$s" +%Y-%m-%dT%H:%M)}
		date=${date/T/ at }
		case "$flavour" in
		debug | fast) flavour=", $flavour kernel" ;;
		host) flavour=", on the host" ;;
		*) flavour="" ;;
		esac
		if [ "$hash" = "$current" ]; then
			if [ "$result" = pass ]; then
				echo "passed ${GREEN}passed${OFF} (checked on $date$flavour)"
			else
				echo "failing ${RED}failing${OFF}: $f of $((p + f)) checks fail (checked on $date$flavour)"
			fi
			return
		fi
		rec="it $([ "$result" = pass ] && echo passed || echo "failed $f of $((p + f))") on $date"
		text="${YELLOW}changed since your last check${OFF} ($rec)"
		state=changed
	fi
	read -r left total < <(todos_left "$s")
	if [ -z "$text" ]; then
		if [ -n "$HAVE_GIT" ] && ! grep -qx "$s" <<<"$CHANGED" && [ "${left:-0}" = "${total:-0}" ]; then
			echo "untouched untouched"
			return
		fi
		text="in progress"
		state=progress
	fi
	[ -z "${total:-}" ] || text+=", $left of $total TODO comments left"
	echo "$state $text"
}

report() {
	local build=$1 s line state text first_steps="" nvme="" p9="" n
	echo "${BOLD}your progress${OFF} (steps/, against your last make check of each stage):"
	for s in $(all_stages); do
		line=$(status "$s")
		state=${line%% *} text=${line#* }
		if [ -n "$build" ] && { [ "$state" = progress ] || [ "$state" = changed ]; }; then
			if [ "$(stage_env "$s" VM)" = no ]; then
				[ -z "$BOLD" ] || printf '%-20s checking on the host (tests/%s/test.sh steps) ...\r' "$s" "$s"
				host_check "$s"
				line=$(status "$s")
				state=${line%% *} text=${line#* }
			else
				[ -z "$BOLD" ] || printf '%-20s building ...\r' "$s"
				text+=", $(built "$s")"
			fi
			[ -z "$BOLD" ] || printf '\033[K'
		fi
		printf '%-20s %s\n' "$s" "$text"
		[ "$state" = passed ] && continue
		# The track: the part of the book the stage's chapter is in.
		case $(part_of "$s") in
		*NVMe*) [ -n "$nvme" ] || nvme=${s%%-*} ;;
		*9P*) [ -n "$p9" ] || p9=${s%%-*} ;;
		*) [ -n "$first_steps" ] || first_steps=${s%%-*} ;;
		esac
	done
	echo
	if [ -n "$first_steps" ]; then
		next "$first_steps"
	elif [ -n "$nvme" ] && [ -n "$p9" ]; then
		next "$nvme" " (the NVMe track)"
		next "$p9" " (the 9P track)"
	elif [ -n "$nvme$p9" ]; then
		next "$nvme$p9"
	else
		echo "${BOLD}every stage passes: well done!${OFF} (make test STEP=NN runs the maintainers' checks)"
	fi
	[ -n "$build" ] || echo "(make progress BUILD=1 also compiles the stages you changed)"
}

# next NN [WHAT]: the next step, and where to read.
next() {
	local s chapter
	s=$(stage_name "$1")
	chapter=$(cd "$REPO" && ls book/src/"$1"-*.md 2>/dev/null | head -1)
	echo "${BOLD}next: make check STEP=$1${OFF}${2:-}  (chapter: ${chapter:-book/}; stuck? make hint STEP=$1)"
}

case "${1:-}" in
--begin)
	shift
	begin "$@"
	;;
--record)
	[ $# -ge 4 ] || die "usage: progress.sh --record PASSED FAILED STAGE..."
	shift
	record "$@"
	;;
--build) report 1 ;;
"") report "" ;;
-h | --help) sed -n '2,/^set /p' "$0" | sed -n 's/^# \{0,1\}//p' ;;
*) die "usage: progress.sh [--build] (see its first lines)" ;;
esac
