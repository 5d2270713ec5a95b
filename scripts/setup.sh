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
# compat editable mode: a plain path entry, no import hook on every start-up (hooks are hot)
.venv/bin/python -m pip install -q --disable-pip-version-check \
  --config-settings editable_mode=compat -e ".${extra}"
# bytecode up front: the hook hot path must not compile on every call
.venv/bin/python -m compileall -q nexus_cli >/dev/null
