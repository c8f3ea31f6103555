#!/bin/bash
# Configure a kernel build directory from tinyconfig + the config fragments
# (kernel/workshop.config, then the flavour's own, later ones win).
# Usage: kernel-config.sh SRC OUT FRAGMENT...
set -euo pipefail
. "$(dirname "$0")/common.sh"

SRC=$1 OUT=$2
shift 2
FRAGS=("$@")
# shellcheck disable=SC2046
KMAKE=(make -s -C "$SRC" O="$OUT" $(kmake_args))

"${KMAKE[@]}" tinyconfig >/dev/null
# Merge only (-m), then let allnoconfig resolve it: unlisted symbols stay off.
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$OUT" "$OUT/.config" "${FRAGS[@]}" >/dev/null
mv "$OUT/.config" "$OUT/workshop-allconfig"
"${KMAKE[@]}" KCONFIG_ALLCONFIG="$OUT/workshop-allconfig" allnoconfig >/dev/null

# Kconfig drops options whose dependencies are unmet without a word: check.
missing=()
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$OUT/.config" || missing+=("$line (got: $(grep -E "^(# )?${line%%=*}[= ]" "$OUT/.config" || echo unset))")
		;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }
		sym=${sym%% *}
		if grep -qE "^$sym=" "$OUT/.config"; then missing+=("$line (got: $(grep -E "^$sym=" "$OUT/.config"))"); fi
		;;
	esac
done < <(
	# The effective fragment: the last line for each symbol wins.
	cat "${FRAGS[@]}" | grep -E '^(CONFIG_|# CONFIG_.* is not set)' | tac |
		awk '{ sym = $0; sub(/^# /, "", sym); sub(/[= ].*/, "", sym); if (!seen[sym]++) print }' | tac
)
if [ ${#missing[@]} -gt 0 ]; then
	printf '  %s\n' "${missing[@]}" >&2
	die "these options of ${FRAGS[*]##*/} did not survive Kconfig (unmet dependencies?)"
fi
