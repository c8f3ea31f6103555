"""VM boots for tests: one way to boot, scripts/test.sh's run_boots.

make test and make check call it in the shell; Python callers (teeth) call
run_stage here, which runs test.sh's run_stage (the stage's kernel
arguments, vCPUs and QMP, as make test boots it) in a bash that sourced
test.sh. What a boot does then is run_boots's: as few boots as possible, a
fresh one for the runs a boot did not begin, a boot that hangs or a guest
that stalls stopped whole, after-vm.sh on the kept NVMe images.
"""

import os
import subprocess

from rkw import REPO

# run_stage's status is not the runs' (judged from the log): a failure here
# is one to source test.sh or to run it.
_SCRIPT = '. "$REPO/scripts/test.sh" && LOGS=$1 VMLOG=$2 BOOT=$3 && run_stage "$4" "$5" >&2 && echo "$BOOT"'


def run_stage(stage, trees, log, logs, boot=0, boot_id="", after_vm_trees=""):
    """STAGE's TREES in as few boots as possible, booted as make test boots
    the stage. Their KTAP is appended to LOG; each boot's output is in
    LOGS/vm-BOOT_ID-FLAVOUR-N.out (N counting on from BOOT, the boots
    before). AFTER_VM_TREES: the trees after-vm.sh checks (all if empty).
    Returns the number of boots after this."""
    env = dict(os.environ, REPO=REPO, BOOT_ID=boot_id, AFTER_VM_TREES=after_vm_trees)
    r = subprocess.run(["bash", "-c", _SCRIPT, "rkw-boots", logs, log, str(boot), stage, ",".join(trees)],
                       env=env, stdout=subprocess.PIPE, text=True)
    last = r.stdout.split()[-1:]
    if r.returncode != 0 or not last or not last[0].isdigit():
        raise RuntimeError(f"rkw.boots: test.sh's run_stage failed (status {r.returncode}, said {r.stdout!r})")
    return int(last[0])
