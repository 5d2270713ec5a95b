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

    def __init__(self, script) -> None:  # type: ignore[no-untyped-def]
        self.dir = tempfile.mkdtemp(prefix="pgw-", dir="/tmp")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(os.path.join(self.dir, ".s.PGSQL.5432"))
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
        return {"host": self.dir, "port": "5432", "user": "ann", "dbname": "team",
                "password": "pw", **extra}

    def stop(self) -> None:
        self.listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def serve():  # type: ignore[no-untyped-def]
    peers: list[Peer] = []

    def start(script) -> Peer:  # type: ignore[no-untyped-def]
        peers.append(Peer(script))
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
    assert first.startswith("n,,n=,r=")  # no channel binding: no TLS here
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
    assert "broke the protocol" in str(err) and err.sqlstate is None


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


def test_a_unix_socket_that_is_not_there_leaves_no_socket_open(tmp_path):
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(WireError, match="failed") as caught:
        Wire({"host": str(tmp_path), "port": "5432", "user": "ann", "dbname": "x"}, 2)
    assert len(os.listdir("/proc/self/fd")) == before, caught.value


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


def test_urls_that_ask_libpq_for_more_than_this_client_does_go_to_libpq(monkeypatch):
    for key in ("PGCHANNELBINDING", "PGREQUIREAUTH", "PGSSLMODE"):
        monkeypatch.delenv(key, raising=False)
    base = "postgresql://ann@localhost/team"
    assert pgwire.params(base) is not None
    # it could not honour them: libpq must (or refuse)
    for extra in ("require_auth=scram-sha-256", "channel_binding=require", "requiressl=1",
                  "sslmode=verify_full", "gssencmode=require", "sslnegotiation=direct",
                  "sslmode=require", "sslmode=verify-full", "something_new=1"):
        assert pgwire.params(f"{base}?{extra}") is None, extra
    monkeypatch.setenv("PGCHANNELBINDING", "require")
    assert pgwire.params(base) is None
    monkeypatch.delenv("PGCHANNELBINDING")
    monkeypatch.setenv("PGSSLMODE", "require")
    assert pgwire.params(base) is None


def test_url_hosts_ports_and_percent_encoding():
    p = pgwire.params("postgresql://a%40b:p%2Fw%3A@[::1]:5433/my%20db?application_name=x")
    assert p is not None and (p["user"], p["password"], p["host"], p["port"], p["dbname"]) == (
        "a@b", "p/w:", "::1", "5433", "my db")
    p = pgwire.params("postgresql://ann@%2Frun%2Fpg/team")
    assert p is not None and p["host"] == "/run/pg"
    assert pgwire.params("postgresql://ann@[fe80::1]/team") is None  # a network: libpq (TLS)
    assert pgwire.params("postgresql://ann@h1,h2/team") is None
    assert pgwire.params("postgresql://ann@localhost:54x/team") is None


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
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(WireError) as caught:
        wire_for(pg_cluster, user="nexus_pw", password="wrong")
    assert caught.value.sqlstate == "28P01"
    assert len(os.listdir("/proc/self/fd")) == before  # the error is still referenced here


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
