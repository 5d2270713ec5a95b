#!/usr/bin/env bash
# Set up everything the suite needs and run it: the venv with test dependencies, the pinned real
# clients from npm (for the end-to-end tests), the distribution's packages the tests drive (tmux,
# PostgreSQL, openssl, Chromium), then pytest in parallel. The set-up steps that do not need each
# other run at once (npm, apt and pip wait on the network and the disk more than on a core). As
# root, the suite runs in a private network namespace where only loopback exists, so no test can
# reach anything but 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'wait; rm -rf "$logs"' EXIT  # a step that fails early leaves no install half done
pids=()
background() {  # NAME COMMAND...: run it beside the rest (`finish` shows what it said)
  local name=$1; shift
  ("$@") >"$logs/$name" 2>&1 &
  pids+=("$!:$name")
}
finish() {  # wait for every background step and show what it said; a failed one stops the run
  local entry failed=0
  for entry in "${pids[@]}"; do
    if ! wait "${entry%%:*}"; then
      echo "test.sh: ${entry#*:} failed:" >&2
      cat "$logs/${entry#*:}" >&2
      failed=1
    else
      cat "$logs/${entry#*:}" >&2
    fi
  done
  [ "$failed" = 0 ] || exit 1
}
# what the tests drive from the distribution, installed as root when missing, in one apt run:
# tmux (the interactive clients), PostgreSQL (team mode: scripts/pgcluster.py starts a throwaway
# cluster per test worker, as an unprivileged user, on a Unix socket only), openssl (the TLS
# tests make their certificates with it), Chromium (the web board's tests drive Debian's build
# through Playwright; Playwright's own browser download is never used)
system_packages() {
  local missing=()
  command -v tmux >/dev/null || missing+=(tmux)
  "${PYTHON:-python3}" scripts/pgcluster.py bindir >/dev/null 2>&1 || missing+=(postgresql)
  command -v openssl >/dev/null || missing+=(openssl)
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "test.sh: missing ${missing[*]}: the tests that need them will fail" >&2
    return 0
  fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") \
    >/dev/null || echo "test.sh: could not install ${missing[*]}: the tests that need them will fail" >&2
}
# the tests run without a network: the first-run test installs nexus the documented way
# (scripts/install.sh through pipx) from a local wheelhouse made here, while the index is reachable
# (again only when pyproject.toml, and so what nexus depends on, changed)
wheelhouse() {
  local want
  want="$(sha256sum < pyproject.toml | cut -d' ' -f1)"
  [ "$(cat .wheels/.complete 2>/dev/null)" != "$want" ] || return 0
  .venv/bin/python -m pip wheel -q --disable-pip-version-check -w .wheels \
    pipx pip setuptools wheel . && echo "$want" > .wheels/.complete \
    || echo "test.sh: could not build the wheelhouse; the first-run install test will fail" >&2
}
background clients scripts/clients.sh
background packages system_packages
scripts/setup.sh --test
background wheelhouse wheelhouse
# a full run lints (ruff) and type-checks (mypy) first, both pinned in the test extra; a run
# with pytest arguments (`scripts/test.sh -k foo`) skips them to stay quick
if [ $# -eq 0 ]; then
  .venv/bin/ruff check .
  .venv/bin/mypy
fi
finish
export NEXUS_WHEELHOUSE=$PWD/.wheels
export NEXUS_REQUIRE_BROWSER=${NEXUS_REQUIRE_BROWSER:-1}
export NEXUS_REQUIRE_PG=${NEXUS_REQUIRE_PG:-1}
export NEXUS_REQUIRE_REALCLIENT=${NEXUS_REQUIRE_REALCLIENT:-1}
# The whole suite, in one run: the tests whose identity comes from the operating system's process
# table run through /proc and again through the portable `ps` backend (what macOS and BSD use),
# as tests/conftest.py parametrizes them. `--dist worksteal`: a worker that runs out of tests
# takes some of another's, so the long real-client tests do not leave one worker idle at the end.
script=(.venv/bin/python -m pytest -n "${NEXUS_TEST_WORKERS:-auto}" --dist worksteal "$@")
rm -rf "$logs"
trap - EXIT
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
  exec unshare -n -- .venv/bin/python scripts/loopback.py "${script[@]}"
fi
exec "${script[@]}"
