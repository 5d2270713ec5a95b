#!/usr/bin/env bash
# Make docs/board.png, the picture of the web board in the README and docs/insight.md, again:
# the showcase test of tests/test_web.py (a deadlock, a permission request, a reservation, mail)
# writes it from Debian's Chromium at 1280 px wide. As root it runs where only loopback exists, as
# the suite does.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/docs/board.png
mkdir -p docs
test=(.venv/bin/python -m pytest -q tests/test_web.py -k approval_answered)
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
  NEXUS_BOARD_PNG=$out exec unshare -n -- .venv/bin/python scripts/loopback.py "${test[@]}"
fi
NEXUS_BOARD_PNG=$out exec "${test[@]}"
