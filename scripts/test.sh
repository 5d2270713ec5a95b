#!/usr/bin/env bash
# Set up everything the suite needs and run it: the venv with test dependencies, the pinned real
# clients from npm (for the end-to-end tests), tmux (interactive clients), then pytest in
# parallel. As root, the suite runs in a private network namespace where only loopback exists,
# so no test can reach anything but 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
# a full run lints (ruff) and type-checks (mypy) first, both pinned in the test extra; a run
# with pytest arguments (`scripts/test.sh -k foo`) skips them to stay quick
if [ $# -eq 0 ]; then
  .venv/bin/ruff check .
  .venv/bin/mypy
fi
scripts/clients.sh
if ! command -v tmux >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq tmux) >/dev/null \
    || echo "test.sh: could not install tmux; the interactive-client tests will fail" >&2
fi
# team mode: the suite runs the store- and tool-level tests against a throwaway PostgreSQL
# cluster too (scripts/pgcluster.py starts one per test worker, as an unprivileged user, on a Unix
# socket only); the server comes from the distribution's packages
if ! .venv/bin/python scripts/pgcluster.py bindir >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
    && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) \
    >/dev/null || echo "test.sh: could not install PostgreSQL; the team-mode tests will fail" >&2
fi
# the TLS tests make their certificates with the openssl command line (PostgreSQL's package
# brings it on Debian; a slimmer image may not have it)
if ! command -v openssl >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl) \
    >/dev/null || echo "test.sh: could not install openssl; the TLS tests will fail" >&2
fi
# the web board's tests drive Debian's Chromium through Playwright (pinned in the test extra);
# Playwright's own browser download is never used (tests/test_web.py)
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
    >/dev/null || echo "test.sh: could not install Chromium; the web board's tests will fail" >&2
fi
export NEXUS_REQUIRE_BROWSER=${NEXUS_REQUIRE_BROWSER:-1}
export NEXUS_REQUIRE_PG=${NEXUS_REQUIRE_PG:-1}
# the tests run without a network: the first-run test installs nexus the documented way
# (scripts/install.sh through pipx) from a local wheelhouse made here, while the index is reachable
# (again only when pyproject.toml, and so what nexus depends on, changed)
wheels="$(cat pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ "$(cat .wheels/.complete 2>/dev/null)" != "$wheels" ]; then
  if .venv/bin/python -m pip wheel -q --disable-pip-version-check -w .wheels \
      pipx pip setuptools wheel .; then
    echo "$wheels" > .wheels/.complete
  else
    echo "test.sh: could not build the wheelhouse; the first-run install test will fail" >&2
  fi
fi
export NEXUS_WHEELHOUSE=$PWD/.wheels
export NEXUS_REQUIRE_REALCLIENT=${NEXUS_REQUIRE_REALCLIENT:-1}
# The whole suite, in one run: the tests whose identity comes from the operating system's process
# table run through /proc and again through the portable `ps` backend (what macOS and BSD use),
# as tests/conftest.py parametrizes them. `--dist worksteal`: a worker that runs out of tests
# takes some of another's, so the long real-client tests do not leave one worker idle at the end.
script=(.venv/bin/python -m pytest -n "${NEXUS_TEST_WORKERS:-auto}" --dist worksteal "$@")
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
  exec unshare -n -- .venv/bin/python scripts/loopback.py "${script[@]}"
fi
exec "${script[@]}"
