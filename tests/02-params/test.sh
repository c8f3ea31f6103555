#!/bin/bash
# Stage 02 test (runs in the VM): rparams with default, good and bad values.
. "$(dirname "$0")/../lib.sh"

# refused PARAMS... REGEX: insmod must fail with EINVAL, log REGEX, and leave
# nothing loaded.
refused() {
	local regex=${*: -1} out rc=0
	local params=("${@:1:$#-1}")
	mark
	out=$(insmod "$KO" "${params[@]}" 2>&1) || rc=$?
	if [ $rc -ne 0 ] && grep -q 'Invalid parameters' <<<"$out" && ! loaded; then
		pass "insmod ${params[*]} fails with EINVAL"
	else
		loaded && rmmod "$MODULE"
		fail "insmod ${params[*]} fails with EINVAL" "insmod said (exit $rc): ${out:-nothing}"
	fi
	hint "init logs the refused value with pr_err! before returning EINVAL"
	expect_dmesg "the log says why ${params[*]} is refused" "^rparams: $regex\$"
}

hint "with no parameters the defaults (64 entries, 4 queues) must be accepted"
if load; then
	expect_dmesg "reports the default configuration" '^rparams: 4 queues of 64 entries \(2\^6\), 16384 bytes of rings$'
	expect_no_dmesg "is quiet by default (verbose=0)" '^rparams: queue 0:'
	unload
fi

mark
hint "queue_depth=256 nr_queues=8 is valid"
if load queue_depth=256 nr_queues=8 verbose=1; then
	expect_dmesg "uses the given values" '^rparams: 8 queues of 256 entries \(2\^8\), 131072 bytes of rings$'
	expect_dmesg "verbose=1 logs every queue" '^rparams: queue 7: ring bytes 114688\.\.131072$'
	unload
fi

mark
hint "the limits themselves are valid values"
load queue_depth=4096 nr_queues=64 && unload
mark
load queue_depth=2 nr_queues=1 && unload

hint "Config::new must refuse a depth that is not a power of two"
refused queue_depth=100 'queue_depth=100 refused: must be a power of two'
hint "Config::new must refuse a depth above MAX_DEPTH"
refused queue_depth=8192 'queue_depth=8192 refused: must be between 2 and 4096'
hint "Config::new must refuse a depth below MIN_DEPTH"
refused queue_depth=1 'queue_depth=1 refused: must be between 2 and 4096'
hint "Config::new must refuse zero queues"
refused nr_queues=0 'nr_queues=0 refused: must be between 1 and 64'
hint "Config::new must refuse more than MAX_QUEUES queues"
refused queue_depth=128 nr_queues=65 'nr_queues=65 refused: must be between 1 and 64'

# The kernel itself rejects what does not parse as a u32, before init runs.
mark
check_fails "insmod queue_depth=abc is refused by the kernel" insmod "$KO" queue_depth=abc
check_fails "and leaves nothing loaded" loaded

reload_twice
finish
