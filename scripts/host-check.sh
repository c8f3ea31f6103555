# shellcheck shell=bash
# Every program the VM and the tests run, with the Debian package that has
# it. The guest runs the host's root file system, so these must be on the
# host: virtme-ng's guest init brings the loopback up with `ip` and starts
# udevd; vng runs `file` on the kernel; the stage tests run the rest. On a
# minimal Debian (debootstrap --variant=minbase, the official container
# image) several are missing; setup.sh installs them (DEB_KERNEL, DEB_STAGE_TOOLS) and
# host_check says clearly when one is still missing, instead of a test
# failing far away.
HOST_PROGRAMS=(
	# virtme-ng, host side and guest init
	qemu-system-x86_64:qemu-system-x86 file:file ip:iproute2 udevadm:udev
	mount:mount python3:python3
	# the stage tests, in the guest
	insmod:kmod rmmod:kmod modprobe:kmod dmesg:util-linux flock:util-linux timeout:coreutils
	awk:mawk sed:sed grep:grep find:findutils ps:procps
	# the NVMe and 9P stages (not needed, so not checked, when setup.sh
	# runs with RKW_SETUP_STAGE_TOOLS=0: a first `make run STEP=01`)
	fio:fio nvme:nvme-cli diod:diod
)
STAGE_PROGRAMS=" fio nvme diod "

host_programs() { # the program names alone
	local e
	for e in "${HOST_PROGRAMS[@]}"; do echo "${e%%:*}"; done
}

host_check() { # fail, naming the packages, if a program is missing
	local e missing=() pkgs=()
	for e in "${HOST_PROGRAMS[@]}"; do
		command -v "${e%%:*}" >/dev/null 2>&1 && continue
		[ "${RKW_SETUP_STAGE_TOOLS:-1}" != 0 ] || [[ "$STAGE_PROGRAMS" != *" ${e%%:*} "* ]] || continue
		missing+=("${e%%:*}")
		[[ " ${pkgs[*]} " == *" ${e#*:} "* ]] || pkgs+=("${e#*:}")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	die "these programs are missing: ${missing[*]}. The VM and the tests need them; install them with:
    apt-get install ${pkgs[*]}"
}
