"""What many tests need: session ids, client environments, a synthetic process table, acting as
a session in-process, and proof that files were not touched."""

from __future__ import annotations

import itertools
import json
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexus_cli import catalog, clients
from nexus_cli.core import caller, proctable
from nexus_cli.core.context import Ctx
from nexus_cli.core.proctable import Proc, ProcTable
from nexus_cli.core.registry import invoke
from nexus_cli.core.store.db import Store
from nexus_cli.hook import entry

CLIENT_ENV = tuple(sorted({v for a in clients.ADAPTERS.values()
                           for v in (*a.ENV_SESSION, *a.ENV_MARKERS)}))


def sid(n: int) -> str:
    """A client session id of the real shape (a lowercase UUID), distinct for each n."""
    return f"{n:08x}-0000-4000-8000-{n:012x}"


def claude_env(session: str) -> dict[str, str]:
    return {"CLAUDE_CODE_SESSION_ID": session, "CLAUDECODE": "1"}


def codex_env(session: str) -> dict[str, str]:
    return {"CODEX_SESSION_ID": session, "CODEX_THREAD_ID": session}


# the sessions most tests talk between: a Claude Code session, a Codex one and a second Claude
# Code one, as their client environments and as their nexus ids
A, B, C = claude_env(sid(1)), codex_env(sid(2)), claude_env(sid(3))
A_ID, B_ID, C_ID = f"claude:{sid(1)}", f"codex:{sid(2)}", f"claude:{sid(3)}"


def env_session(env: Mapping[str, str | None]) -> str | None:
    """The nexus id a client environment names (the nearest client's variables win)."""
    for name, adapter in clients.ADAPTERS.items():
        for var in adapter.ENV_SESSION:
            if env.get(var):
                return f"{name}:{env[var]}"
    return None


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes (to prove nothing was touched)."""
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out)


class FakeTable(ProcTable):
    """A synthetic process tree for in-process tests: fake client processes (`claude`, `codex`,
    shells...) that this test process can be placed under. Real pids (waiters, subprocesses)
    are looked up for real."""

    backend = "fake"
    _pids = itertools.count(800_001)

    def __init__(self) -> None:
        self.procs: dict[int, Proc] = {}
        self.by_session: dict[str, int] = {}
        self.exes: dict[int, str] = {}
        self.not_feeding: set[int] = set()  # fake clients whose pipe is not this one's stdin
        self.real = proctable.chosen()  # the table the test chose (its process_table)
        self._local = threading.local()  # hooks run in threads each sit under their own client

    @property
    def parent(self) -> int:
        """This thread's parent in the fake tree (1: no ancestry, like a detached shell)."""
        return getattr(self._local, "parent", 1)

    @parent.setter
    def parent(self, pid: int) -> None:
        self._local.parent = pid

    def spawn(self, name: str, parent: int = 1) -> int:
        pid = next(self._pids)
        self.procs[pid] = Proc(pid, parent, name, f"t{pid}")
        return pid

    def client_of(self, session: str) -> int:
        """The fake client process of a session id (`claude:<uuid>`), created on first use."""
        if session not in self.by_session:
            self.by_session[session] = self.spawn(session.split(":", 1)[0])
        return self.by_session[session]

    def export(self) -> str:
        """This tree as JSON, for a subprocess of the test to install with `FakeTable.adopt`."""
        return json.dumps({"procs": [list(p) for p in self.procs.values()],
                           "by_session": self.by_session})

    @classmethod
    def adopt(cls, exported: str) -> FakeTable:
        """In a test's subprocess: install the parent's fake tree (in-process, like the
        conftest)."""
        table = cls()
        data = json.loads(exported)
        table.procs = {p[0]: Proc(*p) for p in data["procs"]}
        table.by_session = data["by_session"]
        proctable.use(table)
        return table

    def kill(self, pid: int) -> None:
        self.procs.pop(pid, None)

    def exe(self, pid: int) -> str | None:
        """The program a fake process runs (`exes`: a fake `claude` that is a link to a shell),
        unknown unless set; a real process's own."""
        if pid in self.procs:
            return self.exes.get(pid)
        return None if pid >= 800_000 else self.real.exe(pid)

    def get(self, pid: int) -> Proc | None:
        if pid in self.procs:
            return self.procs[pid]
        if pid == os.getpid():  # (its real start time: another process judges it by that)
            real = self.real.get(pid)
            return Proc(pid, self.parent, "python", real.start if real is not None else "self")
        return None if pid >= 800_000 else self.real.get(pid)

    def ancestors(self, pid: int | None = None, limit: int = 64) -> list[Proc]:
        return self._walk(os.getpid() if pid is None else pid, limit)  # never cached: it moves

    def feeds_stdin(self, pid: int) -> bool:
        """A fake client feeds the in-process MCP server it started (unless `not_feeding`: a
        server an agent `exec`s from its shell); a real process, as the real table says."""
        if pid >= 800_000:
            return pid in self.procs and pid not in self.not_feeding
        return self.real.feeds_stdin(pid)

    def alive(self, pid: int | None, start: str | None = None) -> bool:
        if pid and pid >= 800_000:
            return pid in self.procs and (start is None or self.procs[pid].start == start)
        return super().alive(pid, start)

    @contextmanager
    def inside(self, pid: int | None) -> Iterator[None]:
        """Run the block as a child of `pid` (None: as now)."""
        saved = self.parent
        if pid is not None:
            self.parent = pid
        try:
            yield
        finally:
            self.parent = saved


def faked(table: FakeTable) -> str:
    """The shell words that run `nexus` in a subprocess inside `table` as it is now (faked.py)."""
    import shlex
    import sys

    return shlex.join([sys.executable, str(Path(__file__).with_name("faked.py")), table.export()])


def fake_table() -> FakeTable:
    table = proctable.table()
    assert isinstance(table, FakeTable), "the conftest installs a FakeTable for every test"
    return table


def ctx_for(home: str | Path | None, env: Mapping[str, str] | None = None,
            explicit: str | None = None, face: str = "cli", cwd: str | None = None,
            store: Store | None = None) -> Ctx:
    """A Ctx acting as the session `env` names, from inside its fake client process; on a new
    Store of `home` (as a command's process opens it), or on `store` (one a long-lived process
    keeps, as the MCP server does: `Store(home, reuse=True)`)."""
    env = dict(env or {})
    table = fake_table()
    named = env_session(env)

    def resolve(conn, now):
        with table.inside(table.by_session.get(named) if named else None):
            return caller.resolve(conn, now, explicit=explicit, env=env, cwd=cwd or os.getcwd())

    return Ctx(store or Store(str(home) if home else None), resolve, face=face)


def call(home: str | Path, name: str, args: dict[str, Any] | None = None,
         env: Mapping[str, str] | None = None, explicit: str | None = None) -> dict[str, Any]:
    """Run one tool in-process as the session `env` names (inside its fake client process)."""
    return invoke(catalog.load()[name], ctx_for(home, env, explicit), args or {})


def run_hook_in_thread(client: str, event: str, session: str, wait: bool = False, env=None,
                       **fields):
    data = {"hook_event_name": event, "session_id": session, "cwd": os.getcwd(), **fields}
    box: dict = {}

    table = fake_table()
    pid = table.client_of(f"{client}:{session}")

    def target():
        with table.inside(pid):
            box["reply"] = entry.handle(client, data, Store(), {**os.environ, **(env or {})},
                                          time.time(), wait=wait)
        box["at"] = time.monotonic()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def plain(schema: dict[str, Any]) -> Any:
    """A value of a plain schema (an enum's first, text without a pattern, a number's minimum, a
    flag, a list of those), or None for one that needs something made for it (a JSON object, a
    pattern): what the every-tool and bad-input tests pass for an argument they know nothing
    more of."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):  # ["integer", "null"]: the one that is not null
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string" and not {"pattern", "format"} & schema.keys():
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema["exclusiveMinimum"] + 1 if "exclusiveMinimum" in schema else \
            schema.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "array" and (item := plain(schema.get("items", {}))) is not None:
        many = max(1, schema.get("minItems", 1))
        return None if many > 1 and schema.get("uniqueItems") else [item] * many
    return None


def recorded_waits(monkeypatch: Any) -> list:
    """The idle wait replaced by a recorder: where a hook must not wait, the list stays empty,
    however fast a wait would have ended (a timing cannot tell)."""
    from nexus_cli.delivery import waiting

    waits: list = []
    monkeypatch.setattr(waiting, "wait_for_news", lambda *a, **k: waits.append(a) or (
        "timeout", None))
    return waits


def until(check: Any, timeout: float = 60, what: Any = "", every: float = 0.02) -> Any:
    """Poll `check` until it returns something true, and return that; fail after `timeout`
    seconds naming `what` (a text, or a callable giving one). The limit is an outer one for a
    real condition, never a guess of how long something takes."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")
        time.sleep(every)


def kill9(pid: int) -> None:
    """kill -9 a process that is not the test's child, and return once it has died: the signal is
    delivered when the process is next scheduled, not by the time os.kill returns, so a look right
    after os.kill may still find it running (seen under load). Dead as nexus judges it, through
    this system's real process table: gone, or a zombie its parent has not reaped yet."""
    os.kill(pid, signal.SIGKILL)
    until(lambda: proctable.chosen().get(pid) is None, 30, f"process {pid} to die of SIGKILL")


def wait_listening(nx, env, target_id, timeout=60.0):
    until(lambda: any(p["id"] == target_id and p["status"] == "listening"
                      for p in nx("peers", "--json", env=env).json["items"]),
          timeout, f"{target_id} to listen")


def tables_read(starts: list[str | None]) -> set[str]:
    """Which process table recorded these start times: 'proc' (/proc's clock ticks) or 'ps'
    (ps(1)'s date and time); the synthetic table's (`t<pid>`) are left out."""
    return {"proc" if s.isdigit() else "ps" for s in starts if s and not s.startswith("t")}


def store_env() -> dict[str, str]:
    """The variables that choose the store (the team database) and how the process table is read,
    for a child process's env."""
    return {k: os.environ[k] for k in ("NEXUS_DATABASE_URL", "NEXUS_PROCESS_TABLE")
            if k in os.environ}


def raw_db(home: Path | str):  # type: ignore[no-untyped-def]
    """A plain connection to the store the test uses (outside nexus's transactions): the SQLite
    file, or the team database when NEXUS_DATABASE_URL is set. Rows read by name too."""
    url = os.environ.get("NEXUS_DATABASE_URL")
    if url:
        from nexus_cli.core.store import pg

        conn = pg.connect(url, str(home))
        conn.commit = lambda: None  # type: ignore[attr-defined]  # autocommit
        return conn
    import sqlite3

    from nexus_cli.core.store import paths

    conn = sqlite3.connect(paths.db_path(str(home)))
    conn.row_factory = sqlite3.Row
    return conn


# a run and its worker session, for the approval tests
RUN = "r-0123456789ab"
WORKER = sid(5)


@contextmanager
def descriptors_past(number: int = 1030) -> Iterator[None]:
    """Hold open descriptors until the next one opened is numbered past `number` (a long-lived
    process holding many files); skips when the limit forbids it. select() cannot watch those."""
    import resource

    import pytest

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < number + 100:
        pytest.skip(f"the descriptor limit is below {number + 100} here")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, number + 100), hard))
    held: list[int] = []
    try:
        while not held or held[-1] < number:
            held.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def string_literals(tree: Any, hole: str = "{}") -> Iterator[tuple[Any, str]]:
    """Every string a module's source spells out, with its node: constants, and f-strings as a
    whole with `hole` for each replacement field (their parts are not given again)."""
    import ast

    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in parts:
            yield node, node.value
        elif isinstance(node, ast.JoinedStr):
            yield node, "".join(v.value if isinstance(v, ast.Constant) else hole
                                for v in node.values)
