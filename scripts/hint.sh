#!/bin/bash
# make hint STEP=NN [EX=N] [ALL=1] [RESET=1]: hints for a stage's exercises,
# one at a time.
#
#   hint.sh [--exercise N] STEP   the next hint you have not seen
#   hint.sh --all [--exercise N] STEP   the hints you have seen, again
#   hint.sh --reset [--exercise N] STEP  start over
#   hint.sh --check [STAGE...]    (maintainers) every tests/NN-name/hints.md
#                                 matches its skeleton: one exercise per
#                                 `// TODO` comment of steps/NN-name, three
#                                 hints each
#
# The hints are in tests/NN-name/hints.md: one section per exercise (a
# `// TODO` comment in steps/NN-name), in the order the chapter does them,
# each with three tiers: 1. where to look (the API, the spec section), 2. the
# shape of the solution (steps, pitfalls), 3. a sketch of the key lines.
# Without --exercise, the next hint comes from the first exercise whose
# TODO comment is still in your file and whose hints you have not all seen
# (then from any exercise). What you have seen is kept in
# build/hints/NN-name, one "EXERCISE SEEN" line per exercise.
set -uo pipefail
. "$(dirname "$0")/common.sh"

if [ -t 1 ]; then
	BOLD=$'\033[1m' DIM=$'\033[2m' OFF=$'\033[0m'
else
	BOLD="" DIM="" OFF=""
fi

# ---- reading hints.md -----------------------------------------------------------------
# Exercises are `## ` headings; in each, a `<!-- FILE: TODO text -->` line
# names the TODO comment it is about, and `### ` headings start its tiers.
HINTS=""

ex_count() { grep -c '^## ' "$HINTS"; }

# ex_title I: the heading of exercise I (from 1), without its number.
ex_title() {
	awk -v i="$1" '/^## / { n++; if (n == i) { sub(/^## +([0-9]+\. *)?/, ""); print; exit } }' "$HINTS"
}

# ex_marker I: "FILE: TEXT" of exercise I's TODO comment.
ex_marker() {
	awk -v i="$1" '/^## / { n++ } n == i && /^<!-- .* -->$/ { sub(/^<!-- /, ""); sub(/ -->$/, ""); print; exit }' "$HINTS"
}

# tier_count I: how many hints exercise I has.
tier_count() {
	awk -v i="$1" '/^## / { n++ } n == i && /^### / { t++ } END { print t + 0 }' "$HINTS"
}

# tier_title I J, tier_text I J: hint J of exercise I (from 1).
tier_title() {
	awk -v i="$1" -v j="$2" '/^## / { n++ } n == i && /^### / { t++; if (t == j) { sub(/^### +([0-9]+\. *)?/, ""); print; exit } }' "$HINTS"
}
tier_text() {
	awk -v i="$1" -v j="$2" '
		/^## / { n++; t = 0; next }
		n == i && /^### / { t++; next }
		n == i && t == j { print }' "$HINTS"
}

# show I J: hint J of exercise I, for a terminal: code blocks indented,
# their fences dropped, blank lines at either end trimmed.
show() {
	local i=$1 j=$2 total
	total=$(tier_count "$i")
	# Sections are per TODO comment; the chapter numbers exercises, and an
	# exercise may have several TODOs (its marker says which).
	local ex
	ex=$(ex_marker "$i" | grep -oE 'exercise [0-9]+' | head -1)
	echo "${BOLD}TODO $i of $(ex_count)${ex:+, $ex}: $(ex_title "$i")${OFF}"
	echo "${BOLD}hint $j of $total: $(tier_title "$i" "$j")${OFF}"
	tier_text "$i" "$j" | awk '
		/^```/ { code = !code; next }
		{ lines[++n] = (code ? "    " : "") $0 }
		END {
			first = 1; while (first <= n && lines[first] ~ /^ *$/) first++
			last = n; while (last >= first && lines[last] ~ /^ *$/) last--
			for (k = first; k <= last; k++) print lines[k]
		}'
}

# ---- what the learner has seen --------------------------------------------------------
STATE=""
declare -a SEEN=()
load_state() {
	local i n
	SEEN=()
	for ((i = 1; i <= $(ex_count); i++)); do SEEN[i]=0; done
	[ -f "$STATE" ] || return 0
	while read -r i n; do
		[[ "$i" =~ ^[0-9]+$ && "$n" =~ ^[0-9]+$ ]] && [ -n "${SEEN[i]:-}" ] && SEEN[i]=$n
	done <"$STATE"
}
save_state() {
	local i
	mkdir -p "$(dirname "$STATE")"
	for ((i = 1; i <= $(ex_count); i++)); do echo "$i ${SEEN[i]}"; done >"$STATE"
}

# todo_open I: exercise I's TODO comment is still in the learner's file.
todo_open() {
	local m file text
	m=$(ex_marker "$1")
	[ -n "$m" ] || return 0
	file=${m%%: *} text=${m#*: }
	grep -qF -- "$text" "$REPO/steps/$STAGE/$file" 2>/dev/null
}

# ---- the commands ---------------------------------------------------------------------
# next_hint [I]: show the next unseen hint (of exercise I), and count what
# is left.
next_hint() {
	local want=${1:-} i pick="" total=0 left
	local count
	count=$(ex_count)
	if [ -n "$want" ]; then
		pick=$want
	else
		for ((i = 1; i <= count; i++)); do
			if [ "${SEEN[i]}" -lt "$(tier_count "$i")" ] && todo_open "$i"; then
				pick=$i
				break
			fi
		done
		if [ -z "$pick" ]; then
			for ((i = 1; i <= count; i++)); do
				if [ "${SEEN[i]}" -lt "$(tier_count "$i")" ]; then
					pick=$i
					break
				fi
			done
		fi
	fi
	if [ -z "$pick" ] || [ "${SEEN[pick]}" -ge "$(tier_count "$pick")" ]; then
		if [ -n "$want" ]; then
			echo "You have seen all $(tier_count "$pick") hints of TODO $pick ($(ex_title "$pick"))."
		else
			echo "You have seen all the hints of stage $STAGE."
		fi
		echo "ALL=1 shows them again, RESET=1 starts over. The chapter's Exercise section has more;"
		echo "the reference: diff -u steps/$STAGE solutions/$STAGE"
		return 0
	fi
	SEEN[pick]=$((SEEN[pick] + 1))
	save_state
	show "$pick" "${SEEN[pick]}"
	echo
	for ((i = 1; i <= count; i++)); do
		total=$((total + $(tier_count "$i") - SEEN[i]))
	done
	left=$(($(tier_count "$pick") - SEEN[pick]))
	local n=${STAGE%%-*}
	if [ "$total" = 0 ]; then
		echo "${DIM}That was the last hint of stage $STAGE. (ALL=1: all of them again; RESET=1: start over)${OFF}"
	else
		if [ "$left" = 0 ]; then
			echo "${DIM}That was the last hint of this TODO; $total more for the others: make hint STEP=$n" \
				"(EX=N: the Nth TODO's; ALL=1: the ones seen again)${OFF}"
		else
			echo "${DIM}$total more hint$([ "$total" = 1 ] || echo s) for this stage, $left for this TODO: make hint STEP=$n$([ -z "$want" ] || echo " EX=$pick")" \
				"(EX=N: the Nth TODO's; ALL=1: the ones seen again)${OFF}"
		fi
		# With an exercise's first hint, the list of them: EX=N jumps.
		if [ "${SEEN[pick]}" = 1 ] && [ "$count" -gt 1 ]; then
			echo "${DIM}The TODOs (hints seen):"
			for ((i = 1; i <= count; i++)); do
				printf '%s %s. %s (%s of %s)\n' "$([ "$i" = "$pick" ] && echo '>' || echo ' ')" "$i" "$(ex_title "$i")" "${SEEN[i]}" "$(tier_count "$i")"
			done
			printf '%s' "$OFF"
		fi
	fi
}

# all_seen [I]: every hint seen so far (of exercise I).
all_seen() {
	local want=${1:-} i j shown=0
	for ((i = 1; i <= $(ex_count); i++)); do
		[ -z "$want" ] || [ "$i" = "$want" ] || continue
		for ((j = 1; j <= SEEN[i]; j++)); do
			[ "$shown" = 0 ] || echo
			show "$i" "$j"
			shown=$((shown + 1))
		done
	done
	[ "$shown" != 0 ] || echo "No hint of stage $STAGE${want:+, exercise $want,} seen yet: make hint STEP=${STAGE%%-*}${want:+ EX=$want} shows the first."
}

# ---- --check: the hints match the skeletons -------------------------------------------
check() {
	local stages=() s bad=0 i j count m file text line todos
	if [ $# -gt 0 ]; then
		for s in "$@"; do stages+=("$(stage_name "$s")"); done
	else
		for s in "$REPO"/tests/[0-9][0-9]-*/; do stages+=("$(basename "$s")"); done
	fi
	for s in "${stages[@]}"; do
		HINTS="$REPO/tests/$s/hints.md"
		if [ ! -f "$HINTS" ]; then
			echo "tests/$s/hints.md: missing"
			bad=$((bad + 1))
			continue
		fi
		count=$(ex_count)
		local markers=()
		for ((i = 1; i <= count; i++)); do
			[ "$(tier_count "$i")" = 3 ] || {
				echo "tests/$s/hints.md: exercise $i ($(ex_title "$i")) has $(tier_count "$i") hints, not 3"
				bad=$((bad + 1))
			}
			for ((j = 1; j <= $(tier_count "$i"); j++)); do
				[ -n "$(tier_text "$i" "$j" | tr -d '[:space:]')" ] || {
					echo "tests/$s/hints.md: exercise $i, hint $j is empty"
					bad=$((bad + 1))
				}
			done
			m=$(ex_marker "$i")
			file=${m%%: *} text=${m#*: }
			if [ -z "$m" ]; then
				echo "tests/$s/hints.md: exercise $i has no <!-- FILE: TODO text --> line"
				bad=$((bad + 1))
			elif [ "$(grep -cF -- "$text" "$REPO/steps/$s/$file" 2>/dev/null)" != 1 ]; then
				echo "tests/$s/hints.md: exercise $i: steps/$s/$file has not exactly one line with '$text'"
				bad=$((bad + 1))
			fi
			markers+=("$file: $text")
		done
		# Every TODO comment of the skeleton has its exercise.
		todos=0
		while IFS=: read -r file _ line; do
			todos=$((todos + 1))
			local found=""
			for m in "${markers[@]}"; do
				[ "${m%%: *}" = "$file" ] && [[ "$line" == *"${m#*: }"* ]] && found=1
			done
			[ -n "$found" ] || {
				echo "tests/$s/hints.md: no exercise for steps/$s/$file: $(sed 's/^ *//' <<<"$line")"
				bad=$((bad + 1))
			}
		done < <(cd "$REPO/steps/$s" && grep -rnE '//.*\bTODO\b' --include='*.rs' . | sed 's|^\./||')
		[ "$todos" = "$count" ] || {
			echo "tests/$s/hints.md: $count exercises for $todos TODO comments"
			bad=$((bad + 1))
		}
	done
	if [ "$bad" = 0 ]; then
		echo "${#stages[@]} stages: every TODO comment has its exercise in hints.md, with 3 hints"
	else
		echo "$bad problem(s) in the hints"
		return 1
	fi
}

# ---- main -----------------------------------------------------------------------------
MODE=next EX=""
ARGS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--all) MODE=all ;;
	--reset) MODE=reset ;;
	--check) MODE=check ;;
	--exercise)
		[ $# -ge 2 ] || die "--exercise needs a number"
		EX=$2
		shift
		;;
	-h | --help)
		sed -n '2,/^set /p' "$0" | sed -n 's/^# \{0,1\}//p'
		exit 0
		;;
	-*) die "hint.sh: unknown option $1 (see its first lines)" ;;
	*) ARGS+=("$1") ;;
	esac
	shift
done

if [ "$MODE" = check ]; then
	check "${ARGS[@]}"
	exit
fi
[ ${#ARGS[@]} = 1 ] || die "say which stage, e.g. make hint STEP=01"
STAGE=$(stage_name "${ARGS[0]}") || exit 1
HINTS="$REPO/tests/$STAGE/hints.md"
[ -f "$HINTS" ] || die "stage $STAGE has no hints yet (tests/$STAGE/hints.md)"
STATE="$REPO/build/hints/$STAGE"
if [ -n "$EX" ]; then
	[[ "$EX" =~ ^[0-9]+$ ]] && [ "$EX" -ge 1 ] && [ "$EX" -le "$(ex_count)" ] ||
		die "stage $STAGE has exercises 1 to $(ex_count): EX=$EX is not one"
	EX=$((10#$EX))
fi
load_state
case "$MODE" in
next) next_hint "$EX" ;;
all) all_seen "$EX" ;;
reset)
	if [ -n "$EX" ]; then
		SEEN[EX]=0
		save_state
		echo "The hints of stage $STAGE, exercise $EX, start over."
	else
		rm -f "$STATE"
		echo "The hints of stage $STAGE start over."
	fi
	;;
esac
