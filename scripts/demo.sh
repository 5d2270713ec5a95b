#!/usr/bin/env bash
# Set up .venv and run the demonstration: sessions of two clients find each other and exchange
# messages through the real hook entry points and CLI, in a throwaway store.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/python scripts/demo.py "$@"
