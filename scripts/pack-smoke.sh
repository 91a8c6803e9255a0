#!/usr/bin/env bash
# The production path, as an operator takes it (docs/deploy.md): the package built and packed once,
# installed in an empty folder with production dependencies only, then `npx guides serve` on a
# temporary SQLite database answers /readyz and the sample guides, and exits 0 on SIGTERM.
# The install builds better-sqlite3 from source when no prebuilt binary fits (minutes of CPU).
set -euo pipefail
cd "$(dirname "$0")/.."

WORK="$(mktemp -d "${TMPDIR:-/tmp}/guides-pack-XXXXXX")"
NPX="" SERVER=""
cleanup() {
  for pid in $SERVER $NPX; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

npm run build --silent
TARBALL="$(npm pack --silent --pack-destination "$WORK" | tail -n 1)"
echo "== packed $TARBALL ($(du -k "$WORK/$TARBALL" | cut -f1) kB)"

mkdir "$WORK/app"
cd "$WORK/app"
echo "== npm install --omit=dev ./$TARBALL, in an empty folder"
npm install --omit=dev --no-audit --no-fund --loglevel=error "../$TARBALL" >/dev/null
for dev in typescript esbuild tsx vitest; do
  if [ -e "node_modules/$dev" ]; then echo "== a devDependency was installed: $dev" >&2; exit 1; fi
done

PORT="$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
DATABASE_URL="sqlite:$WORK/guides.db" PORT="$PORT" npx --no guides serve >"$WORK/serve.log" 2>&1 &
NPX=$!
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 1 100); do
  curl -sf "$BASE/readyz" >/dev/null && break
  kill -0 "$NPX" 2>/dev/null || { cat "$WORK/serve.log"; echo "== guides serve exited" >&2; exit 1; }
  sleep 0.3
done
curl -sf "$BASE/readyz" >/dev/null || { cat "$WORK/serve.log"; echo "== /readyz never answered" >&2; exit 1; }
GUIDES="$(curl -sf "$BASE/api/v1/guides?limit=50")"
case "$GUIDES" in
  *'"slug":"reduce-food-waste"'*) echo "== /readyz and /api/v1/guides answered from the installed package" ;;
  *) echo "$GUIDES"; echo "== the sample guides are not served" >&2; exit 1 ;;
esac

# npx runs the server under `sh -c` and does not pass SIGTERM on to it (a process manager starts
# node itself, docs/deploy.md): the signal goes to the server, whose log lines carry its pid, and
# npx exits with the server's exit code.
SERVER="$(grep -o '"pid":[0-9]*' "$WORK/serve.log" | head -n 1 | cut -d: -f2)"
[ -n "$SERVER" ] || { cat "$WORK/serve.log"; echo "== no pid in the server's log" >&2; exit 1; }
kill -TERM "$SERVER"
STATUS=0
wait "$NPX" || STATUS=$?
NPX="" SERVER=""
if [ "$STATUS" -ne 0 ]; then cat "$WORK/serve.log"; echo "== guides serve exited $STATUS on SIGTERM" >&2; exit 1; fi
echo "== stopped on SIGTERM with exit 0"
