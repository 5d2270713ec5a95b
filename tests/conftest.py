"""Shared fixtures: every test gets its own private store ($NEXUS_HOME in tmp_path), a synthetic
process table, and helpers that run the CLI and the hook entry point in-process, the way a user
or a client would (a hook runs under its session's fake client process)."""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # standin.py

from helpers import CLIENT_ENV, RUN, WORKER, FakeTable, Run, env_session, fake_table, sid
from nexus_cli.approvals import ledger
from nexus_cli.cli import main as cli_main
from nexus_cli.core import proctable
from nexus_cli.core.store.db import Store
from nexus_cli.hook import entry


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "nexus-home"
    monkeypatch.setenv("NEXUS_HOME", str(root))
    for var in (*CLIENT_ENV, "NEXUS_CLIENT_PID"):
        monkeypatch.delenv(var, raising=False)
    return root


@pytest.fixture(autouse=True)
def fake() -> FakeTable:
    table = FakeTable()
    proctable.use(table)
    yield table
    proctable.use(None)


class _Stdin(io.StringIO):
    @property
    def buffer(self) -> io.BytesIO:
        return io.BytesIO(self.getvalue().encode("utf-8", "surrogateescape"))


@pytest.fixture
def nx(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, fake: FakeTable):
    """nx(*args, env={...}, stdin=..., inside=pid) -> Run: the CLI exactly as `nexus ...` runs it,
    inside the fake client process of the session `env` names (or `inside`)."""

    def run(*args: str, env: dict | None = None, stdin: str | None = None,
            inside: int | None = None) -> Run:
        with monkeypatch.context() as mp:
            for key, value in (env or {}).items():
                if value is None:
                    mp.delenv(key, raising=False)
                else:
                    mp.setenv(key, value)
            mp.setattr(sys, "stdin", _Stdin(stdin or ""))
            named = env_session(env or {})
            pid = inside if inside is not None else fake.by_session.get(named) if named else None
            capsys.readouterr()
            with fake.inside(pid):
                code = cli_main(list(args))
            captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def hook(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
         fake: FakeTable):
    """hook(client, event, session_id, **fields) -> Run: one client hook invocation, run by the
    session's own fake client process (`client_pid=` names another; `raw=` replaces stdin)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)

    def run(client: str, event: str, session: str, *extra: str, raw: str | bytes | None = None,
            env: dict | None = None, client_pid: int | None = None, **fields: object) -> Run:
        payload = {"hook_event_name": event, "session_id": session, "cwd": str(work),
                   "transcript_path": None, **fields}
        if client_pid is not None:
            fake.by_session.setdefault(f"{client}:{session}", client_pid)
        pid = fake.client_of(f"{client}:{session}") if client_pid is None else client_pid
        data = raw if raw is not None else json.dumps(payload)
        with monkeypatch.context() as mp:
            for key, value in (env or {}).items():
                mp.setenv(key, value)
            mp.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(
                data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))))
            capsys.readouterr()
            with fake.inside(pid):
                code = entry.main([client, *extra])
            captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    run.cwd = str(work)  # type: ignore[attr-defined]
    return run


@pytest.fixture
def chdir_work(hook, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(hook.cwd)
    return hook.cwd


os.environ.setdefault("COLUMNS", "100")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The person at an interactive terminal: person-only acts (approve as the person, turning
    on fsWrite or runApprovals) need one."""
    from nexus_cli.core import caller

    monkeypatch.setattr(caller, "at_terminal", lambda: True)


FAKE_CLIENT = Path(__file__).with_name("fake_client.py")


@pytest.fixture
def clients(tmp_path, monkeypatch):
    """`claude` and `codex` stand-ins first on PATH; returns the argv log they append to."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("claude", "codex"):
        script = folder / name
        script.write_text(f"#!{sys.executable}\nimport sys; sys.argv[0] = __file__\n"
                          f"exec(compile(open({str(FAKE_CLIENT)!r}).read(), 'fake_client.py',"
                          " 'exec'))\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "argv.log"
    monkeypatch.setenv("FAKE_ARGV_LOG", str(log))
    return log


@pytest.fixture
def routed(hook, nx, chdir_work):
    """A run (dispatched by claude sid(1)) whose worker session sid(5) routes to nexus."""
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    hook("claude", "SessionStart", WORKER, source="startup")
    table = fake_table()
    pid = table.client_of(f"claude:{WORKER}")
    with Store().write() as conn:
        ledger.route(conn, RUN, pid, table.get(pid).start, f"claude:{sid(1)}", chdir_work,
                     time.time())
    return {"NEXUS_RUN": RUN}
