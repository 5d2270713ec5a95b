"""The stdlib PostgreSQL client (`pgwire`, what hooks use in team mode) against a server that
is not trusted: a scripted peer on a Unix socket sends malformed, hostile or silent replies
(the client must fail with a `WireError`, quickly, and close its socket), and a real server
(scripts/pgcluster.py) for what is the server's behaviour: SASLprep, parameter round trips,
NUL characters, notifications between results, no socket left open on a failed login."""

from __future__ import annotations

import base64
import math
import os
import shutil
import socket
import struct
import tempfile
import threading
import time

import psycopg
import pytest

from nexus_cli.core.store import pgwire
from nexus_cli.core.store.pgwire import Wire, WireError

OUTER = 20.0  # seconds: far above every timeout the tests give the client, far below a hang


class Peer:
    """A scripted server on a Unix socket: `script(peer)` runs with the accepted connection once
    the startup message is read; then the peer reads until the client closes its end (`eof`)."""

    def __init__(self, script, tcp: bool = False) -> None:  # type: ignore[no-untyped-def]
        self.dir = tempfile.mkdtemp(prefix="pgw-", dir="/tmp")
        if tcp:  # on 127.0.0.1: the client asks for TLS first
            self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.listener.bind(("127.0.0.1", 0))
        else:
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(os.path.join(self.dir, ".s.PGSQL.5432"))
        self.tcp = tcp
        self.listener.listen(1)
        self.got: list[tuple[bytes, bytes]] = []  # the client's messages after its startup
        self.startup = b""
        self.eof = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(script,), daemon=True)
        self.thread.start()

    def _run(self, script) -> None:  # type: ignore[no-untyped-def]
        try:
            self.conn, _ = self.listener.accept()
        except OSError:
            return
        self.conn.settimeout(60)
        try:
            size = struct.unpack("!i", self._exact(4))[0]
            self.startup = self._exact(size - 4)
            script(self)
            while True:
                self.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            self.eof.set()  # the client closed its end
        except OSError:
            pass
        finally:
            self.conn.close()

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.conn.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def recv(self) -> tuple[bytes, bytes]:
        kind = self._exact(1)
        size = struct.unpack("!i", self._exact(4))[0]
        message = (kind, self._exact(size - 4))
        self.got.append(message)
        return message

    def send(self, kind: bytes, body: bytes = b"") -> None:
        self.conn.sendall(kind + struct.pack("!i", len(body) + 4) + body)

    def raw(self, data: bytes) -> None:
        self.conn.sendall(data)

    def ready(self) -> None:
        self.send(b"R", struct.pack("!i", 0))
        self.send(b"Z", b"I")

    def params(self, **extra: str) -> dict[str, str]:
        where = {"host": "127.0.0.1", "port": str(self.listener.getsockname()[1])} if self.tcp \
            else {"host": self.dir, "port": "5432"}
        return {**where, "user": "ann", "dbname": "team", "password": "pw", **extra}

    def stop(self) -> None:
        self.listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def serve():  # type: ignore[no-untyped-def]
    peers: list[Peer] = []

    def start(script, tcp: bool = False) -> Peer:  # type: ignore[no-untyped-def]
        peers.append(Peer(script, tcp))
        return peers[-1]

    yield start
    for peer in peers:
        peer.stop()


def failed_login(peer: Peer, timeout: float = 5.0) -> WireError:
    """The client's connection fails with a WireError, well within OUTER, and closes its socket
    at once (the error is still referenced: nothing is left for the garbage collector)."""
    started = time.monotonic()
    with pytest.raises(WireError) as caught:
        Wire(peer.params(), timeout)
    assert time.monotonic() - started < OUTER
    assert peer.eof.wait(OUTER), "the client's socket was left open"
    return caught.value


def scram_first(peer: Peer) -> str:
    """Offer SCRAM-SHA-256; return the client's nonce from its first message."""
    peer.send(b"R", struct.pack("!i", 10) + b"SCRAM-SHA-256\0\0")
    kind, body = peer.recv()
    assert kind == b"p" and body.startswith(b"SCRAM-SHA-256\0")
    first = body[len(b"SCRAM-SHA-256\0") + 4:].decode()
    assert first.startswith("n,,n=,r=")  # no channel binding: no TLS on a Unix socket
    return first[len("n,,n=,r="):]


def salt() -> str:
    return base64.b64encode(b"0123456789abcdef").decode()


# -- framing: lengths, malformed messages ------------------------------------------------------


@pytest.mark.parametrize("reply", [
    b"R" + struct.pack("!i", 2**31 - 1) + b"\0" * 16,  # 2 GB announced: never allocated
    b"D" + struct.pack("!i", (1 << 30) + 5),
    b"S" + struct.pack("!i", 100_000) + b"x" * 16,  # a long message of a kind that is never long
    b"R" + struct.pack("!i", -1),
    b"R" + struct.pack("!i", 2),
], ids=["2GB", "over-1GB", "long-S", "negative", "under-4"])
def test_a_hostile_length_is_refused_before_anything_is_read_for_it(serve, reply):
    peer = serve(lambda peer: peer.raw(reply))
    err = failed_login(peer)
    assert "broke the protocol" in str(err) and err.sqlstate == "08P01"  # protocol_violation


@pytest.mark.parametrize("script", [
    lambda peer: peer.send(b"R", b"\0\0"),  # an authentication request too short for its code
    lambda peer: (peer.send(b"R", struct.pack("!i", 0)), peer.send(b"S", b"no terminator")),
    lambda peer: (peer.send(b"R", struct.pack("!i", 0)), peer.send(b"A", b"\0\0")),
    lambda peer: (peer.send(b"R", struct.pack("!i", 0)), peer.send(b"Z", b"")),
    lambda peer: (peer.send(b"R", struct.pack("!i", 0)), peer.send(b"S", b"k\0\xff\xfe\0")),
    lambda peer: (scram_first(peer), peer.send(b"R", struct.pack("!i", 11) + b"garbage")),
    lambda peer: (scram_first(peer), peer.send(b"R", struct.pack("!i", 11) + b"\xff=1")),
], ids=["short-R", "S-unterminated", "A-short", "Z-empty", "S-not-utf8", "scram-garbage",
        "scram-not-utf8"])
def test_a_malformed_startup_message_is_an_error_and_closes_the_socket(serve, script):
    err = failed_login(serve(script))
    assert isinstance(err, WireError)


def test_a_malformed_reply_to_a_query_breaks_the_connection_cleanly(serve):
    def script(peer: Peer) -> None:
        peer.ready()
        peer.recv()  # the query
        peer.send(b"D", struct.pack("!h", 1) + struct.pack("!i", 1) + b"1")  # no RowDescription
        peer.send(b"C", b"SELECT 1\0")
        peer.send(b"Z", b"I")

    peer = serve(script)
    wire = Wire(peer.params(), 5)
    with pytest.raises(WireError, match="broke the protocol"):
        wire.query("SELECT 1")
    assert wire.broken and wire.closed
    assert peer.eof.wait(OUTER)
    with pytest.raises(WireError, match="closed"):
        wire.query("SELECT 1")


def test_a_notification_that_arrives_whole_is_read_and_a_bad_one_breaks_the_connection(serve):
    def script(peer: Peer) -> None:
        peer.ready()
        peer.send(b"A", struct.pack("!i", 7) + b"bell\0ring\0")
        time.sleep(0.2)
        peer.raw(b"A" + struct.pack("!i", -2))  # a length that would loop for ever

    peer = serve(script)
    wire = Wire(peer.params(), 5)
    deadline, seen = time.monotonic() + OUTER, []
    with pytest.raises(WireError, match="broke the protocol"):
        while time.monotonic() < deadline:
            wire.wait_notify(1.0)
            seen += wire.notes  # taken, as pg's notifies() does
            wire.notes = []
    assert [(n.pid, n.channel, n.payload) for n in seen + wire.notes] == [(7, "bell", "ring")]
    assert wire.broken and peer.eof.wait(OUTER)


# -- timeouts ---------------------------------------------------------------------------------


def test_a_server_that_dribbles_its_startup_cannot_hold_the_client_beyond_its_budget(serve):
    """Each byte comes before a read would time out: only a deadline for the whole startup
    bounds it."""
    def script(peer: Peer) -> None:
        message = b"S" + struct.pack("!i", 4 + 400) + b"x" * 199 + b"\0" + b"y" * 199 + b"\0"
        for i in range(len(message)):
            peer.raw(message[i:i + 1])
            time.sleep(0.25)

    err = failed_login(serve(script), timeout=1.0)
    assert "in time" in str(err)


def test_a_server_that_stops_answering_a_query_fails_it_after_the_read_timeout(serve):
    release = threading.Event()

    def script(peer: Peer) -> None:
        peer.ready()
        peer.recv()
        release.wait(60)  # never answers (until the test is over)

    peer = serve(script)
    wire = Wire(peer.params(), 5, read_timeout=1.0)
    started = time.monotonic()
    try:
        with pytest.raises(WireError, match="in time"):
            wire.query("SELECT 1")
        assert time.monotonic() - started < OUTER
        assert wire.broken
    finally:
        release.set()
    assert peer.eof.wait(OUTER)


def trickled_answers(peer: Peer) -> None:
    """Each query answered one byte at a time, a byte every 50 ms (never long enough for a
    read to time out): an answer takes over a second."""
    answer = (b"T" + struct.pack("!ih", 4 + 2 + 2 + 18, 1) + b"n\0"
              + struct.pack("!ihihih", 0, 0, 23, 4, -1, 0)
              + b"D" + struct.pack("!ihi", 4 + 2 + 4 + 1, 1, 1) + b"7"
              + b"C" + struct.pack("!i", 4 + 9) + b"SELECT 1\0"
              + b"Z" + struct.pack("!i", 5) + b"I")
    assert len(answer) * 0.05 > 1.2
    peer.ready()
    while True:
        peer.recv()
        for i in range(len(answer)):
            peer.raw(answer[i:i + 1])
            time.sleep(0.05)


def test_a_server_answering_a_byte_at_a_time_holds_a_whole_command_to_one_budget(serve):
    """Issue 37: 33 s per statement let such a server hold a two-statement command 66 s. The
    command's budget (`pgwire.command`) is spent by all its statements together."""
    wire = Wire(serve(trickled_answers).params(), 5, read_timeout=OUTER)
    pgwire.command(None)  # without a budget, the statement's own deadline never fires
    assert wire.query("SELECT 1").rows == [(7,)]
    pgwire.command(2.0)  # two answers of over 1.2 s each: the second outlives the budget
    started = time.monotonic()
    try:
        with pytest.raises(WireError, match="in time") as caught:
            for _ in range(2):
                assert wire.query("SELECT 1").rows == [(7,)]
        assert caught.value.sqlstate == "57014"
        assert time.monotonic() - started < OUTER
        with pytest.raises(WireError):  # a budget spent is spent: a new connection has none
            Wire(serve(trickled_answers).params(), 5, read_timeout=OUTER)
        spent = pgwire.budget()
        with pgwire.outside_budget():  # a migration, a move: each statement's deadline alone
            assert pgwire.budget() is None
            wire = Wire(serve(trickled_answers).params(), 5, read_timeout=OUTER)
            assert wire.query("SELECT 1").rows == [(7,)]
        assert pgwire.budget() is spent
    finally:
        pgwire.command(None)


def test_every_command_starts_its_own_budget(home, monkeypatch):
    """The CLI and the MCP server run every tool through `registry.invoke`: a team store starts
    the command's budget there, in the thread that runs it."""
    from nexus_cli.core.store import pg

    store = pg.PgStore("postgresql:///team?host=/nonexistent")
    pgwire.command(None)
    store.command()
    left = pgwire.budget()
    assert left is not None and left.left_s == pg.COMMAND_BUDGET
    started = []
    from nexus_cli.core.store.db import Store

    monkeypatch.setattr(Store, "command", lambda self: started.append(self))
    from nexus_cli.catalog import tool
    from nexus_cli.core import registry
    from nexus_cli.core.context import Ctx

    ctx = Ctx(Store(str(home)), lambda conn, now: None)  # type: ignore[arg-type,return-value]
    registry.invoke(tool("version", "nexus_cli.maintenance.tools"), ctx, {})
    pgwire.command(None)
    assert started == [ctx.store]


def open_sockets() -> set[str]:
    """The sockets this process holds, by inode: a count of all descriptors would move when
    anything else in the process (a collected object of an earlier test) closes one."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:  # the listing's own descriptor, closed by now
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


def test_a_unix_socket_that_is_not_there_leaves_no_socket_open(tmp_path):
    before = open_sockets()
    with pytest.raises(WireError, match="failed") as caught:
        Wire({"host": str(tmp_path), "port": "5432", "user": "ann", "dbname": "x"}, 2)
    assert open_sockets() <= before, caught.value


# -- authentication -----------------------------------------------------------------------------


def test_scram_refuses_a_server_that_ends_without_proving_it_knows_the_password(serve):
    """A server (or someone in the middle) that says "ok" without the SCRAM server signature
    has not authenticated itself: the session is not used."""
    def script(peer: Peer) -> None:
        nonce = scram_first(peer)
        peer.send(b"R", struct.pack("!i", 11) + f"r={nonce}srv,s={salt()},i=4096".encode())
        peer.recv()  # the client's proof
        peer.ready()  # no AuthenticationSASLFinal

    err = failed_login(serve(script))
    assert "without proving" in str(err)


def test_scram_refuses_a_wrong_server_signature_and_reports_a_server_error(serve):
    def script(signature: bytes):  # type: ignore[no-untyped-def]
        def run(peer: Peer) -> None:
            nonce = scram_first(peer)
            peer.send(b"R", struct.pack("!i", 11) + f"r={nonce}srv,s={salt()},i=4096".encode())
            peer.recv()
            peer.send(b"R", struct.pack("!i", 12) + signature)
            peer.ready()
        return run

    assert "signature is wrong" in str(failed_login(serve(script(
        b"v=" + base64.b64encode(b"x" * 32)))))
    assert "invalid-proof" in str(failed_login(serve(script(b"e=invalid-proof"))))


@pytest.mark.parametrize("first", [
    "r={nonce},s={salt},i=4096",  # the server added nothing to our nonce
    "r=someone-elses-nonce,s={salt},i=4096",
    "r={nonce}x,s=not*base64!,i=4096",
    "r={nonce}x,s=,i=4096",
    "r={nonce}x,s={salt},i=0",
    "r={nonce}x,s={salt},i=-1",
    "r={nonce}x,s={salt},i=1000000000",  # a billion PBKDF2 rounds: minutes of CPU
    "r={nonce}x,s={salt},i=lots",
    "m=ext,r={nonce}x,s={salt},i=4096",  # a mandatory extension this client does not know
], ids=["same-nonce", "other-nonce", "bad-salt", "empty-salt", "i=0", "i=-1", "i=1e9", "i=text",
        "m-ext"])
def test_scram_refuses_a_hostile_server_first_message_without_answering_it(serve, first):
    def script(peer: Peer) -> None:
        nonce = scram_first(peer)
        peer.send(b"R", struct.pack("!i", 11) + first.format(nonce=nonce, salt=salt()).encode())

    peer = serve(script)
    failed_login(peer)
    assert [kind for kind, _ in peer.got] == [b"p"]  # the first message, and no proof


def test_scram_plus_offered_without_tls_is_refused_as_libpq_refuses_it(serve):
    def script(peer: Peer) -> None:
        peer.send(b"R", struct.pack("!i", 10) + b"SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0")

    peer = serve(script)
    err = failed_login(peer)
    assert "SCRAM-SHA-256-PLUS authentication over a non-SSL connection" in str(err)
    assert all(kind != b"p" for kind, _ in peer.got)  # nothing of the password sent


def test_saslprep_follows_postgresql():
    assert pgwire._saslprep("plain ascii\x01") == b"plain ascii\x01"  # ASCII: as it is
    assert pgwire._saslprep("I\u00adX\u2168") == b"IXIX"  # soft hyphen gone, NFKC
    assert pgwire._saslprep("a\u00a0b") == b"a b"  # a non-ASCII space is a space
    assert pgwire._saslprep("\u00ad") == "\u00ad".encode()  # empty once mapped: the raw one
    assert pgwire._saslprep("a\u0007\u00e9") == "a\u0007\u00e9".encode()  # prohibited: raw
    assert pgwire._saslprep("\u05d0a") == "\u05d0a".encode()  # bidi rule broken: raw


def test_a_cleartext_password_never_crosses_a_network_without_tls(serve, monkeypatch):
    def script(peer: Peer) -> None:
        peer.send(b"R", struct.pack("!i", 3))
        if peer.recv()[0] == b"p":
            peer.ready()

    # on this machine (a Unix socket here) the password goes, as the server asked
    peer = serve(script)
    Wire(peer.params(), 5).close()
    assert peer.got[0] == (b"p", b"pw\0")
    # over a network in clear: refused, nothing sent
    monkeypatch.setattr(pgwire, "_exposed", lambda sock: True)
    peer = serve(script)
    err = failed_login(peer)
    assert "clear text" in str(err) and all(kind != b"p" for kind, _ in peer.got)


def test_the_password_goes_only_to_a_server_that_asks_for_it(serve):
    peer = serve(lambda peer: peer.ready())
    Wire(peer.params(), 5).close()
    assert peer.eof.wait(OUTER)
    assert [kind for kind, _ in peer.got] == [b"X"] and b"pw" not in peer.startup


def test_exposed_means_tcp_to_another_machine():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        with socket.create_connection(listener.getsockname(), 5) as sock:
            assert not pgwire._exposed(sock)
    a, b = socket.socketpair()
    with a, b:
        assert not pgwire._exposed(a)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        try:
            udp.connect(("192.0.2.1", 5432))  # no packet is sent; needs a route only
        except OSError:
            pytest.skip("no route off this machine (a loopback-only namespace)")
        assert pgwire._exposed(udp)


# -- URLs ---------------------------------------------------------------------------------------


def test_urls_that_ask_libpq_for_more_than_this_client_does_go_to_libpq(monkeypatch, tmp_path):
    for key in ("PGCHANNELBINDING", "PGREQUIREAUTH", "PGSSLMODE", "PGSSLROOTCERT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    base = "postgresql://ann@localhost/team"
    assert pgwire.params(base) is not None
    # it could not honour them: libpq must (or refuse)
    for extra in ("require_auth=scram-sha-256", "channel_binding=require", "requiressl=1",
                  "sslmode=verify_full", "gssencmode=require", "sslnegotiation=direct",
                  "sslcrl=/x.crl", "sslcrldir=/x", "sslpassword=x", "sslcertmode=require",
                  "ssl_min_protocol_version=TLSv1.3", "sslkey=engine:e:k", "sslsni=2",
                  "sslmode=require&sslrootcert=system", "something_new=1"):
        assert pgwire.params(f"{base}?{extra}") is None, extra
    for var in ("PGCHANNELBINDING", "PGSSLCRL", "PGSSLCRLDIR", "PGSSLCERTMODE",
                "PGSSLMINPROTOCOLVERSION", "PGSSLNEGOTIATION", "PGGSSENCMODE"):
        monkeypatch.setenv(var, "require")
        assert pgwire.params(base) is None, var
        monkeypatch.delenv(var)
    # what TLS libpq does, this client does
    for extra in ("sslmode=require", "sslmode=verify-full&sslrootcert=/r.crt",
                  "sslmode=verify-ca&sslcert=/c.crt&sslkey=/c.key&sslsni=0"):
        assert pgwire.params(f"{base}?{extra}") is not None, extra
    monkeypatch.setenv("PGSSLMODE", "require")
    monkeypatch.setenv("PGSSLROOTCERT", "/r.crt")
    p = pgwire.params(base)
    assert p is not None and (p["sslmode"], p["sslrootcert"]) == ("require", "/r.crt")
    monkeypatch.delenv("PGSSLMODE")
    monkeypatch.setenv("PGSSLROOTCERT", "system")  # libpq 16+: verify-full with the system's
    assert (pgwire.params(base) or {}).get("sslmode") == "verify-full"
    monkeypatch.delenv("PGSSLROOTCERT")
    # a certificate revocation list in ~/.postgresql: libpq checks it, so libpq serves the URL
    (tmp_path / ".postgresql").mkdir()
    (tmp_path / ".postgresql" / "root.crl").write_text("")
    assert pgwire.params(base) is None
    assert pgwire.params(f"{base}?sslmode=disable") is not None
    assert pgwire.params("postgresql:///team?host=/tmp") is not None  # a Unix socket: no TLS
    (tmp_path / ".postgresql" / "root.crl").unlink()
    # a Kerberos ticket: libpq would try GSSAPI encryption first
    monkeypatch.setenv("KRB5CCNAME", str(tmp_path / "cc"))
    assert pgwire.params(base) is None
    assert pgwire.params("postgresql:///team?host=/tmp") is not None


def test_url_hosts_ports_and_percent_encoding():
    p = pgwire.params("postgresql://a%40b:p%2Fw%3A@[::1]:5433/my%20db?application_name=x")
    assert p is not None and (p["user"], p["password"], p["host"], p["port"], p["dbname"]) == (
        "a@b", "p/w:", "::1", "5433", "my db")
    p = pgwire.params("postgresql://ann@%2Frun%2Fpg/team")
    assert p is not None and p["host"] == "/run/pg"
    p = pgwire.params("postgresql://ann@[fe80::1]/team")  # a network: TLS preferred
    assert p is not None and p["host"] == "fe80::1" and p.get("sslmode", "prefer") == "prefer"
    assert pgwire.params("postgresql://ann@h1,h2/team") is None
    assert pgwire.params("postgresql://ann@localhost:54x/team") is None
    # what libpq refuses, libpq refuses (its error says why): never read as some other address
    for wrong in ("postgresql://ann@[::1:1/team", "postgresql://ann@[::1]x/team",
                  "postgresql://ann@localhost:99999/team", "postgresql://ann@localhost:0/team"):
        assert pgwire.params(wrong) is None, wrong


# -- against a real server ----------------------------------------------------------------------


def wire_for(cluster, **extra: str) -> Wire:  # type: ignore[no-untyped-def]
    p = pgwire.params(cluster.url)
    assert p is not None
    return Wire({**p, **extra}, 5, read_timeout=30)


def test_a_non_ascii_password_is_prepared_as_the_server_prepared_it(pg_cluster):
    """The server stores the SCRAM secret of SASLprep(password); a client that sends the raw
    password cannot log in with it."""
    password = "I\u00adX\u2168-\u00e9t\u00e9"
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute("SET password_encryption = 'scram-sha-256'")
        conn.execute("DROP ROLE IF EXISTS nexus_pw")
        conn.execute(f"CREATE ROLE nexus_pw LOGIN PASSWORD '{password}'")
    wire = wire_for(pg_cluster, user="nexus_pw", password=password)
    assert wire.query("SELECT current_user").rows == [("nexus_pw",)]
    wire.close()


def test_a_failed_login_leaves_no_socket_open(pg_cluster):
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute("SET password_encryption = 'scram-sha-256'")
        conn.execute("DROP ROLE IF EXISTS nexus_pw")
        conn.execute("CREATE ROLE nexus_pw LOGIN PASSWORD 'right'")
    before = open_sockets()
    with pytest.raises(WireError) as caught:
        wire_for(pg_cluster, user="nexus_pw", password="wrong")
    assert caught.value.sqlstate == "28P01"
    assert open_sockets() <= before  # the error is still referenced here


def test_parameters_and_results_round_trip_exactly(pg_cluster):
    wire = wire_for(pg_cluster)
    values = [None, b"\x00\xff raw", True, False, 0.1 + 0.2, 1e-310, -0.0, math.inf, -math.inf,
              2**15, -2**31 - 1, 2**63 - 1, 2**63, "t\u00e9xt \x00 and \uffff", ""]
    for value in values:
        cast = {bytes: "::bytea", str: "::text"}.get(type(value), "")
        got = wire.query(f"SELECT $1{cast}", [value]).rows[0][0]
        if isinstance(value, bool):
            assert got == int(value)  # as psycopg's nexus adapters: integers
        else:
            assert got == value and type(got) is type(value), (value, got)
    nan = wire.query("SELECT $1", [math.nan]).rows[0][0]
    assert math.isnan(nan)
    # parameters travel apart from the statement: never spliced into its text
    hostile = "'); DROP TABLE x; --"
    assert wire.query("SELECT $1::text", [hostile]).rows == [(hostile,)]
    wire.close()


def test_nul_in_a_statement_or_a_lone_surrogate_is_a_clear_error_and_the_connection_lives(
        pg_cluster):
    wire = wire_for(pg_cluster)
    for sql, values in (("SELECT 1\x00; SELECT 2", None), ("SELECT $1::text\x00", ["a"]),
                        ("SELECT $1::text", ["\ud800"])):
        with pytest.raises(WireError) as caught:
            wire.query(sql, values)
        assert caught.value.sqlstate == "22021"
        assert not wire.broken
        assert wire.query("SELECT 1").rows == [(1,)]
    with pytest.raises(WireError, match="NUL"):
        wire_for(pg_cluster, user="ann\x00options")
    wire.close()


def test_a_notification_between_results_is_kept_and_the_results_are_whole(pg_cluster):
    listener, sender = wire_for(pg_cluster), wire_for(pg_cluster)
    listener.query("LISTEN bell")
    sender.query("SELECT pg_notify('bell', $1)", ["ring"])
    deadline = time.monotonic() + OUTER
    while not listener.notes and time.monotonic() < deadline:  # arrives with the next reply
        assert listener.query("SELECT $1::int + 1", [1]).rows == [(2,)]
    assert [(n.channel, n.payload) for n in listener.notes] == [("bell", "ring")]
    listener.close()
    sender.close()


def test_results_are_exact_whatever_output_formats_the_role_sets(pg_cluster):
    """bytea_output and extra_float_digits set for the role (or database) would change the text
    of results; the client's startup settings win over them."""
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS nexus_fmt")
        conn.execute("CREATE ROLE nexus_fmt LOGIN")
        conn.execute("ALTER ROLE nexus_fmt SET bytea_output = 'escape'")
        conn.execute("ALTER ROLE nexus_fmt SET extra_float_digits = -10")
    wire = wire_for(pg_cluster, user="nexus_fmt")
    assert wire.query("SELECT $1::bytea, $2::float8", [b"\x00\xff\\x", 0.1 + 0.2]).rows == [
        (b"\x00\xff\\x", 0.1 + 0.2)]
    wire.close()


def ask_cleartext(peer: Peer) -> None:
    peer.send(b"R", struct.pack("!i", 3))
    if peer.recv()[0] == b"p":
        peer.ready()


def test_a_password_that_is_not_utf8_goes_as_its_bytes(serve, monkeypatch):
    monkeypatch.delenv("PGHOST", raising=False)
    peer = serve(ask_cleartext)
    p = pgwire.params(f"postgresql://ann:%FF%FEpw@/team?host={peer.dir}")
    assert p is not None
    Wire(p, 5).close()
    assert peer.got[0] == (b"p", b"\xff\xfepw\0")


def test_a_pgpass_file_others_can_read_is_ignored_as_libpq_does(serve, monkeypatch, tmp_path):
    pgpass = tmp_path / "pgpass"
    pgpass.write_text("*:*:*:ann:from\\:file\n")
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    for mode, ok in ((0o600, True), (0o644, False)):
        pgpass.chmod(mode)
        peer = serve(ask_cleartext)
        p = {k: v for k, v in peer.params().items() if k != "password"}
        if ok:
            Wire(p, 5).close()
            assert peer.got[0] == (b"p", b"from:file\0")
        else:
            with pytest.raises(WireError, match="none was given"):
                Wire(p, 5)
            assert peer.eof.wait(OUTER) and peer.got == []


def test_waiting_for_notifications_works_on_a_descriptor_past_1023(serve):
    """A long-lived process (the MCP server) may hold many files: select() cannot watch them."""
    from helpers import descriptors_past

    with descriptors_past():
        def script(peer: Peer) -> None:
            peer.ready()
            time.sleep(0.2)
            peer.send(b"A", struct.pack("!i", 7) + b"bell\0ring\0")

        wire = Wire(serve(script).params(), 5)
        assert wire.sock.fileno() > 1023
        deadline = time.monotonic() + OUTER
        while not wire.notes and time.monotonic() < deadline:
            wire.wait_notify(1.0)
        assert [n.payload for n in wire.notes] == ["ring"]
        wire.close()


def test_a_notification_that_came_in_behind_a_reply_is_not_left_in_the_buffer(serve):
    """The reply's last read also brought a notification: waiting must return it at once, not
    sleep until more data comes."""
    def script(peer: Peer) -> None:
        note = b"A" + struct.pack("!i", 4 + 4 + 10) + struct.pack("!i", 7) + b"bell\0ring\0"
        peer.raw(b"R" + struct.pack("!ii", 8, 0) + b"Z" + struct.pack("!i", 5) + b"I" + note)

    wire = Wire(serve(script).params(), 5)
    started = time.monotonic()
    wire.wait_notify(OUTER)
    assert [n.payload for n in wire.notes] == ["ring"]
    assert time.monotonic() - started < OUTER / 2
    wire.close()


def test_notices_are_skipped_and_an_error_keeps_its_fields_and_the_connection(serve):
    def script(peer: Peer) -> None:
        peer.ready()
        peer.recv()
        peer.send(b"N", b"SWARNING\0Mnot \xff utf-8\0\0")
        peer.send(b"E", b"SERROR\0C42P01\0Mrelation \xff is missing\0Xunknown field\0\0")
        peer.send(b"Z", b"I")
        peer.recv()
        peer.send(b"T", struct.pack("!h", 1) + b"n\0" + struct.pack("!ihihih", 0, 0, 23, 4, -1, 0))
        peer.send(b"N", b"SNOTICE\0Min between\0\0")
        peer.send(b"D", struct.pack("!hi", 1, 1) + b"7")
        peer.send(b"C", b"SELECT 1\0")
        peer.send(b"Z", b"I")

    wire = Wire(serve(script).params(), 5)
    with pytest.raises(WireError) as caught:
        wire.query("SELECT * FROM missing")
    assert caught.value.sqlstate == "42P01" and str(caught.value) == "relation \ufffd is missing"
    assert not wire.broken
    assert wire.query("SELECT 7").rows == [(7,)]
    wire.close()


# -- TLS, as libpq does it -----------------------------------------------------------------------
# A cluster with ssl=on on 127.0.0.1 (certificates made here with the openssl command line); every
# case is also run through libpq (psycopg): the same outcome, the same encryption.


def openssl(folder, *args: str) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)


def make_ca(folder, name: str) -> None:  # type: ignore[no-untyped-def]
    openssl(folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.crt", "-days", "2", "-subj", f"/CN={name}")


def make_cert(folder, name: str, ca: str, subject: str, san: str | None) -> None:  # type: ignore[no-untyped-def]
    openssl(folder, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
            f"{name}.csr", "-subj", f"/CN={subject}")
    ext = folder / f"{name}.ext"
    ext.write_text(f"subjectAltName={san}\n" if san else "basicConstraints=CA:FALSE\n")
    openssl(folder, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey",
            f"{ca}.key", "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile",
            str(ext))
    os.chmod(folder / f"{name}.key", 0o600)


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):  # type: ignore[no-untyped-def]
    import pgcluster

    if pgcluster.bindir() is None or shutil.which("openssl") is None:
        if os.environ.get("NEXUS_REQUIRE_PG") == "1":
            pytest.fail("PostgreSQL or openssl is not installed (scripts/test.sh installs them)")
        pytest.skip("PostgreSQL or openssl is not installed")
    certs = tmp_path_factory.mktemp("certs")
    make_ca(certs, "ca")
    make_ca(certs, "other")  # a CA that signed nothing of this server's
    make_cert(certs, "server", "ca", "db.test", "DNS:localhost")
    make_cert(certs, "client", "ca", "nexus_cert", None)
    cluster = pgcluster.start(tls={"cert": str(certs / "server.crt"),
                                   "key": str(certs / "server.key"), "ca": str(certs / "ca.crt")})
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute("SET password_encryption = 'scram-sha-256'")
        for role in ("nexus_pw", "nexus_clear", "nexus_tlsonly", "nexus_plainonly", "nexus_cert"):
            conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    cluster.certs = certs
    yield cluster
    cluster.stop()


@pytest.fixture
def tls_env(tls_cluster, monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    """An empty home (no ~/.postgresql), no libpq settings in the environment."""
    for var in list(os.environ):
        if var.startswith("PG"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tls_cluster


def both(url: str) -> tuple[tuple, tuple]:
    """(outcome through this client, outcome through libpq): ("ok", encrypted) or ("error",
    its message)."""
    p = pgwire.params(url)
    assert p is not None, url
    try:
        wire = Wire(p, 10, read_timeout=30)
        assert wire.query("SELECT 1").rows == [(1,)]
        ours: tuple = ("ok", wire.tls)
        wire.close()
    except WireError as exc:
        ours = ("error", str(exc))
    try:
        with psycopg.connect(url, connect_timeout=10) as conn:
            theirs: tuple = ("ok", bool(conn.pgconn.ssl_in_use))
    except psycopg.OperationalError as exc:
        theirs = ("error", str(exc))
    return ours, theirs


@pytest.mark.parametrize(("host", "user", "query", "outcome"), [
    # no root certificate: encrypted, nothing verified
    ("127.0.0.1", None, {"sslmode": "require"}, ("ok", True)),
    ("127.0.0.1", None, {}, ("ok", True)),  # prefer, the default
    ("127.0.0.1", None, {"sslmode": "verify-ca", "sslrootcert": "{ca}"}, ("ok", True)),
    ("localhost", None, {"sslmode": "verify-full", "sslrootcert": "{ca}"}, ("ok", True)),
    # the wrong CA: refused in every mode that asks for TLS, except prefer, which goes plain
    ("127.0.0.1", None, {"sslmode": "verify-ca", "sslrootcert": "{other}"},
     "certificate verify failed"),
    ("127.0.0.1", None, {"sslmode": "require", "sslrootcert": "{other}"},
     "certificate verify failed"),
    ("127.0.0.1", None, {"sslmode": "prefer", "sslrootcert": "{other}"}, ("ok", False)),
    # the right CA, a host name the certificate does not name
    ("127.0.0.1", None, {"sslmode": "verify-full", "sslrootcert": "{ca}"},
     'server certificate for "localhost" (and 1 other name) does not match host name '
     '"127.0.0.1"'),
    ("127.0.0.1", None, {"sslmode": "verify-ca", "sslrootcert": "{missing}"},
     'root certificate file "{missing}" does not exist'),
    # the system's roots never signed this test CA (and mean verify-full)
    ("localhost", None, {"sslrootcert": "system"}, "certificate verify failed"),
    # a role the server takes over TLS only: allow tries plain, then TLS
    ("127.0.0.1", "nexus_tlsonly", {"sslmode": "allow"}, ("ok", True)),
    ("127.0.0.1", "nexus_tlsonly", {"sslmode": "disable"}, "no encryption"),
    # a role it refuses over TLS: prefer tries plain after the refusal
    ("127.0.0.1", "nexus_plainonly", {"sslmode": "prefer"}, ("ok", False)),
    ("127.0.0.1", "nexus_plainonly", {"sslmode": "require"}, "SSL encryption"),
    # a client certificate, verified by the server (pg_hba `cert`: its CN is the role)
    ("127.0.0.1", "nexus_cert", {"sslmode": "require", "sslcert": "{certs}/client.crt",
                                 "sslkey": "{certs}/client.key"}, ("ok", True)),
    ("127.0.0.1", "nexus_cert", {"sslmode": "require"}, "certificate"),
])
def test_tls_connections_end_as_libpq_ends_them(tls_env, host, user, query, outcome):
    certs = tls_env.certs
    names = {"ca": certs / "ca.crt", "other": certs / "other.crt", "certs": certs,
             "missing": certs / "missing.crt"}
    query = {k: v.format(**names) for k, v in query.items()}
    ours, theirs = both(tls_env.tcp_url(host=host, user=user, **query))
    if isinstance(outcome, str):
        outcome = outcome.format(**names)
        assert ours[0] == theirs[0] == "error" and outcome in ours[1], (ours, theirs)
        assert outcome in theirs[1]  # libpq's words
    else:
        assert ours == theirs == outcome


def test_the_default_files_in_home_are_used_as_libpq_uses_them(tls_env, tmp_path):
    certs, dot = tls_env.certs, tmp_path / ".postgresql"
    dot.mkdir()
    # ~/.postgresql/root.crt: verified in require mode too (here: the wrong CA, refused)
    shutil.copy(certs / "other.crt", dot / "root.crt")
    ours, theirs = both(tls_env.tcp_url(sslmode="require"))
    assert ours[0] == theirs[0] == "error" and "certificate verify failed" in ours[1]
    shutil.copy(certs / "ca.crt", dot / "root.crt")
    url = tls_env.tcp_url(host="localhost", sslmode="verify-full")
    assert both(url) == (("ok", True), ("ok", True))
    # ~/.postgresql/postgresql.crt and .key: the client certificate
    shutil.copy(certs / "client.crt", dot / "postgresql.crt")
    shutil.copy(certs / "client.key", dot / "postgresql.key")
    url = tls_env.tcp_url(user="nexus_cert", sslmode="verify-ca")
    os.chmod(dot / "postgresql.key", 0o600)
    assert both(url) == (("ok", True), ("ok", True))
    # a key others can read: refused before it is read, as libpq refuses it (root may let its
    # group read it: 0640)
    os.chmod(dot / "postgresql.key", 0o644 if os.geteuid() == 0 else 0o640)
    ours, theirs = both(url)
    assert ours[0] == theirs[0] == "error" and "group or world access" in ours[1]
    assert "group or world access" in theirs[1]
    # prefer: a TLS set-up that fails (that key) goes plain, as libpq's does
    ours, theirs = both(tls_env.tcp_url(sslmode="prefer"))
    assert ours == theirs == ("ok", False)


def test_scram_over_tls_binds_the_channel_and_the_server_checks_it(tls_env, monkeypatch):
    headers = []
    real = pgwire._Scram.first

    def spy(self):  # type: ignore[no-untyped-def]
        headers.append(self.header)
        return real(self)

    monkeypatch.setattr(pgwire._Scram, "first", spy)
    url = tls_env.tcp_url(user="nexus_pw:pw", sslmode="require")
    assert both(url) == (("ok", True), ("ok", True))
    assert headers == [b"p=tls-server-end-point,,"]  # SCRAM-SHA-256-PLUS
    # a binding to another certificate (a man in the middle's): the server refuses the login
    monkeypatch.setattr(pgwire, "_end_point", lambda cert: b"\0" * 32)
    with pytest.raises(WireError) as caught:
        Wire(pgwire.params(url) or {}, 10)
    assert (caught.value.sqlstate or "").startswith("28")
    # without TLS (a server that offers no -PLUS): "n", as libpq
    headers.clear()
    monkeypatch.undo()
    monkeypatch.setattr(pgwire._Scram, "first", spy)
    wire = Wire(pgwire.params(tls_env.tcp_url(user="nexus_pw:pw", sslmode="disable")) or {}, 10)
    wire.close()
    assert headers == [b"n,,"]


def test_host_names_match_as_libpq_matches_them():
    def matches(host: str, sans: tuple = (), cn: str | None = None) -> bool:
        cert = {"subjectAltName": sans,
                "subject": ((("commonName", cn),),) if cn is not None else ()}
        try:
            pgwire._match_host(host, cert)
        except WireError:
            return False
        return True

    assert matches("DB.Example.com", (("DNS", "db.example.COM"),))
    assert matches("a.example.com", (("DNS", "*.example.com"),))
    assert not matches("a.b.example.com", (("DNS", "*.example.com"),))  # one label only
    assert not matches("example.com", (("DNS", "*.example.com"),))
    assert not matches("a.example.com", (("DNS", "a*.example.com"),))  # no partial wildcard
    # the common name counts only without a subjectAltName of the host's kind
    assert not matches("db.test", (("DNS", "other.test"),), cn="db.test")
    assert matches("db.test", (("IP Address", "10.0.0.1"),), cn="db.test")
    assert matches("db.test", cn="db.test")
    assert matches("127.0.0.1", (("IP Address", "127.0.0.1"),))
    assert matches("::1", (("IP Address", "0:0:0:0:0:0:0:1"),))
    assert not matches("127.0.0.2", (("IP Address", "127.0.0.1"),), cn="127.0.0.2")
    assert matches("127.0.0.2", (("DNS", "localhost"),), cn="127.0.0.2")  # no IP SAN: the CN
    with pytest.raises(WireError, match="embedded null"):
        pgwire._match_host("db.test", {"subjectAltName": (("DNS", "db.test\0.evil"),)})
    with pytest.raises(WireError, match="could not get server's host name"):
        pgwire._match_host("db.test", {})


def test_the_server_certificate_hash_follows_its_signature_algorithm(tls_env):
    import hashlib
    import ssl

    der = ssl.PEM_cert_to_DER_cert((tls_env.certs / "server.crt").read_text())
    assert pgwire._end_point(der) == hashlib.sha256(der).digest()  # sha256WithRSAEncryption
    with pytest.raises(WireError):
        pgwire._end_point(b"\x30\x03\x02\x01\x00")


def test_a_cleartext_password_crosses_a_network_only_inside_verified_tls(tls_env, monkeypatch):
    monkeypatch.setattr(pgwire, "_exposed", lambda sock: True)  # as if another machine
    ca = tls_env.certs / "ca.crt"
    url = tls_env.tcp_url(user="nexus_clear:pw", sslmode="require")
    with pytest.raises(WireError, match="clear text") as caught:
        Wire(pgwire.params(url) or {}, 10)
    assert caught.value.sqlstate == "28000"
    wire = Wire(pgwire.params(f"{url}&sslmode=verify-ca&sslrootcert={ca}") or {}, 10)
    assert wire.verified and wire.query("SELECT current_user").rows == [("nexus_clear",)]
    wire.close()


def test_notifications_arrive_over_tls(tls_env):
    p = pgwire.params(tls_env.tcp_url(sslmode="require")) or {}
    listener, sender = Wire(p, 10, read_timeout=30), Wire(p, 10, read_timeout=30)
    try:
        assert listener.tls
        listener.query("LISTEN bell")
        # one commit delivers them all at once: many TLS records, messages split across them
        payloads = [f"p{n}-" + "x" * 300 for n in range(200)]
        sender.query("BEGIN; " + "; ".join(f"NOTIFY bell, '{p}'" for p in payloads)
                     + "; COMMIT")
        deadline, got = time.monotonic() + OUTER, []
        while len(got) < len(payloads) and time.monotonic() < deadline:
            listener.wait_notify(1.0)
            got += [n.payload for n in listener.notes]
            listener.notes.clear()
        assert got == payloads
    finally:
        listener.close()
        sender.close()


def test_team_mode_connects_over_tls_with_this_client_and_says_so(tls_env, monkeypatch):
    from nexus_cli.core.store import pg

    url = tls_env.tcp_url(sslmode="require")
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    conn = pg.connect(url, "/nonexistent")
    try:
        assert isinstance(conn.raw, pg.WireRaw) and conn.raw.pgconn.ssl_in_use
    finally:
        conn.close()
    assert pg.ping(url)["tls"] is True


def ssl_request(peer: Peer) -> bool:
    return peer.startup == struct.pack("!i", 80877103)


def test_bytes_behind_the_servers_tls_answer_are_refused(serve):
    def script(peer: Peer) -> None:
        assert ssl_request(peer)
        # 'S' and, in the same packet, what a man in the middle wants read as the server's
        peer.raw(b"S" + b"R" + struct.pack("!i", 8) + struct.pack("!i", 0) + b"Z\0\0\0\5I")

    for mode in ("require", "prefer"):
        peer = serve(script, tcp=True)
        with pytest.raises(WireError, match="unencrypted data after SSL response"):
            Wire(peer.params(sslmode=mode), 5)
        assert peer.eof.wait(OUTER)


def test_a_server_without_tls_fails_require_with_a_coded_error_and_prefer_goes_plain(serve):
    from nexus_cli.core.errors import NexusError
    from nexus_cli.core.store import pg

    def script(peer: Peer) -> None:
        assert ssl_request(peer)
        peer.raw(b"N")
        size = struct.unpack("!i", peer._exact(4))[0]
        peer.startup = peer._exact(size - 4)  # the startup message, in the clear
        peer.ready()

    peer = serve(script, tcp=True)
    port = peer.listener.getsockname()[1]
    with pytest.raises(NexusError) as caught:
        pg.connect(f"postgresql://ann@127.0.0.1:{port}/team?sslmode=require", "/nonexistent")
    assert caught.value.code == "team_unreachable"
    assert "server does not support SSL, but SSL was required" in caught.value.reason
    peer = serve(script, tcp=True)
    wire = Wire(peer.params(sslmode="prefer"), 5)
    assert not wire.tls and b"user\0ann" in peer.startup
    wire.close()


def test_an_answer_other_than_s_or_n_is_refused_unread(serve):
    def script(peer: Peer) -> None:
        peer.raw(b"E" + struct.pack("!i", 20) + b"SFATAL\0Mforged\0\0")

    peer = serve(script, tcp=True)
    with pytest.raises(WireError, match="invalid response to SSL negotiation") as caught:
        Wire(peer.params(sslmode="require"), 5)
    assert "forged" not in str(caught.value)


def test_a_unix_socket_connection_never_loads_ssl(pg_cluster):
    import subprocess
    import sys

    code = ("import sys; from nexus_cli.core.store import pgwire; "
            f"w = pgwire.Wire(pgwire.params({pg_cluster.url!r}), 10); w.query('SELECT 1'); "
            "w.close(); print('ssl' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "False"


def tls_peer(certs, seen: dict) -> int:  # type: ignore[no-untyped-def]
    """A scripted TLS server on 127.0.0.1 (one connection): records the SNI name the client sent
    and its SASL first message after offering SCRAM-SHA-256 only (no -PLUS); returns its port."""
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs / "server.crt", certs / "server.key")
    ctx.sni_callback = lambda sock, name, context: seen.__setitem__("sni", name)  # type: ignore[assignment,misc]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def run() -> None:
        conn, _ = listener.accept()
        listener.close()
        try:
            conn.settimeout(OUTER)
            assert conn.recv(8) == struct.pack("!ii", 8, 80877103)
            conn.sendall(b"S")
            tls = ctx.wrap_socket(conn, server_side=True)
            size = struct.unpack("!i", tls.recv(4))[0]
            data = b""
            while len(data) < size - 4:
                data += tls.recv(size - 4 - len(data))
            tls.sendall(b"R" + struct.pack("!i", 8 + 15) + struct.pack("!i", 10)
                        + b"SCRAM-SHA-256\0\0")
            head = tls.recv(5)
            body = b""
            while len(body) < struct.unpack("!i", head[1:5])[0] - 4:
                body += tls.recv(4096)
            seen["sasl"] = body
            tls.close()
        except (OSError, AssertionError) as exc:
            seen["error"] = repr(exc)
        finally:
            seen["done"] = True

    threading.Thread(target=run, daemon=True).start()
    return listener.getsockname()[1]


@pytest.mark.parametrize(("host", "sni", "sent"), [
    ("localhost", "1", "localhost"), ("localhost", "0", None), ("127.0.0.1", "1", None)])
def test_sni_and_the_scram_header_without_plus_are_libpqs(tls_env, host, sni, sent):
    seen: dict = {}
    port = tls_peer(tls_env.certs, seen)
    p = {"host": host, "port": str(port), "user": "ann", "dbname": "team", "password": "pw",
         "sslmode": "require", "sslsni": sni}
    with pytest.raises(WireError):
        Wire(p, 10)
    deadline = time.monotonic() + OUTER
    while "done" not in seen and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "error" not in seen, seen
    assert seen.get("sni") == sent
    # TLS, and the server offers no -PLUS: "y" (this client could bind; a server that did offer
    # it and had it stripped on the way would see the downgrade)
    assert seen["sasl"].startswith(b"SCRAM-SHA-256\0") and b"y,,n=,r=" in seen["sasl"]


def test_doctor_and_team_status_report_tls_through_this_client(tls_env, nx, monkeypatch):
    from nexus_cli.core.store import pg

    root = tls_env.certs / "ca.crt"
    url = tls_env.tcp_url(host="localhost", sslmode="verify-full", sslrootcert=str(root))
    conn = pg.connect(url, "/nonexistent")
    try:
        assert isinstance(conn.raw, pg.WireRaw)
        pg.migrate(conn, 0.0)
    finally:
        conn.close()
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    status = nx("team", "status", "--json").json
    assert status["reachable"] and status["server"]["tls"] is True, status
    assert status["server"]["tls_verification"] == "full"
    assert "yes, the server verified" in nx("team", "status").out
    checks = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}
    assert checks["tls"]["status"] == "ok" and "the server verified" in checks["tls"]["detail"]
    # how far the server is verified, through either client, as libpq verifies it
    verify_ca = tls_env.tcp_url(host="127.0.0.1", sslmode="verify-ca", sslrootcert=str(root))
    unverified = tls_env.tcp_url(host="localhost", sslmode="require")
    for given, how, status_ in ((verify_ca, "ca", "ok"), (unverified, "none", "warn")):
        for client in ("pgwire", "psycopg"):
            monkeypatch.setenv("NEXUS_DATABASE_URL",
                               given + ("&sslcrl=/nonexistent" if client == "psycopg" else ""))
            server = nx("team", "status", "--json").json["server"]
            assert server["tls"] and server["tls_verification"] == how, (client, server)
            tls = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}["tls"]
            assert tls["status"] == status_, (client, tls)
    assert "anyone on the way" in tls["detail"] and "verify-full" in tls["fix"]
    monkeypatch.setenv("NEXUS_DATABASE_URL", url.replace("verify-full", "disable"))
    checks = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}
    assert checks["tls"]["status"] == "warn" and checks["tls"]["detail"] == "not encrypted"
