# shellcheck shell=bash
# Every program the VM and the tests run, with the Debian package that has
# it. The guest runs the host's root file system, so these must be on the
# host: virtme-ng's guest init brings the loopback up with `ip` and starts
# udevd; vng runs `file` on the kernel; the stage tests run the rest. On a
# minimal Debian (debootstrap --variant=minbase, the official container
# image) several are missing, on Debian 12 and 13 alike (e2fsprogs: not in
# a minimal Debian 13 at all); setup.sh installs them (DEB_KERNEL,
# DEB_STAGE_TOOLS) and host_check says clearly when one is still missing,
# naming each program with its package, instead of a test failing far away.
HOST_PROGRAMS=(
	# virtme-ng, host side and guest init
	qemu-system-x86_64:qemu-system-x86 file:file ip:iproute2 udevadm:udev
	mount:mount umount:mount python3:python3
	# the stage tests, in the guest
	insmod:kmod rmmod:kmod modprobe:kmod dmesg:util-linux flock:util-linux timeout:coreutils
	blockdev:util-linux setpriv:util-linux
	awk:mawk sed:sed grep:grep find:findutils ps:procps cmp:diffutils diff:diffutils
	# the NVMe and 9P stages (not needed, so not checked, when setup.sh
	# runs with RKW_SETUP_STAGE_TOOLS=0: a first `make run STEP=01`);
	# stages 13, 18 and 30 make and check an ext4 file system on a disk
	fio:fio nvme:nvme-cli diod:diod mkfs.ext4:e2fsprogs e2fsck:e2fsprogs
)
STAGE_PROGRAMS=" fio nvme diod mkfs.ext4 e2fsck "
# These live in /usr/sbin, which a normal user's PATH on Debian 12 and 13
# lacks (/etc/login.defs ENV_PATH); the guest runs the tests as root, whose
# PATH has it. So they count as installed when they are there, on PATH or
# not. (RKW_SBIN_DIRS: where to look; empty, PATH alone.)
SBIN_PROGRAMS=" insmod rmmod modprobe blockdev nvme diod mkfs.ext4 e2fsck "
RKW_SBIN_DIRS=${RKW_SBIN_DIRS-/usr/sbin /sbin}

host_programs() { # the program names alone
	local e
	for e in "${HOST_PROGRAMS[@]}"; do echo "${e%%:*}"; done
}

have_program() { # have_program NAME: installed, as host_check counts it
	local d
	command -v "$1" >/dev/null 2>&1 && return 0
	[[ "$SBIN_PROGRAMS" == *" $1 "* ]] || return 1
	for d in $RKW_SBIN_DIRS; do
		[ -x "$d/$1" ] && return 0
	done
	return 1
}

host_check() { # fail, naming each missing program and its package
	local e prog pkg missing=() pkgs=()
	for e in "${HOST_PROGRAMS[@]}"; do
		prog=${e%%:*} pkg=${e#*:}
		have_program "$prog" && continue
		[ "${RKW_SETUP_STAGE_TOOLS:-1}" != 0 ] || [[ "$STAGE_PROGRAMS" != *" $prog "* ]] || continue
		missing+=("$prog ($pkg)")
		[[ " ${pkgs[*]} " == *" $pkg "* ]] || pkgs+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	local list
	list=$(printf '%s, ' "${missing[@]}")
	die "these programs are missing: ${list%, }. The VM and the tests need them; install them with:
    sudo apt-get install ${pkgs[*]}"
}
