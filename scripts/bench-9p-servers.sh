#!/bin/bash
# make bench, 9P servers: r9p (stage 16) against diod and QEMU's 9p server,
# through v9fs mounts in one VM (fast kernel), samples alternating.
#   scripts/bench-9p-servers.sh [SAMPLES]
# Prints "9p-SERVER-METRIC median unit" lines and the ratios r9p/diod and
# r9p/qemu (median of the per-sample ratios, with their min and max); the
# raw samples go to build/bench/9p-servers.txt.
set -uo pipefail
. "$(dirname "$0")/common.sh"
SAMPLES=${1:-3}
STAGE=16-9p-hardening
OUT="$REPO/build/bench"
QDIR="$OUT/9p-fixture"
RAW="$OUT/9p-servers.txt"
mkdir -p "$OUT" "$QDIR/files"

export RKW_FLAVOUR=fast
"$REPO/scripts/build-stage.sh" solutions "$STAGE" >/dev/null || die "solutions/$STAGE does not build"
KO="$REPO/build/modules-fast/solutions/$STAGE/r9p.ko"
# The same tree on the host, for QEMU's export (the VM's root).
[ "$(find "$QDIR/files" -maxdepth 1 -type f | wc -l)" = 10000 ] || (cd "$QDIR/files" && touch file-{00000..09999})
[ "$(stat -c %s "$QDIR/big" 2>/dev/null)" = $((256 << 20)) ] ||
	head -c $((256 << 20)) /dev/urandom >"$QDIR/big"

# Under TCG one sample of the three servers takes about 3 minutes.
RKW_VM_TIMEOUT=$((300 + SAMPLES * 400)) \
	"$REPO/scripts/vm.sh" --exec "bash tests/$STAGE/bench-guest.sh $KO $QDIR $SAMPLES" >"$OUT/9p-servers.log" 2>&1
grep -E '^(r9p|diod|qemu) [0-9]+ [A-Za-z0-9-]+ [0-9.]+$' "$OUT/9p-servers.log" >"$RAW" ||
	die "no samples (see ${OUT#"$REPO"/}/9p-servers.log)"
grep '^# ' "$OUT/9p-servers.log"

python3 - "$RAW" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
v = {(srv, int(s), m): float(x) for srv, s, m, x in rows}
metrics = sorted({m for _, _, m in v}, key=lambda m: [r[2] for r in rows].index(m))
samples = sorted({s for _, s, _ in v})
unit = lambda m: m.split("-", 1)[1] if m.startswith("seqread") else "ops/s"
for m in metrics:
    for srv in ("r9p", "diod", "qemu"):
        xs = [v[(srv, s, m)] for s in samples if (srv, s, m) in v]
        print(f"9p-{srv}-{m} {statistics.median(xs):.1f} {'MB/s' if m.startswith('seqread') else '/s'}")
    for other in ("diod", "qemu"):
        rs = [v[("r9p", s, m)] / v[(other, s, m)] for s in samples if ("r9p", s, m) in v and (other, s, m) in v]
        if rs:
            print(f"9p-ratio-r9p/{other}-{m} {statistics.median(rs):.2f} x (min {min(rs):.2f}, max {max(rs):.2f}, {len(rs)} samples)")
EOF
