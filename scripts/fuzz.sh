#!/bin/bash
# make fuzz [FUZZ_SECONDS=300]: fuzz the 9P2000.L decoder for a bounded time,
# then the live server (scripts/fuzz-live.sh: stage 31 in the VM, 100,000
# messages; FUZZ_LIVE=0 skips it).
#
#   scripts/fuzz.sh [SECONDS]
#
# Two cargo-fuzz targets (tests/host/fuzz), each run for half of SECONDS
# (default 300 in all), starting from one valid frame of every message
# (tests/host/stages/examples/p9_seeds.rs) plus the corpus of earlier runs:
#   p9_decode     any bytes, decoded as request and reply: no panic, and what
#                 decodes agrees with its header
#   p9_roundtrip  decode -> encode -> decode gives the same bytes and message
# Prints, per target, libFuzzer's executions, coverage (cov: edges, ft:
# features) and corpus size; exits 1 on a crash (the input is kept in
# tests/host/fuzz/artifacts/TARGET/, replay it with the command shown).
#
# Toolchain: Debian's rustc (/usr/bin/rustc, the kernel's compiler) with
# RUSTC_BOOTSTRAP=1 for the nightly-only flags cargo-fuzz passes, and
# `--sanitizer none` (Rust's bounds checks already catch out-of-bounds
# reads; no ASan runtime needed). libFuzzer itself is built from C++ source by
# the libfuzzer-sys crate, with g++. cargo-fuzz is installed from crates.io
# into the workshop's tool cache on first use. If the Debian build fails and
# rustup has a nightly toolchain, that is used instead, and said so.
set -uo pipefail
. "$(dirname "$0")/common.sh"

TOTAL=${1:-300}
[[ "$TOTAL" =~ ^[0-9]+$ ]] && [ "$TOTAL" -ge 2 ] || die "usage: scripts/fuzz.sh [SECONDS]"
TARGETS=(p9_decode p9_roundtrip)
PER=$((TOTAL / ${#TARGETS[@]}))
CARGO_FUZZ_VERSION=0.13.2
CARGO_FUZZ="$TOOLS/cargo-fuzz-$CARGO_FUZZ_VERSION/bin/cargo-fuzz"
FUZZ="$REPO/tests/host/fuzz"
LOGS="$REPO/build/fuzz"
mkdir -p "$LOGS"

export RKW_TREE=solutions
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
export CARGO_TERM_COLOR=never

if [ ! -x "$CARGO_FUZZ" ]; then
	say "installing cargo-fuzz $CARGO_FUZZ_VERSION from crates.io (once)"
	RUSTC=$RUSTC "$CARGO" install --locked --quiet cargo-fuzz --version "$CARGO_FUZZ_VERSION" \
		--root "$TOOLS/cargo-fuzz-$CARGO_FUZZ_VERSION" || die "cargo install cargo-fuzz failed"
fi

# cargo-fuzz runs `cargo` from PATH: make it Debian's, next to cargo-fuzz.
fuzz_debian() {
	PATH="$(dirname "$CARGO_FUZZ"):/usr/bin:$PATH" RUSTC=$RUSTC RUSTC_BOOTSTRAP=1 \
		"$CARGO" fuzz "$@"
}
fuzz_nightly() {
	PATH="$(dirname "$CARGO_FUZZ"):$HOME/.cargo/bin:$PATH" RUSTUP_TOOLCHAIN=nightly \
		env -u RUSTC cargo fuzz "$@"
}
FLAGS=(--sanitizer none --release --debug-assertions)

say "building the fuzz targets with $("$RUSTC" --version) + RUSTC_BOOTSTRAP=1"
RUN=fuzz_debian
if ! (cd "$FUZZ" && fuzz_debian build "${FLAGS[@]}") >"$LOGS/build.log" 2>&1; then
	tail -20 "$LOGS/build.log" >&2
	if command -v rustup >/dev/null && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
		say "Debian's rustc could not build them: FALLING BACK to rustup's nightly toolchain"
		RUN=fuzz_nightly
		(cd "$FUZZ" && fuzz_nightly build "${FLAGS[@]}") >"$LOGS/build.log" 2>&1 ||
			{ tail -20 "$LOGS/build.log" >&2; die "the fuzz targets do not build (see $LOGS/build.log)"; }
	else
		die "the fuzz targets do not build with Debian's rustc (see $LOGS/build.log)"
	fi
fi

say "writing the seed corpus"
SEEDS="$LOGS/seeds"
rm -rf "$SEEDS"
(cd "$REPO/tests/host" && RUSTC=$RUSTC "$CARGO" run --quiet --example p9_seeds -- "$SEEDS") ||
	die "could not write the seeds"

TOTAL_EXECS=0
CRASHES=0
SUMMARY=()
for target in "${TARGETS[@]}"; do
	corpus="$FUZZ/corpus/$target"
	mkdir -p "$corpus" "$FUZZ/artifacts/$target"
	cp "$SEEDS"/* "$corpus"/
	log="$LOGS/$target.log"
	say "fuzzing $target for $PER s (log: ${log#"$REPO"/})"
	(cd "$FUZZ" && $RUN run "${FLAGS[@]}" "$target" "$corpus" -- \
		-max_total_time="$PER" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$FUZZ/artifacts/$target/") >"$log" 2>&1
	status=$?
	execs=$(awk '/^stat::number_of_executed_units:/ { print $2 }' "$log" | tail -1)
	rate=$(awk '/^stat::average_exec_per_sec:/ { print $2 }' "$log" | tail -1)
	pcs=$(sed -n 's/^INFO: Loaded 1 PC tables (\([0-9]*\) PCs).*/\1/p' "$log" | head -1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
	if [ -z "$execs" ]; then
		# A crash ends libFuzzer before its final stats: the last status line says how far it got.
		execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$last")
	fi
	TOTAL_EXECS=$((TOTAL_EXECS + ${execs:-0}))
	line="$target: ${execs:-0} executions (${rate:-?}/s), cov: ${cov:-?} of ${pcs:-?} instrumented edges, ft: ${ft:-?}, corpus ${corp:-?} inputs"
	if [ $status -ne 0 ] || grep -qE '^==[0-9]+== ERROR|panicked at|deadly signal' "$log"; then
		CRASHES=$((CRASHES + 1))
		artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
		line="$line: CRASH"
		grep -E -A8 'panicked at|ERROR: libFuzzer' "$log" | head -20 >&2
		[ -n "$artifact" ] && note "input: $artifact; replay: (cd tests/host/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none $target $artifact)"
	fi
	SUMMARY+=("$line")
done

# The live target: stage 31's server, running in the VM on the debug
# kernel, fuzzed over TCP (FUZZ_LIVE=0 skips it; FUZZ_LIVE_MESSAGES sets
# its length, 100000 by default).
LIVE=0
if [ "${FUZZ_LIVE:-1}" != 0 ]; then
	say "fuzzing the live 9P server in the VM (scripts/fuzz-live.sh)"
	if "$REPO/scripts/fuzz-live.sh" "${FUZZ_LIVE_MESSAGES:-100000}" >"$LOGS/live.log" 2>&1; then
		LIVE=1
	fi
	grep -E '^(ok|FAIL) +(fuzz|the fuzzer|64 clients|after the fuzzer|kmemleak|kernel log)|passed, .* failed' "$LOGS/live.log"
fi

echo
for line in "${SUMMARY[@]}"; do echo "$line"; done
echo "total: $TOTAL_EXECS executions in $((PER * ${#TARGETS[@]})) s, $CRASHES crashing target(s)"
if [ "${FUZZ_LIVE:-1}" != 0 ]; then
	[ $LIVE = 1 ] && echo "live: the server passed (see ${LOGS#"$REPO"/}/live.log)" || echo "live: FAILED (see ${LOGS#"$REPO"/}/live.log)"
fi
total=$((${#TARGETS[@]} + (${FUZZ_LIVE:-1} != 0)))
failed=$((CRASHES + (${FUZZ_LIVE:-1} != 0 && LIVE == 0)))
echo "$((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
