"""The README's first command runs scripts/demo.py: keep it working."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not Path(sys.executable).with_name("nexus").exists(),
                    reason="needs the nexus console script beside this interpreter")
def test_the_demo_runs_end_to_end(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX", "NEXUS"))}
    env["TMPDIR"] = str(tmp_path)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    for expected in ("[nexus] You are claude@shop", "a repeat of an earlier request id",
                     "read by the recipient", "TASK t-", "Stop returned: the conversation continues",
                     "Report on task t-", "completed"):
        assert expected in out.stdout, expected
