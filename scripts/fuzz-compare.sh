#!/bin/bash
# make fuzz, third part: the same live fuzzers, with the same seed and
# budget, against r9p (stage 33), diod and QEMU's 9p server, in one VM.
#
#   scripts/fuzz-compare.sh [COUNT] [SEED]
#
# COUNT (default 20000) messages of tests/p9h.py's raw fuzzer over TCP (r9p
# and diod: QEMU's server speaks virtio only), and COUNT system calls of
# its mount fuzzer on a v9fs mount of each of the three (msize 65536,
# cache=none), seed SEED (default 16), on the fast kernel
# (tests/33-9p-users/fuzz-compare-guest.sh). The fixture, on the host in
# build/fuzz/compare-fixture, is what each exports: small files, one of
# mode 600, symlinks out of the export and to themselves, a FIFO, a 1 MiB
# file, a tree 40 deep.
# Prints the table (crashes, hangs, errors, messages per second) and puts
# it in book/src/fuzzing.md between its fuzz-compare markers; the VM's log
# is build/fuzz/compare-vm.log (QEMU's own messages: .stderr beside it).
set -uo pipefail
export RKW_FLAVOUR=${RKW_FLAVOUR:-fast}
. "$(dirname "$0")/common.sh"

COUNT=${1:-20000}
SEED=${2:-16}
[[ "$COUNT" =~ ^[0-9]+$ ]] && [[ "$SEED" =~ ^[0-9]+$ ]] || die "usage: scripts/fuzz-compare.sh [COUNT] [SEED]"
STAGE=33-9p-users
LOGS="$REPO/build/fuzz"
FIX="$LOGS/compare-fixture"
LOG="$LOGS/compare-vm.log"
mkdir -p "$LOGS"

"$REPO/scripts/build-stage.sh" solutions "$STAGE" >/dev/null || die "solutions/$STAGE does not build"
KO="$REPO/build/modules-$FLAVOUR/solutions/$STAGE/r9p.ko"

# The fixture, made once.
if [ ! -f "$FIX/.done" ]; then
	rm -rf "$FIX"
	mkdir -p "$FIX/files"
	for i in $(seq 0 19); do head -c $((i * 1000)) /dev/zero | tr '\0' x >"$FIX/files/f$i"; done
	echo private >"$FIX/private" && chmod 600 "$FIX/private" && chown 1000:1000 "$FIX/private"
	ln -s ../../etc/passwd "$FIX/link"
	ln -s /etc/shadow "$FIX/abs"
	ln -s loop "$FIX/loop"
	mkfifo "$FIX/fifo"
	head -c $((1 << 20)) /dev/urandom >"$FIX/big"
	mkdir -p "$FIX/deep/$(printf 'd/%.0s' $(seq 40))"
	touch "$FIX/.done"
fi

say "booting the VM ($FLAVOUR kernel): $COUNT messages and calls per server and fuzzer, seed $SEED"
t0=$SECONDS
RKW_VM_TIMEOUT=$((600 + COUNT / 5)) RKW_VM_LOG="$LOGS/compare-vm" \
	"$REPO/scripts/vm.sh" --devices "9p:rkwfz=$FIX" \
	--exec "bash tests/$STAGE/fuzz-compare-guest.sh $KO $COUNT $SEED $FIX" >"$LOG" 2>"$LOG.stderr"
# QEMU's own messages (its 9p server's refusals among them) apart from the
# guest's lines, which they would otherwise cut into.
sed 's/^/# qemu: /' "$LOG.stderr" | sort | uniq -c | sort -rn | head -5
say "the comparison took $((SECONDS - t0)) s of VM time"
grep -E '^# ' "$LOG" | grep -vE '^# (fuzz|mountfuzz)-stats' | head -40
grep -q '^compare ' "$LOG" || die "no results (see ${LOG#"$REPO"/})"
python3 - "$LOG" "$REPO/book/src/fuzzing.md" "$COUNT" "$SEED" "$FLAVOUR" <<'PY'
import re, sys
log, page, count, seed, flavour = sys.argv[1:6]
rows = []
for line in open(log, errors="replace"):
    m = re.match(r"^compare (\w+) (\w+) (.*)$", line.strip())
    if not m:
        continue
    server, fuzzer, fields = m.groups()
    f = dict(kv.split("=", 1) for kv in fields.split() if "=" in kv)
    sent = int(f.get("sent", f.get("ops", 0)) or 0)
    secs = float(f.get("seconds", 0) or 0)
    rate = f"{sent / secs:.0f}" if secs > 0 else "-"
    hangs = f.get("hangs", "?")
    if "sent" not in f and "ops" not in f:
        # The fuzzer printed no count: the server died under it, and the
        # client stopped when it could not connect again.
        sent = f"fewer than {count}"
        errors = "the server died (see below); the fuzzer could not connect any more"
    elif fuzzer == "raw":
        errors = f"{f.get('lerror', '?')} Rlerror of {f.get('replies', '?')} replies, {f.get('malformed', '?')} malformed, {f.get('closed', '?')} connections closed"
    else:
        errors = f"{f.get('ioerrors', '?')} I/O errors (EIO, EPROTO, ...) of {f.get('errors', '?')} refused calls"
    rows.append(f"| {server} | {fuzzer} | {sent} | {f.get('crashed', '?')} | {hangs} | {errors} | {rate} |")
rows.append("| qemu | raw | - | - | - | (virtio transport only: no TCP socket to fuzz) | - |")
table = "\n".join(["| server | fuzzer | sent | crashes | hangs | errors | per second |",
                   "| --- | --- | --- | --- | --- | --- | --- |"] + rows +
                  ["", f"Seed {seed}, {count} messages or calls per server and fuzzer, the {flavour} kernel under TCG "
                       "(`scripts/fuzz-compare.sh`)."])
print(table)
text = open(page).read()
new = re.sub(r"(<!-- fuzz-compare:begin -->\n).*?(\n<!-- fuzz-compare:end -->)", lambda m: m.group(1) + table + m.group(2), text, flags=re.S)
open(page, "w").write(new)
PY
