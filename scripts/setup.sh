#!/usr/bin/env bash
# Create .venv (if needed) and install nexus into it. Usage: scripts/setup.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
extra=""
[ "${1:-}" = "--test" ] && extra="[test]"
# compat editable mode: a plain path entry, no import hook on every start-up (hooks are hot); the
# sources are read in place, so only a changed pyproject.toml (or extra) installs again
stamp=".venv/.installed${extra}"
want="$(cat pyproject.toml "$0" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check \
    --config-settings editable_mode=compat -e ".${extra}"
  echo "$want" > "$stamp"
fi
# bytecode up front: the hook hot path must not compile on every call
.venv/bin/python -m compileall -q nexus_cli >/dev/null
