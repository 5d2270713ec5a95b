"""Shared fixtures: every test gets its own private store ($NEXUS_HOME in tmp_path) and helpers
that run the CLI and the hook entry point in-process, the way a user or a client would."""

from __future__ import annotations

import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from nexus_cli import hookrun
from nexus_cli.cli import main as cli_main

CLIENT_ENV = ("CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID", "CLAUDE_PID",
              "NEXUS_CLIENT_PID", "CLAUDECODE")
FAKE_PID = "999999"  # a client pid that is nobody's ancestor


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "nexus-home"
    monkeypatch.setenv("NEXUS_HOME", str(root))
    for var in CLIENT_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NEXUS_CLIENT_PID", FAKE_PID)
    return root


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def json(self) -> dict:
        return json.loads(self.out)


@pytest.fixture
def nx(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch):
    """nx(*args, env={...}, stdin=...) -> Run: the CLI exactly as `nexus ...` runs it."""

    def run(*args: str, env: dict | None = None, stdin: str | None = None) -> Run:
        with monkeypatch.context() as mp:
            for key, value in (env or {}).items():
                if value is None:
                    mp.delenv(key, raising=False)
                else:
                    mp.setenv(key, value)
            mp.setattr(sys, "stdin", io.StringIO(stdin or ""))
            capsys.readouterr()
            code = cli_main(list(args))
            captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def claude_env(sid: str) -> dict:
    return {"CLAUDE_CODE_SESSION_ID": sid, "CLAUDECODE": "1"}


def codex_env(sid: str) -> dict:
    return {"CODEX_SESSION_ID": sid}


@pytest.fixture
def hook(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """hook(client, event, session_id, **fields) -> Run: one client hook invocation."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)

    def run(client: str, event: str, sid: str, *extra: str, raw: str | None = None,
            env: dict | None = None, **fields: object) -> Run:
        payload = {"hook_event_name": event, "session_id": sid, "cwd": str(work),
                   "transcript_path": None, **fields}
        with monkeypatch.context() as mp:
            for key, value in (env or {}).items():
                mp.setenv(key, value)
            mp.setattr(sys, "stdin", io.StringIO(raw if raw is not None else json.dumps(payload)))
            capsys.readouterr()
            code = hookrun.main([client, *extra])
            captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    run.cwd = str(work)  # type: ignore[attr-defined]
    return run


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes (to prove nothing was touched)."""
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def sid(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-{n:012x}"


@pytest.fixture
def chdir_work(hook, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(hook.cwd)
    return hook.cwd


os.environ.setdefault("COLUMNS", "100")
