#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in devDependencies)
# against the real server: built, started on a free loopback port with a fresh SQLite database and
# the sample content, then checked with the requirement sets of 2026-07-28 and 2025-11-25. The
# scenarios we are allowed to fail (only those that need the suite's own fixture tools, prompts or
# resources) are in test/mcp/conformance-expected-failures.yml; the suite fails on any other failure
# and on an entry that passes (a stale baseline).
#
#   scripts/mcp-conformance.sh [--no-build]
#
# The server runs on this Node; the suite needs Node 22 or newer (fs.globSync), so on Node 20 it
# runs on node@24 from the npm registry, installed in the temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

[ "${1:-}" = "--no-build" ] || npm run build --silent

WORK="$(mktemp -d "${TMPDIR:-/tmp}/guides-mcp-conformance-XXXXXX")"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

SUITE_NODE=node
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  echo "== installing node@24 for the conformance suite (it needs Node 22 or newer)"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$WORK/node" node@24 >/dev/null
  SUITE_NODE="$(find "$WORK/node/node_modules" -path '*/bin/node' -type f -perm -u+x -print -quit)"
  [ -n "$SUITE_NODE" ] || { echo "node@24: no binary found under $WORK/node" >&2; exit 1; }
fi
echo "== suite on node $("$SUITE_NODE" --version), server on node $(node --version)"

PORT="$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
# localhost, not 127.0.0.1: the dns-rebinding-protection scenario only runs against a localhost URL.
URL="http://localhost:$PORT/mcp"
# The suite sends a few hundred requests from one address: the rate limit is off for this run
# (its 429s are covered by test/http/routes/mcp-http.test.ts).
DATABASE_URL="sqlite:$WORK/guides.db" HOST=127.0.0.1 PORT="$PORT" PUBLIC_BASE_URL="http://localhost:$PORT" \
  RATE_LIMIT_PER_MINUTE=0 LOG_LEVEL=warn node dist/cli.js serve >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
ready() { node -e "fetch('http://127.0.0.1:$PORT/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; }
for _ in $(seq 1 100); do
  if ready; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/server.log"; echo "== the server did not start" >&2; exit 1; fi
  sleep 0.2
done
ready || { cat "$WORK/server.log"; echo "== the server is not ready" >&2; exit 1; }

status=0
for revision in 2026-07-28 2025-11-25; do
  echo "== MCP conformance, requirements $revision, against $URL"
  (cd "$WORK" && "$SUITE_NODE" "$ROOT/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
    --url "$URL" --requirements "$revision" \
    --expected-failures "$ROOT/test/mcp/conformance-expected-failures.yml") || status=$?
done
if [ "$status" -ne 0 ]; then
  echo "== server log:"; tail -n 50 "$WORK/server.log"
  echo "== MCP conformance failed" >&2
fi
exit "$status"
