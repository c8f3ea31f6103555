#!/bin/bash
# Runs inside the VM: test stages' modules, one tree after the other, all in
# one boot. Usage: guest-run.sh NN-name:tree[,tree]...
# Output per stage and tree: RKW:begin STAGE TREE, the test's RKW:ok /
# RKW:not-ok lines, RKW:end STAGE TREE. If a test left the kernel tainted (an
# oops, a warning), the rest would be judged on a broken kernel: print
# RKW:stop and end, and the host boots a fresh VM for the remaining stages.
cd "$(dirname "$0")/.." || exit 1
export RKW_NVME_TRACE=${RKW_NVME_TRACE:-}

# shellcheck source=health.sh
. tests/health.sh

echo "RKW:guest-up $(uname -r)"
for arg in "$@"; do
	STAGE=${arg%%:*}
	MODULE="" DEVICES="" KMEMLEAK="" TIMEOUT=""
	# shellcheck disable=SC1090
	. "tests/$STAGE/stage.env"
	RKW_STAGE_DEVICES=$DEVICES RKW_STAGE_KMEMLEAK=$KMEMLEAK
	export MODULE RKW_STAGE_DEVICES RKW_STAGE_KMEMLEAK
	trees=${arg#*:}
	for t in ${trees//,/ }; do
		if [ "$(bad_taint)" -ne 0 ]; then
			echo "RKW:stop kernel tainted ($(cat /proc/sys/kernel/tainted)) before $STAGE $t"
			exit 0
		fi
		echo "RKW:begin $STAGE $t"
		KO=$(find "build/modules-${RKW_FLAVOUR:-debug}/$t/$STAGE" -name "$MODULE.ko" 2>/dev/null | head -1)
		if [ -z "$KO" ]; then
			echo "RKW:not-ok $MODULE.ko was built"
		else
			KO=$PWD/$KO timeout -k 5 "${RKW_TEST_TIMEOUT:-${TIMEOUT:-240}}" bash "tests/$STAGE/test.sh" "$t" ||
				echo "RKW:not-ok the test script finished (exit status $?)"
		fi
		# A module the test left behind would spoil the next run.
		grep -q "^$MODULE " /proc/modules && rmmod "$MODULE" 2>/dev/null
		echo "RKW:end $STAGE $t"
	done
done
echo "RKW:all-done"
