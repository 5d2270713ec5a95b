#!/usr/bin/env bash
# Set up everything the suite needs and run it: the venv with test dependencies, the pinned real
# clients from npm (for the end-to-end tests), then pytest in parallel.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
scripts/clients.sh || echo "test.sh: real clients unavailable; their tests will be skipped" >&2
exec .venv/bin/python -m pytest -n "${NEXUS_TEST_WORKERS:-auto}" "$@"
