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

# Where the stage's exercises are, for the message a failing skeleton gets.
N=${STAGE%%-*}
TODOS=$(cd "$REPO" && grep -n 'TODO' "$TREE/$STAGE"/*.rs "$TREE/$STAGE"/*/*.rs 2>/dev/null | sed -E 's/^([^:]*:[0-9]+):[[:space:]]*(\/\/[/!]?)?[[:space:]]*/\1  /' | cut -c1-100 | head -8 | sed 's/^/        /') || true

# What the guest runs first: load the module and show what it logged.
BOOT="$REPO/build/run-$STAGE.sh"
cat >"$BOOT" <<EOS
#!/bin/bash
cd "$REPO"
echo "==> insmod ${KO#"$REPO"/}"
if insmod "$KO"; then
	dmesg | grep -E '^\[ *[0-9.]+\] $MODULE: ' | tail -n 20
	[ "$TREE" != steps ] || echo "==> your steps/$STAGE is loaded; once its TODOs are written: make check STEP=$N"
elif [ "$TREE" = steps ]; then
	cat <<'MSG'
==> The module did not load: its init returned an error (insmod printed it above;
    dmesg may have nothing from it). On an untouched skeleton this is expected:
    this is the exercise. The skeleton's TODOs return an error until you write them:
$TODOS
    Next: read the chapter (make book), write the TODOs, then run
        make check STEP=$N          (each check says what it wants)
        make run STEP=$N FROM=solutions   (to see what the finished stage does)
MSG
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
