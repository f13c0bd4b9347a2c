#!/bin/sh
# A job run handled by a shell script under `npx gaffer agent` (docs/command-agent.md):
#
#   npx gaffer agent --role backup --no-tasks -- sh examples/command-agent/nightly-backup.sh
#
# Each step is checkpointed with a control line (::gaffer:<this attempt's $GAFFER_CONTROL_TOKEN>::,
# so text the script prints cannot pass for one); on a retry, $GAFFER_COMPLETED_STEPS lists the
# steps an earlier attempt finished, and they are skipped. The archive is named after the slot, so
# running a slot again overwrites it instead of adding a second one.
set -eu

SOURCE="${BACKUP_SOURCE:-.}"
DEST="${BACKUP_DEST:-${TMPDIR:-/tmp}/gaffer-backups}"
SLOT="${GAFFER_SLOT:-manual}"
ARCHIVE="$DEST/backup-$(printf '%s' "$SLOT" | tr ':' '-').tar.gz"

control() { printf '::gaffer:%s:: %s\n' "${GAFFER_CONTROL_TOKEN:-}" "$1"; }
done_before() { case "${GAFFER_COMPLETED_STEPS:-[]}" in *"\"$1\""*) return 0 ;; *) return 1 ;; esac; }

if done_before archive; then
  echo "archive of $SLOT was made by an earlier attempt: $ARCHIVE"
else
  mkdir -p "$DEST" || exit 75                              # cannot write there now: try again later
  tar -czf "$ARCHIVE" -C "$SOURCE" . 2>/dev/null || exit 75
  control "{\"step\":\"archive\",\"ref\":\"$ARCHIVE\"}"
fi

if done_before verify; then
  echo "verified by an earlier attempt"
else
  tar -tzf "$ARCHIVE" >/dev/null || exit 65                # a broken archive will not fix itself
  control '{"step":"verify"}'
fi

printf '{"archive":"%s","bytes":%s}\n' "$ARCHIVE" "$(wc -c < "$ARCHIVE" | tr -d ' ')" > "$GAFFER_OUTPUT_FILE"
echo "backup of slot $SLOT in $ARCHIVE"
