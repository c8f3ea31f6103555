#!/bin/bash
# make run: build a stage's module, boot the VM with the stage's devices,
# load the module, then give a root shell (or run CMD and exit with its status).
# Usage: run.sh steps|solutions NN-name [--exec CMD]
set -euo pipefail
. "$(dirname "$0")/common.sh"

TREE=$1 STAGE=$(stage_name "$2")
shift 2
CMD=""
[ "${1:-}" = --exec ] && CMD=$2

say "building $TREE/$STAGE for the $FLAVOUR kernel"
"$REPO/scripts/build-stage.sh" "$TREE" "$STAGE" >/dev/null
MODULE=$(stage_env "$STAGE" MODULE)
KO=$(find "$MODULES_DIR/$TREE/$STAGE" -name "$MODULE.ko" | head -1)

# What the guest runs first: load the module and show what it logged.
BOOT="$REPO/build/run-$STAGE.sh"
cat >"$BOOT" <<EOS
#!/bin/bash
cd "$REPO"
echo "==> insmod $TREE/$STAGE/$MODULE.ko"
if insmod "$KO"; then dmesg | grep -E '^\[ *[0-9.]+\] $MODULE: ' | tail -n 20
else echo "==> insmod failed (see dmesg); the module is not loaded"; fi
EOS
if [ -n "$CMD" ]; then
	echo "$CMD" >>"$BOOT"
	say "booting the VM; running: $CMD"
	exec "$REPO/scripts/vm.sh" --stage "$STAGE" --exec "bash $BOOT"
fi
cat >>"$BOOT" <<'EOS'
echo "==> you are root in the VM. 'dmesg', 'rmmod', 'insmod', then 'exit' (or Ctrl-D) to power off."
exec bash -i
EOS
chmod +x "$BOOT"
say "booting the VM"
exec "$REPO/scripts/vm.sh" --stage "$STAGE" --shell "$BOOT"
