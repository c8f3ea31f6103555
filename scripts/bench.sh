#!/bin/bash
# make bench: the speed numbers of the workshop (benchmarks, never tests).
#   VM boot + power-off under the machine's accelerator, both kernel flavours;
#   an out-of-tree module build; the 9P codec's decode throughput; stage 22's
#   blocking echo server against stage 26's async one; the speed stage's NVMe
#   driver (BENCH_NVME_STAGE, default 21-speed)
#   against the kernel's C driver (BENCH_ROUNDS rounds, default 5); r9p
#   against diod and QEMU's 9p; stage 35's r9p (the file reactor) against
#   stage 31's (synchronous reads), serving the ext4 on rnvme.
# BENCH_ONLY=PART[,PART]: only those parts (boot, build, decode, echo, nvme,
# nvme-profile, nvme-insns, 9p-servers, 9p-reactor), e.g. `BENCH_ONLY=9p-reactor make bench`.
# Results go to build/bench/results.txt as "name value unit" lines.
set -euo pipefail
. "$(dirname "$0")/common.sh"
OUT="$REPO/build/bench"
mkdir -p "$OUT"
RES="$OUT/results.txt"
: >"$RES"
record() { echo "$1 $2 $3" | tee -a "$RES"; }

# part NAME: whether BENCH_ONLY (default: every part) asks for NAME.
part() { [ -z "${BENCH_ONLY:-}" ] || [[ ",$BENCH_ONLY," == *",$1,"* ]]; }

secs() { # secs CMD...: wall-clock seconds of CMD, with 0.1 s resolution
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >>"$OUT/bench.log" 2>&1
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }'
}

if part boot; then
	say "VM boots ($(vm_accel))"
	for f in fast debug; do
		for run in 1 2; do
			record "vm-boot-$f-run$run" "$(RKW_FLAVOUR=$f secs "$REPO/scripts/vm.sh" --probe)" s
		done
	done
fi

if part build; then
	say "module build (stage 01, solutions)"
	rm -rf "$REPO/build/modules-debug/solutions/01-hello"
	record module-build-01 "$(secs "$REPO/scripts/build-stage.sh" solutions 01)" s
fi

if part decode; then
	say "9P decode throughput (stage 27 codec, host)"
	record p9-decode "$("$REPO/scripts/bench-9p.sh" 3 2>>"$OUT/bench.log" | awk '/^p9-decode-msgs-per-sec/ { print $2 }')" msgs/s
fi

if part echo; then
	say "echo servers: stage 22 (a thread per connection) vs stage 26 (tasks on 2 workers)"
	"$REPO/scripts/bench-echo.sh" 10 2>>"$OUT/bench.log" | tee -a "$OUT/bench.log" |
		awk 'NF == 3 && /^echo-/' >>"$RES" || say "the echo benchmark failed (see ${OUT#"$REPO"/}/bench.log)"
	grep '^echo-' "$RES" || true
fi

if part nvme; then
	say "NVMe: ${BENCH_NVME_STAGE:-21-speed}'s rnvme vs the kernel's C nvme driver, same controller, ${BENCH_ROUNDS:-5} rounds (rewrites book/src/benchmarks.md)"
	if "$REPO/scripts/bench-nvme.sh" "${BENCH_ROUNDS:-5}" >"$OUT/nvme.txt" 2>>"$OUT/bench.log"; then
		cat "$OUT/nvme.txt" >>"$OUT/bench.log"
		grep -v '^nvme-' "$OUT/nvme.txt" >&2 # the table: medians, ratios, why
		awk 'NF == 3 && /^nvme-/' "$OUT/nvme.txt" >>"$RES"
		grep -E '^nvme-[a-z0-9-]+-(ours|c|ratio(-min|-max)?) ' "$RES" || true
	else
		say "the NVMe benchmark failed (see ${OUT#"$REPO"/}/bench.log and nvme-samples.txt)"
	fi
fi

if part nvme-profile; then
	say "NVMe profile: perf in the VM, rnvme's and C's CPU time per I/O by function (rewrites book/src/benchmarks.md)"
	if command -v perf >/dev/null; then
		"$REPO/scripts/profile-nvme.sh" 10 >"$OUT/nvme-profile.txt" 2>>"$OUT/bench.log" ||
			say "the NVMe profile failed (see ${OUT#"$REPO"/}/bench.log and nvme-profile-raw.txt)"
	else
		say "no perf on this machine (apt install linux-perf, or make setup): the NVMe profile is left out"
	fi
fi

if part nvme-insns; then
	say "NVMe instructions: QEMU counts the guest's instructions per I/O, rnvme's and C's, by function (rewrites book/src/benchmarks.md)"
	"$REPO/scripts/insns-nvme.sh" 10 >"$OUT/nvme-insns.txt" 2>>"$OUT/bench.log" ||
		say "the NVMe instruction count failed (see ${OUT#"$REPO"/}/bench.log and nvme-insns-raw.txt)"
fi

if part 9p-servers; then
	say "9P servers: r9p (stage 33) vs diod vs QEMU's 9p, v9fs mounts, alternating samples"
	"$REPO/scripts/bench-9p-servers.sh" 3 2>>"$OUT/bench.log" | tee -a "$OUT/bench.log" |
		awk '/^9p-/ { print $1, $2, $3 }' >>"$RES" || say "the 9P server benchmark failed (see ${OUT#"$REPO"/}/9p-servers.log)"
	grep '^9p-ratio' "$RES" || true
fi

if part 9p-reactor; then
	say "9P reads from rnvme's ext4: stage 35's r9p (file reactor) vs stage 31's (synchronous), 4 clients, ${BENCH_ROUNDS:-5} rounds (rewrites book/src/benchmarks.md)"
	if "$REPO/scripts/bench-9p-reactor.sh" "${BENCH_ROUNDS:-5}" >"$OUT/9p-reactor-report.txt" 2>>"$OUT/bench.log"; then
		cat "$OUT/9p-reactor-report.txt" >>"$OUT/bench.log"
		grep -v '^9p-reactor-' "$OUT/9p-reactor-report.txt" >&2 # the table
		awk 'NF == 3 && /^9p-reactor-/' "$OUT/9p-reactor-report.txt" >>"$RES"
		grep -E '^9p-reactor-[a-z-]+-ratio ' "$RES" || true
	else
		say "the 9P reactor benchmark failed (see ${OUT#"$REPO"/}/bench.log and 9p-reactor.txt)"
	fi
fi

say "results in ${RES#"$REPO"/}"
