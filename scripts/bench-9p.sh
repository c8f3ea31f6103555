#!/bin/bash
# Benchmark (not a test): how fast the stage-27 codec decodes a typical
# client mix, one Twalk for every three Treads, on the host.
#
#   scripts/bench-9p.sh [SECONDS]    (default 3)
#
# Builds tests/host/stages/examples/bench_9p.rs in release mode with Debian's
# cargo and rustc from the solutions tree, and prints messages/s; the last
# line is "p9-decode-msgs-per-sec N" for scripts to pick up.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO/tests/host"
RKW_TREE=solutions RUSTC=/usr/bin/rustc CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1} \
	/usr/bin/cargo run --quiet --release --example bench_9p -- "${1:-3}"
