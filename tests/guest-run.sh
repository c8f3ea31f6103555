#!/bin/bash
# Runs inside the VM: test one stage's module(s), one tree after the other,
# all in one boot. Usage: guest-run.sh NN-name TREE...
# Output: RKW:begin TREE, the test's RKW:ok / RKW:not-ok lines, RKW:end TREE.
cd "$(dirname "$0")/.." || exit 1
STAGE=$1
shift
# shellcheck disable=SC1090
. "tests/$STAGE/stage.env"
export MODULE

echo "RKW:guest-up $(uname -r)"
for tree in "$@"; do
	echo "RKW:begin $tree"
	KO=$(find "build/modules/$tree/$STAGE" -name "$MODULE.ko" 2>/dev/null | head -1)
	if [ -z "$KO" ]; then
		echo "RKW:not-ok $MODULE.ko was built"
	else
		KO=$PWD/$KO timeout -k 5 "${RKW_TEST_TIMEOUT:-300}" bash "tests/$STAGE/test.sh" "$tree" ||
			echo "RKW:not-ok the test script finished (exit status $?)"
	fi
	# A module the test left behind would spoil the next tree's run.
	grep -q "^$MODULE " /proc/modules && rmmod "$MODULE" 2>/dev/null
	echo "RKW:end $tree"
done
