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

import schemas
import templates
from helpers import CLIENT_ENV, RUN, WORKER, FakeTable, Run, env_session, fake_table, sid
from nexus_cli.approvals import ledger
from nexus_cli.cli import main as cli_main
from nexus_cli.core import proctable
from nexus_cli.core.store.db import Store
from nexus_cli.hook import entry

# pytest keeps each test module's rewritten bytecode in tests/__pycache__ (ignored by git), unless
# bytecode writing is off (PYTHONDONTWRITEBYTECODE): then every worker of every run rewrites the
# asserts of every module again, most of collecting's time. nexus_cli's own bytecode is written
# up front by scripts/setup.sh for the same reason.
sys.dont_write_bytecode = False


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "nexus-home"
    monkeypatch.setenv("NEXUS_HOME", str(root))
    for var in (*CLIENT_ENV, "NEXUS_CLIENT_PID"):
        monkeypatch.delenv(var, raising=False)
    return root


# Store- and tool-level behaviour runs against both backends, so that it cannot drift between
# them: every test of these modules runs once on the local SQLite store and once on a team
# database (a schema of its own in a throwaway PostgreSQL cluster, one per test worker).
BOTH_BACKENDS = {"test_messages", "test_handoff", "test_tasks", "test_delivery", "test_hooks",
                 "test_news", "test_concurrency", "test_identity", "test_reservations",
                 "test_approvals", "test_workspace", "test_runs", "test_mcp", "test_files",
                 "test_presence", "test_read_boundary"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames and metafunc.module.__name__ in BOTH_BACKENDS \
            and "sqlite_only" not in metafunc.definition.keywords and not own_backends(metafunc):
        metafunc.parametrize("backend", ["sqlite", "pg"], indirect=True)
    if "realprocs" in metafunc.definition.keywords:
        metafunc.parametrize("process_table", ["proc", "ps"], indirect=True)


def own_backends(metafunc: pytest.Metafunc) -> bool:
    """A test that pairs the backends with another parameter itself (`backend,era`: each store
    with one protocol era, each era with one store, where the two do not meet in the code)."""
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "backend" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return True
    return False


# Identity rests on the operating system's process table, read through /proc on Linux and
# through ps(1) elsewhere (macOS, BSD; NEXUS_PROCESS_TABLE=ps forces it). Every test that starts
# processes finds them through /proc; the tests marked realprocs run through `ps` too: of the
# real-client tests, one for each way a client's process is looked up (its hooks and shell
# commands, its MCP server, a waiting hook, an agent nested in another, the successor after
# /clear or /new, a run's approvals and its detached runner), each with each client; of the
# others, the MCP tests of who calls, and a few of presence, the disk and the first run
# (tests/test_proctable.py checks the `ps` backend itself). Through `ps` a test runs on SQLite,
# and only those of its variants that start a client in a role no variant before them started
# there through `ps` (a nested agent: Claude Code in Codex and Codex in Claude Code; both pairs
# of one client in itself through /proc only). `realprocs(by=(...))` names the roles that
# matter (`by=()`: any one variant, where each starts both clients in roles looked up alike).
CLIENT_ARGS = ("client", "sender", "recipient", "listener", "dispatcher", "worker", "outer",
               "inner", "holder", "editor")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    started: dict[tuple, set[tuple[str, str]]] = {}  # a test's (role, client) pairs through ps
    kept = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if params.get("process_table") == "ps":
            test = (item.path, item.originalname)  # type: ignore[attr-defined]
            mark = item.get_closest_marker("realprocs")
            by = mark.kwargs.get("by", CLIENT_ARGS) if mark is not None else CLIENT_ARGS
            roles = {(k, str(v)) for k, v in params.items() if k in by}
            if params.get("backend") == "pg" or (test in started and roles <= started[test]):
                continue
            started.setdefault(test, set()).update(roles)
        kept.append(item)
    # the long tests first (real clients, then other slow ones): under xdist a worker that runs
    # out of tests takes the last ones of another's queue, and short ones balance the two best
    items[:] = sorted(kept, key=lambda i: 0 if "realclient" in i.keywords else
                      1 if "slow" in i.keywords else 2)


@pytest.fixture(autouse=True)
def process_table(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """'proc' or 'ps' (NEXUS_PROCESS_TABLE, for the test's child processes: helpers.store_env
    and the real clients' world carry it) in a test that reads the real table; else None."""
    kind = getattr(request, "param", None)
    if kind == "proc" and not os.path.exists("/proc/self/stat"):
        pytest.skip("no /proc here")
    monkeypatch.delenv("NEXUS_PROCESS_TABLE", raising=False)
    if kind is not None:
        monkeypatch.setenv("NEXUS_PROCESS_TABLE", kind)
    return kind


@pytest.fixture(scope="session")
def pg_cluster():
    """A throwaway PostgreSQL cluster (scripts/pgcluster.py), started on first use."""
    import pgcluster

    if pgcluster.bindir() is None:
        if os.environ.get("NEXUS_REQUIRE_PG") == "1":
            pytest.fail("PostgreSQL is not installed (scripts/test.sh installs it)")
        pytest.skip("PostgreSQL is not installed")
    cluster = pgcluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def sqlite_templates(tmp_path_factory: pytest.TempPathFactory) -> templates.SqliteTemplates:
    return templates.SqliteTemplates(tmp_path_factory.mktemp("templates"))


@pytest.fixture(scope="session")
def pg_schemas(pg_cluster):
    pool = templates.PgSchemas(pg_cluster, new_schema)
    yield pool
    pool.close()


@pytest.fixture(autouse=True)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
            sqlite_templates: templates.SqliteTemplates):
    """'sqlite', or 'pg': NEXUS_DATABASE_URL names a migrated schema of its own. A new SQLite
    store is a copy of one the migrations built (tests/templates.py), except in tests marked
    `migrate`; a schema is one a test before used, emptied back to what the migrations left."""
    kind = getattr(request, "param", "sqlite")
    from nexus_cli.maintenance import expiry

    expiry.LAZY.not_before = 0.0  # a test that moved the clock ahead must not hold back the next
    monkeypatch.delenv("NEXUS_DATABASE_URL", raising=False)
    if "migrate" not in request.keywords:
        sqlite_templates.install(monkeypatch)
    if kind != "pg":
        yield kind
        return
    pool = request.getfixturevalue("pg_schemas")
    url = pool.take()
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    yield kind
    pool.give_back(url)


def new_schema(cluster) -> str:  # type: ignore[no-untyped-def]
    """A new schema in the cluster, migrated; returns its URL."""
    import psycopg

    from nexus_cli.core.store import pg

    schema = "t_" + os.urandom(6).hex()
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = cluster.url_for(schema)
    conn = pg.connect(url, "/nonexistent")
    try:
        pg.migrate(conn, 0.0)
    finally:
        conn.close()
    return url


@pytest.fixture(autouse=True)
def _store_descriptors_closed():
    """A store this process opened keeps a descriptor or two for the process's life (db's header
    descriptor, this thread's queue file: closing one sooner would drop its POSIX locks): the
    ones a test opened are closed after it, or a worker that ran a thousand tests would hold
    thousands (past select()'s 1024, past a low `ulimit -n`)."""
    from nexus_cli.core.store import db, queue

    headers = set(db._HEADER_FDS)
    queues = set(getattr(queue._mine, "files", {}))
    yield
    for ident in set(db._HEADER_FDS) - headers:
        os.close(db._HEADER_FDS.pop(ident))
    mine = getattr(queue._mine, "files", {})
    for path in set(mine) - queues:
        del mine[path]  # its _Held closes it


@pytest.fixture(autouse=True)
def fake(process_table: str | None) -> FakeTable:  # after it: real pids go by the chosen table
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
        schemas.check(args, captured.out)
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


@pytest.fixture
def pair(hook, chdir_work, fake: FakeTable) -> int:
    """Two sessions started in the work folder, as their hooks register them: A (Claude Code,
    helpers.A) and B (Codex, helpers.B). Returns the fake client process of A."""
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    return fake.client_of(f"claude:{sid(1)}")


os.environ.setdefault("COLUMNS", "100")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The person at an interactive terminal: person-only acts (approve as the person, turning
    on fsWrite or runApprovals) need one."""
    from nexus_cli.core import caller

    monkeypatch.setattr(caller, "at_terminal", lambda: True)


FAKE_CLIENT = Path(__file__).with_name("fake_client.py")


@pytest.fixture
def fakehome(tmp_path, monkeypatch):
    """A home of the test's own with no client configuration, and no real client on PATH
    (install and doctor must cope)."""
    h = tmp_path / "userhome"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return h


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


# Every tool's --json output is checked against its schema somewhere in the suite
# (tests/schemas.py): each worker hands the controller what it checked; a whole run fails on a
# tool never checked.
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workeroutput"):  # an xdist worker
        config.workeroutput["schemas_checked"] = sorted(schemas.CHECKED)
        return
    opt = config.option
    whole = not (opt.keyword or opt.markexpr or opt.collectonly or getattr(opt, "lf", False)
                 or opt.deselect) and all(
        Path(a).resolve() == Path(__file__).parent for a in config.args or ["tests"])
    if whole and session.testsfailed == 0 and session.testscollected:
        missing = schemas.unchecked(schemas.CHECKED)
        if missing:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            print(f"\nno test checked the --json output of: {', '.join(missing)}: give each a "
                  "test in tests/test_<feature>.py that runs it through the nx fixture with "
                  "--json (or passes a result to schemas.validate); tests/schemas.py",
                  file=sys.stderr)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # type: ignore[no-untyped-def]
    schemas.CHECKED.update(getattr(node, "workeroutput", {}).get("schemas_checked", ()))
