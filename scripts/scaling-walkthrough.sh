#!/usr/bin/env bash
# Runs docs/scaling.md's walkthrough exactly as written: every ```sh block under a
# `<!-- walkthrough -->` line, in order, in one shell that stops at the first failing command.
# It runs from this checkout's folder, as the page says. Names and ports are unique to this run
# (the blocks take them from the environment when set), so runs on one PostgreSQL never clash;
# whatever the walkthrough leaves behind when it fails part-way (its two servers, its database and
# role, its logs) is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

WORK="$(mktemp -d "${TMPDIR:-/tmp}/guides-walkthrough-XXXXXX")"
awk '
  /^<!-- walkthrough -->$/ { marked = 1; next }
  marked && /^```sh$/ { inside = 1; marked = 0; next }
  inside && /^```$/ { inside = 0; print ""; next }
  inside { print }
  { marked = 0 }
' docs/scaling.md >"$WORK/walkthrough.sh"
[ -s "$WORK/walkthrough.sh" ] || { echo "== no walkthrough blocks found in docs/scaling.md" >&2; exit 1; }

free_port() { node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"; }
SUFFIX="$$_$(node -p "require('node:crypto').randomBytes(3).toString('hex')")"
export GUIDES_DB="guides_walk_$SUFFIX" GUIDES_ROLE="guides_walk_$SUFFIX"
PORT_A="$(free_port)"
PORT_B="$(free_port)"
while [ "$PORT_B" = "$PORT_A" ]; do PORT_B="$(free_port)"; done
export PORT_A PORT_B

PID_A="" PID_B=""
cleanup() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    for log in "guides-$PORT_A.log" "guides-$PORT_B.log"; do [ ! -f "$log" ] || { echo "== $log"; cat "$log"; }; done
    echo "== the walkthrough failed (exit $status)" >&2
  fi
  for pid in $PID_A $PID_B; do kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  dropdb -h 127.0.0.1 -p 5432 -U postgres --if-exists --force "$GUIDES_DB" 2>/dev/null || true
  psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -qc "DROP ROLE IF EXISTS $GUIDES_ROLE" >/dev/null 2>&1 || true
  rm -f "guides-$PORT_A.log" "guides-$PORT_B.log"
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== docs/scaling.md walkthrough: $(grep -c '' "$WORK/walkthrough.sh") lines, database $GUIDES_DB, ports $PORT_A and $PORT_B"
# Not set -x: the trial's password and cursor key would be printed.
trap 'echo "== failed: $BASH_COMMAND" >&2' ERR
# shellcheck source=/dev/null
source "$WORK/walkthrough.sh"
echo "== the walkthrough ran from nothing to two instances and back"
