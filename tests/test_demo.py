"""The README's first command: the demo runs end to end, tells its story, and leaves nothing in
the temporary directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not Path(sys.executable).with_name("nexus").exists(),
                    reason="needs the nexus console script beside this interpreter")
def test_the_demo_runs_end_to_end_and_cleans_up(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX", "NEXUS"))}
    env["TMPDIR"] = str(tmp_path)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    for expected in ("simulated", "[nexus] You are claude@shop", "read by the recipient",
                     "TASK t-", "is listening", "Report on task t-", "Automatic turn 1 of 8",
                     "completed"):
        assert expected in out.stdout, expected
    assert list(tmp_path.iterdir()) == []  # nothing left behind
