#!/bin/bash
# For maintainers: rehearse the README's two commands on a fresh minimal
# Debian root, the machine a learner starts from. It makes the root with
# debootstrap --variant=minbase, installs only make, git and sudo in it,
# clones this repository's HEAD into it (a clean clone: uncommitted changes
# are not in it), and runs, as a user with sudo rights,
#     make run STEP=01 CMD=true
#     make test
# each with a log of its own and its elapsed time. A package or program a
# minimal root lacks shows up here first, not on a learner's machine.
#
# Usage: sudo scripts/rehearse-fresh-root.sh [options] bookworm|trixie
#   --dir DIR        where the roots and logs go (default /var/tmp/rkw-roots):
#                    the root is DIR/RELEASE, the logs DIR/RELEASE-logs/TIME/
#   --until PHASE    stop after PHASE:
#                      root      the root, make/git/sudo, the user, the clone
#                      packages  setup's Debian packages and program check, as
#                                `make run STEP=01` and then `make test` run
#                                them (no crates.io tools, no kernel, no VM:
#                                a few minutes, mostly downloads)
#                      run       make run STEP=01 CMD=true (builds the fast kernel)
#                      test      make test (the default: both kernels, every stage)
#   --replace        remove an earlier root of RELEASE first (else: refuse)
#   --reuse          go on in an earlier root of RELEASE as it is (no
#                    debootstrap; a new clone): quicker, but not fresh
#   --mirror URL     Debian mirror (default http://deb.debian.org/debian)
#   --bare-sources   keep the one apt line debootstrap writes (RELEASE main),
#                    without RELEASE-updates and RELEASE-security that a
#                    normal install has: to see setup's message about them
#   --as-root        run the commands as root in the root, not as a user
#   --host-ca        trust in the root the certificate authorities this
#                    machine added (/usr/local/share/ca-certificates: a
#                    TLS-inspecting proxy's), so that cargo and pip reach
#                    crates.io and PyPI through it; without it such a
#                    machine fails at `cargo install` ("self-signed
#                    certificate in certificate chain")
#
# The root gets /proc, /sys and /dev (with /dev/kvm, if the host has it)
# bind-mounted; they are unmounted on exit, also after an error or Ctrl-C.
# Daemons are not started in the root (policy-rc.d), so that a udevd of the
# root never runs on the host's /dev.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
note() { printf '    %s\n' "$*" >&2; }
die() {
	printf '\033[31merror:\033[0m %s\n' "$*" >&2
	exit 1
}
usage() {
	sed -n '/^# Usage:/,/^# The root gets/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

DIR=/var/tmp/rkw-roots
UNTIL='test'
MODE=fresh
MIRROR=http://deb.debian.org/debian
SECURITY_MIRROR=http://deb.debian.org/debian-security
BARE_SOURCES=0
AS_ROOT=0
HOST_CA=0
RELEASE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--dir) DIR=${2:?--dir needs a directory} && shift ;;
	--dir=*) DIR=${1#*=} ;;
	--until) UNTIL=${2:?--until needs a phase} && shift ;;
	--until=*) UNTIL=${1#*=} ;;
	--replace) MODE=replace ;;
	--reuse) MODE=reuse ;;
	--mirror) MIRROR=${2:?--mirror needs a URL} && shift ;;
	--mirror=*) MIRROR=${1#*=} ;;
	--bare-sources) BARE_SOURCES=1 ;;
	--as-root) AS_ROOT=1 ;;
	--host-ca) HOST_CA=1 ;;
	-h | --help) usage ;;
	-*) die "unknown option $1 (--help lists them)" ;;
	*)
		[ -z "$RELEASE" ] || die "one release only, not $RELEASE and $1"
		RELEASE=$1
		;;
	esac
	shift
done
case "$RELEASE" in
bookworm | trixie) ;;
"") usage ;;
*) die "RELEASE must be bookworm (Debian 12) or trixie (Debian 13), not $RELEASE" ;;
esac
case "$UNTIL" in root | packages | run | test) ;; *) die "--until takes root, packages, run or test, not $UNTIL" ;; esac
# debootstrap, chroot and mounts need root; sudo re-runs this script as root.
[ "$(id -u)" = 0 ] || die "run it as root (sudo $0 ...): debootstrap, chroot and bind mounts need root"
case "$DIR" in /*) ;; *) die "--dir must be an absolute path" ;; esac
# Canonical: cleanup finds the root's processes by their /proc/PID/root.
DIR=$(realpath -m "$DIR")
[ "$DIR" != / ] || die "--dir / would make the root /$RELEASE"
# HEAD once: others may commit while the rehearsal runs.
HEAD=$(git -C "$REPO" rev-parse --verify -q HEAD) || die "$REPO has no commit to clone"

ROOT="$DIR/$RELEASE"
LOGS="$DIR/$RELEASE-logs/$(date +%Y%m%d-%H%M%S)"
USER_NAME=learner
OWNER=$USER_NAME HOME_IN_ROOT=/home/$USER_NAME
[ "$AS_ROOT" = 0 ] || OWNER=root HOME_IN_ROOT=/root
CLONE=$HOME_IN_ROOT/rust-kernel-workshop
mkdir -p "$DIR" "$LOGS"
# Two rehearsals in one root would step on each other's mounts.
exec 9>"$DIR/$RELEASE.lock"
flock -n 9 || die "another rehearsal of $RELEASE is running (lock: $DIR/$RELEASE.lock)"

mounted_under() { # the mount points at or under $1, deepest first
	findmnt -rn -o TARGET | awk -v r="$1" '$0 == r || index($0, r "/") == 1' | sort -r
}

# ---- cleanup: leave nothing running in the root and nothing mounted --------
cleanup() {
	local rc=$? pid m
	trap - EXIT INT TERM
	[ -d "$ROOT" ] || exit "$rc"
	# A process still running in the root (a VM of make test after a Ctrl-C,
	# say) keeps its mounts busy: it is this rehearsal's, so stop it.
	for pid in /proc/[0-9]*; do
		[ "$(readlink "$pid/root" 2>/dev/null)" = "$ROOT" ] && kill "${pid#/proc/}" 2>/dev/null
	done
	sleep 1
	for m in dev sys proc; do
		mountpoint -q "$ROOT/$m" || continue
		if ! umount -R "$ROOT/$m" 2>/dev/null; then
			note "$ROOT/$m is busy: detached lazily (umount -R -l)"
			umount -R -l "$ROOT/$m" || true
		fi
	done
	if [ -n "$(mounted_under "$ROOT")" ]; then
		note "still mounted under $ROOT:"
		mounted_under "$ROOT" | sed 's/^/      /' >&2
		[ "$rc" != 0 ] || rc=1
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- phases: each with its log and elapsed time ------------------------------
N=0
SUMMARY=()
# (The commands of a phase's functions are chained with && by hand: under
# `||` bash ignores set -e inside a function.)
phase() { # phase NAME CMD...: run CMD, its output in its own log; stop on failure
	local name=$1 log t0 dt rc=0
	shift
	N=$((N + 1))
	log="$LOGS/$(printf %02d "$N")-$name.log"
	say "$name (log: $log)"
	t0=$(date +%s)
	"$@" >"$log" 2>&1 </dev/null || rc=$?
	dt=$(($(date +%s) - t0))
	if [ "$rc" = 0 ]; then
		note "$name: ok, $dt s"
		SUMMARY+=("$(printf '%-22s %6s s  ok' "$name" "$dt")")
	else
		note "$name: FAILED (exit $rc) after $dt s; the last lines of $log:"
		tail -15 "$log" | sed 's/^/      /' >&2
		SUMMARY+=("$(printf '%-22s %6s s  FAILED (exit %s)' "$name" "$dt" "$rc")")
		summary
		exit 1
	fi
}
summary() {
	say "rehearsal of $RELEASE (HEAD ${HEAD:0:12}, until $UNTIL), logs in $LOGS:"
	printf '    %s\n' "${SUMMARY[@]}" >&2
	printf '%s\n' "${SUMMARY[@]}" >"$LOGS/summary.txt"
}

in_root() { # in_root CMD...: CMD as root in the root, with a clean environment
	chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
as_learner() { # as_learner 'SHELL CODE': in the clone, as the learner would
	if [ "$AS_ROOT" = 1 ]; then
		in_root bash -lc "cd $CLONE && $1"
	else
		# A login shell of the user (runuser -l): their HOME, hence their
		# ~/.cache, and sudo for setup's apt-get.
		# Through a pipe of the user's own: vng reopens its stdout and
		# stderr (/proc/self/fd/1, O_RDWR) to connect the VM's console, which
		# the user may not do to root's log file or pipe; it then falls
		# back, and the VM never returns (seen: make run STEP=01 killed
		# after 600 s in the trixie rehearsal).
		in_root runuser -l "$USER_NAME" -c "cd $CLONE && { $1; } 2>&1 | cat; exit \${PIPESTATUS[0]}"
	fi
}

# ---- 1. the root -------------------------------------------------------------
make_root() {
	debootstrap --variant=minbase "$RELEASE" "$ROOT" "$MIRROR"
}
if [ -e "$ROOT" ]; then
	[ -z "$(mounted_under "$ROOT")" ] || die "something is mounted under $ROOT (findmnt): unmount it first"
	case "$MODE" in
	replace)
		say "removing the earlier root $ROOT"
		# --one-file-system: never into a mount, should one appear.
		rm -rf --one-file-system "$ROOT"
		;;
	reuse) say "reusing the earlier root $ROOT (not fresh)" ;;
	fresh) die "$ROOT exists: --replace removes it, --reuse goes on in it" ;;
	esac
fi
if [ ! -e "$ROOT/.rkw-root-made" ]; then
	command -v debootstrap >/dev/null || {
		# The host's apt: it is this machine that makes the root.
		say "installing debootstrap on this machine"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	}
	rm -rf --one-file-system "$ROOT"
	phase debootstrap make_root
	touch "$ROOT/.rkw-root-made"
fi

# What a normal install's apt sources have (debootstrap writes only the
# first line); --bare-sources keeps debootstrap's.
configure_root() {
	if [ "$BARE_SOURCES" = 1 ]; then
		echo "deb $MIRROR $RELEASE main"
	else
		printf '%s\n' "deb $MIRROR $RELEASE main" "deb $MIRROR $RELEASE-updates main" \
			"deb $SECURITY_MIRROR $RELEASE-security main"
	fi >"$ROOT/etc/apt/sources.list" &&
		# A chroot must not start daemons (udev's postinst would start a
		# udevd on the host's /dev): 101 is "action forbidden" to invoke-rc.d.
		printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" &&
		chmod 755 "$ROOT/usr/sbin/policy-rc.d" &&
		# The root has the host's hostname (debootstrap copies it); sudo
		# complains on every call when /etc/hosts does not name it.
		{ grep -qw "$(hostname)" "$ROOT/etc/hosts" 2>/dev/null || echo "127.0.1.1 $(hostname)" >>"$ROOT/etc/hosts"; } &&
		host_ca &&
		cat "$ROOT/etc/apt/sources.list"
}
# --host-ca: the host's added CAs, where the root's ca-certificates (which
# setup installs) picks them up when it builds /etc/ssl/certs.
host_ca() {
	[ "$HOST_CA" = 1 ] || return 0
	mkdir -p "$ROOT/usr/local/share/ca-certificates" &&
		cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/" &&
		note "trusting this machine's added CAs: $(cd /usr/local/share/ca-certificates && echo ./*.crt)"
}
phase configure configure_root

mkdir -p "$ROOT/proc" "$ROOT/sys" "$ROOT/dev"
# rslave: an unmount inside the root never reaches the host's mounts.
mount --rbind /proc "$ROOT/proc" && mount --make-rslave "$ROOT/proc"
mount --rbind /sys "$ROOT/sys" && mount --make-rslave "$ROOT/sys"
mount --rbind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev"
if [ -e /dev/kvm ]; then note "/dev/kvm: there (in the root through /dev)"; else note "/dev/kvm: not on this host (the VM will use TCG)"; fi

# The README's prerequisites and nothing else: make, git, sudo
# (--no-install-recommends, so that no recommended package hides one that
# setup forgot to install).
base_packages() {
	in_root apt-get update &&
		in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends make git sudo
}
phase make-git-sudo base_packages

learner() {
	{ in_root id "$USER_NAME" >/dev/null 2>&1 || in_root useradd -m -s /bin/bash "$USER_NAME"; } &&
		echo "$USER_NAME ALL=(ALL) NOPASSWD:ALL" >"$ROOT/etc/sudoers.d/$USER_NAME" &&
		chmod 440 "$ROOT/etc/sudoers.d/$USER_NAME" &&
		in_root id "$USER_NAME"
}
[ "$AS_ROOT" = 1 ] || phase user learner

clone() {
	local dest="$ROOT$CLONE"
	rm -rf --one-file-system "$dest" &&
		# --no-local: a real clone, as from a server, not hard links into .git.
		git clone --quiet --no-local "$REPO" "$dest" &&
		git -C "$dest" checkout --quiet --detach "$HEAD" &&
		git -C "$dest" log -1 --format='%H %s' &&
		# Numeric ids: the user exists in the root, not on the host.
		chown -R "$(in_root id -u "$OWNER"):$(in_root id -g "$OWNER")" "$dest"
}
phase clone clone

if [ "$UNTIL" = root ]; then
	summary
	exit 0
fi

# ---- 2. the README's commands ------------------------------------------------
if [ "$UNTIL" = packages ]; then
	# Without RKW_SETUP_UNTIL, setup.sh would go on to build kernels: a
	# checkout from before it must not be rehearsed this way.
	grep -q RKW_SETUP_UNTIL "$ROOT$CLONE/scripts/setup.sh" ||
		die "this HEAD's scripts/setup.sh has no RKW_SETUP_UNTIL: --until packages cannot stop it before the kernel"
	# Setup's Debian packages and program check, as the two commands run
	# them (scripts/ensure-setup.sh): make run STEP=01 without the stage
	# tools and the book's browser, then make test with everything.
	phase setup-packages-run01 as_learner \
		'RKW_SETUP_UNTIL=packages RKW_SETUP_FLAVOURS=fast RKW_SETUP_STAGE_TOOLS=0 RKW_SETUP_BOOK=0 scripts/setup.sh'
	phase setup-packages-test as_learner 'RKW_SETUP_UNTIL=packages scripts/setup.sh'
	summary
	exit 0
fi

phase make-run-01 as_learner 'make run STEP=01 CMD=true'
if [ "$UNTIL" = test ]; then
	phase make-test as_learner 'make test'
fi
summary
