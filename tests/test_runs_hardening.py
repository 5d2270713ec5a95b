"""Security and robustness of runs, approvals and files (review of issue 13): what a project's
files, a task's text, another agent or a killed runner must not be able to do. Stand-in clients
(tests/fake_client.py) as in test_runs.py."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from test_runs import clients, final  # noqa: F401  (fixture)

import nexus_cli

PACKAGE = Path(nexus_cli.__file__).parent


# -- 1. a Python nexus starts never imports from the caller's folder ---------------------------


def test_a_module_planted_in_the_project_is_not_imported_by_the_runner(nx, clients, chdir_work,
                                                                      tmp_path):
    marker = tmp_path / "imported"
    for name in ("subprocess", "json", "os", "sqlite3", "nexus_cli", "time"):
        Path(chdir_work, f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\nraise SystemExit(9)\n")
    r = nx("run", "claude", "hi", "--json")
    assert r.code == 0, r.err
    assert r.json["status"] == "done", r.json
    assert not marker.exists(), marker.read_text()


def test_every_python_nexus_starts_is_isolated():
    """The class: a Python started with sys.executable must go through core/interp (-I or -P, a
    safe cwd); the console script beside the interpreter is the only other use."""
    from nexus_cli.core import interp

    assert interp.flags() in (["-I"], ["-P"])
    for path in PACKAGE.rglob("*.py"):
        if path.name == "interp.py":
            continue
        for line in path.read_text().splitlines():
            if "sys.executable" in line:
                assert "os.path.dirname(sys.executable)" in line, f"{path}: {line.strip()}"
    # and what calls interp.argv runs in the safe folder
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        for m in re.finditer(r"interp\.argv\(", text):
            around = text[m.start() - 300: m.start() + 300]
            assert "SAFE_CWD" in around, f"{path}: interp.argv without cwd=interp.SAFE_CWD"
    assert json  # imported for later tests
    assert os
