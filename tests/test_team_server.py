"""A hostile or broken team database server: every call has a deadline kept on the socket (a hook
2 s in all, a command its statement limit), whatever the server trickles; one row and one result
have a cap, with a coded error; and each failure to connect or to read is said with the code and
the next action that fit it (the URL, the login, the server, the schema). The server here is a
stand-in speaking just enough of PostgreSQL's protocol, on a socket of the test's own."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

import psycopg
import pytest

from helpers import A, sid


def _msg(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


READY = _msg(b"R", struct.pack("!i", 0)) + _msg(b"Z", b"I")
NOTICE = _msg(b"N", b"SNOTICE\0C00000\0Mstill thinking\0\0")


class Hostile:
    """A server on a Unix socket (or 127.0.0.1): `mode` says how it misbehaves once a client
    sends its startup message."""

    def __init__(self, folder, mode: str, tcp: bool = False) -> None:
        self.mode, self.stop, self.sent = mode, threading.Event(), 0
        if tcp:
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", 0))
            self.url = f"postgresql://ann@127.0.0.1:{self.sock.getsockname()[1]}/nexus"
        else:
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.bind(os.path.join(str(folder), ".s.PGSQL.5432"))
            self.url = f"postgresql:///nexus?host={folder}&user=ann"
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(60)
            size = struct.unpack("!i", conn.recv(4))[0]
            body = conn.recv(size - 4)
            if struct.unpack("!i", body[:4])[0] == 80877103:  # SSLRequest
                conn.sendall(b"E" if self.mode == "ssl-error" else b"N")
                if self.mode == "ssl-error":
                    return
                size = struct.unpack("!i", conn.recv(4))[0]
                conn.recv(size - 4)
            if self.mode == "bad-password":
                conn.sendall(_msg(b"E", b"SFATAL\0C28P01\0Mpassword authentication failed for"
                                        b" user \"ann\"\0\0"))
                return
            if self.mode == "not-utf8":
                conn.sendall(_msg(b"R", struct.pack("!i", 0)) + _msg(b"S", b"weird\0\xff\xfe\0"))
                time.sleep(1)
                return
            conn.sendall(READY)
            conn.recv(65536)  # the first statement
            if self.mode == "huge-row":  # a row of 300 MB announced, trickled
                conn.sendall(_msg(b"T", struct.pack("!h", 1) + b"text\0" + struct.pack(
                    "!ihihih", 0, 0, 25, -1, -1, 0)) + b"D" + struct.pack("!i", 300 << 20))
                while not self.stop.is_set():
                    conn.sendall(b"x" * 65536)
                    self.sent += 65536
                    time.sleep(0.01)
            while not self.stop.is_set():  # slow: a notice every half second, never an answer
                conn.sendall(NOTICE)
                self.sent += 1
                time.sleep(0.5)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(5)


@pytest.fixture
def hostile(tmp_path):
    made: list[Hostile] = []

    def start(mode: str, tcp: bool = False) -> Hostile:
        folder = tmp_path / f"srv-{len(made)}"
        folder.mkdir()
        made.append(Hostile(folder, mode, tcp))
        return made[-1]

    yield start
    for h in made:
        h.close()


def _within(limit: float, call):  # type: ignore[no-untyped-def]
    """`call()` in a thread: its result, or a failure if it has not returned within `limit`
    seconds (a generous bound: the deadline under test is far shorter)."""
    box: dict = {}
    thread = threading.Thread(target=lambda: box.setdefault("r", call()), daemon=True)
    thread.start()
    thread.join(limit)
    assert "r" in box, f"still waiting after {limit} s"
    return box["r"]


def test_a_server_that_trickles_notices_is_cut_off_at_the_commands_deadline(
        hostile, nx, monkeypatch):
    """Item 8: the deadline is kept on the socket, not re-armed by each notice."""
    from nexus_cli.core.store import pg

    server = hostile("slow")
    monkeypatch.setattr(pg, "STATEMENT_MS", 1500)  # a command's limit, made short for the test
    r = _within(60, lambda: nx("peers", env={"NEXUS_DATABASE_URL": server.url}))
    assert r.code == 6 and "store_busy" in r.err and "did not answer in time" in r.err, r.err
    assert server.sent >= 1  # it did trickle


def test_a_hook_is_done_within_its_budget_whatever_the_server_does(hostile, tmp_path):
    """Item 8: a PostToolUse hook (the real process) against a server that never finishes an
    answer lets its client go within its 2 s (here: far less than the 30 s bound) and says so
    in the offline log."""
    server = hostile("slow")
    home = tmp_path / "home"
    env = {"PATH": os.environ["PATH"], "NEXUS_HOME": str(home), "HOME": str(tmp_path),
           "NEXUS_DATABASE_URL": server.url, "PYTHONPATH": os.pathsep.join(sys.path)}
    payload = json.dumps({"hook_event_name": "PostToolUse", "session_id": sid(1), "cwd": "/",
                          "tool_name": "Bash"})
    done = subprocess.run([sys.executable, "-m", "nexus_cli", "hook", "claude"], input=payload,
                          env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert "did not answer in time" in (home / "team-offline.log").read_text()


def test_a_huge_row_is_refused_before_it_is_read(hostile, nx):
    """Item 9: a row announced past the cap is refused at its header (nothing of it is kept),
    with a coded error."""
    server = hostile("huge-row")
    r = _within(60, lambda: nx("peers", env={"NEXUS_DATABASE_URL": server.url}))
    assert r.code == 6 and "team_row_too_large" in r.err and "Traceback" not in r.err, r.err
    assert server.sent < 64 << 20  # cut off long before the 300 MB


def test_one_row_of_a_member_is_capped_by_the_server(pg_cluster, monkeypatch, nx, hook,
                                                      chdir_work):
    """Item 9, the writer's side: a member writing a row past what one row may hold is refused
    by the team database itself (every table's trigger), whoever writes it."""
    from test_team_members import Team

    t = Team(pg_cluster, monkeypatch, nx, hook)
    t.start(t.alice, "claude", 1)
    from test_team_members import declared

    put = declared("INSERT INTO ws_docs (id, title, content, updated_by, updated_at)")
    with t.sql(t.alice) as conn, pytest.raises(psycopg.errors.ProgramLimitExceeded):
        conn.execute(f"SELECT * FROM {put}('big', 'big', repeat('x', 30 << 20), %s, '0')",
                     (f"claude:{sid(1)}",))  # through nexus's own function for it
    r = nx("doc", "sync", "small", "Small", "fits", env=A)
    assert r.code == 0, r.err


def test_a_result_past_the_cap_is_refused_with_a_coded_error(pg_cluster, monkeypatch, home):
    """Item 9: rows that add up past what one result may hold."""
    from conftest import new_schema

    from nexus_cli.core.errors import NexusError
    from nexus_cli.core.store import pgwire
    from nexus_cli.core.store.pg import PgStore

    monkeypatch.setenv("NEXUS_PG_DRIVER", "wire")
    monkeypatch.setattr(pgwire, "RESULT_MAX", 1 << 20)
    store = PgStore(new_schema(pg_cluster), str(home))
    with pytest.raises(NexusError) as err, store.read() as conn:
        conn.execute("SELECT repeat('x', 1000) FROM generate_series(1, 5000)").fetchall()
    assert err.value.code == "team_row_too_large", err.value
    with store.read() as conn:  # the next call works on a new connection
        assert conn.execute("SELECT 1").fetchone()[0] == 1


def test_a_wrong_password_or_an_unknown_role_is_a_login_error_not_an_outage(
        hostile, nx, pg_cluster):
    """Item 10: not "retry when the server is back": the login is wrong, and the next action
    says how to fix it."""
    server = hostile("bad-password")
    for url in (server.url, pg_cluster.url_for(None, user="nobody_" + os.urandom(3).hex())):
        r = nx("peers", env={"NEXUS_DATABASE_URL": url})
        assert r.code == 5 and "team_auth_failed" in r.err, r.err
        assert "PGPASSWORD" in r.err and "retry when the server is back" not in r.err


@pytest.mark.parametrize("mode,tcp", [("ssl-error", True), ("not-utf8", False)])
def test_a_server_that_breaks_the_protocol_is_not_called_a_bad_url(hostile, nx, mode, tcp):
    """Item 10: an `E` answer to the TLS request, a parameter that is not UTF-8: the server's
    fault, said as such (not "fix NEXUS_DATABASE_URL")."""
    server = hostile(mode, tcp=tcp)
    r = nx("peers", env={"NEXUS_DATABASE_URL": server.url})
    assert r.code == 6 and "team_server_invalid" in r.err, r.err
    assert "team_url_invalid" not in r.err and "Traceback" not in r.err


def test_a_schema_version_that_is_not_a_number_is_said_as_such(pg_cluster, nx):
    """Item 10: not internal_error: the migrations table is not nexus's."""
    from test_team import schema

    _, url = schema(pg_cluster)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE migrations (version TEXT, name TEXT, applied_at TEXT)")
        conn.execute("INSERT INTO migrations VALUES ('banana', 'x', 'y')")
    r = nx("peers", env={"NEXUS_DATABASE_URL": url})
    assert r.code == 6 and "store_unreadable" in r.err and "banana" in r.err, r.err
    assert "internal_error" not in r.err
