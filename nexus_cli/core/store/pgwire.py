"""A small PostgreSQL client in the standard library, for the hook hot path of team mode.

psycopg costs a hook about 200 ms to import; this speaks the frontend/backend protocol 3.0
directly (startup, trust/password/MD5/SCRAM-SHA-256 authentication, the extended query protocol
with text parameters, simple queries, LISTEN notifications) on a Unix socket or a plain TCP
connection. It serves the URLs it can serve exactly as libpq would: a Unix socket, or TCP to this
machine or with `sslmode=disable|allow`; anything else (TLS, a service file, Kerberos ...) goes
to psycopg (`pg.connect` decides). Stdlib only."""

from __future__ import annotations

import os
import socket
import struct

UNSUPPORTED = ("service", "sslcert", "sslkey", "sslrootcert", "sslcrl", "gssencmode", "krbsrvname",
               "target_session_attrs", "hostaddr", "passfile", "requirepeer", "load_balance_hosts")
LOCAL = ("localhost", "127.0.0.1", "::1")
PREPARED_MAX = 256  # statements kept prepared per connection
INT_OIDS = frozenset({20, 21, 23, 26, 28})
FLOAT_OIDS = frozenset({700, 701})


class WireError(Exception):
    """An error the server sent (its fields by their protocol letters), or a lost connection
    (`sqlstate` None)."""

    def __init__(self, message: str, fields: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.fields = fields or {}
        self.sqlstate = self.fields.get("C")


def _unquote(text: str) -> str:
    if "%" not in text:
        return text
    from urllib.parse import unquote

    return unquote(text)


def params(url: str) -> dict[str, str] | None:
    """The connection parameters of a `postgresql://` URL, or None when this client should not
    serve it (then libpq does)."""
    if not url.startswith(("postgresql://", "postgres://")):
        return None
    rest = url.split("://", 1)[1]
    rest, _, query = rest.partition("?")
    netloc, _, db = rest.partition("/")
    out: dict[str, str] = {}
    if "@" in netloc:
        auth, netloc = netloc.rsplit("@", 1)
        user, _, password = auth.partition(":")
        if user:
            out["user"] = _unquote(user)
        if password:
            out["password"] = _unquote(password)
    if netloc:
        if netloc.startswith("["):
            host, _, port = netloc[1:].partition("]")
            port = port.lstrip(":")
        else:
            host, _, port = netloc.partition(":")
        if "," in netloc:
            return None  # several hosts: libpq's failover
        if host:
            out["host"] = _unquote(host)
        if port:
            out["port"] = port
    if db:
        out["dbname"] = _unquote(db)
    for pair in query.split("&") if query else ():
        key, _, value = pair.partition("=")
        key, value = _unquote(key), _unquote(value)
        if key in UNSUPPORTED:
            return None
        out[key] = value
    env = os.environ
    for key, var in (("host", "PGHOST"), ("port", "PGPORT"), ("user", "PGUSER"),
                     ("password", "PGPASSWORD"), ("dbname", "PGDATABASE"),
                     ("sslmode", "PGSSLMODE"), ("options", "PGOPTIONS")):
        if key not in out and env.get(var):
            out[key] = env[var]
    if any(env.get(v) for v in ("PGSERVICE", "PGSERVICEFILE", "PGSSLCERT", "PGHOSTADDR")):
        return None
    out.setdefault("port", "5432")
    if not out["port"].isdigit():
        return None
    if "host" not in out:
        out["host"] = next((d for d in ("/var/run/postgresql", "/tmp") if os.path.isdir(d)), "/tmp")
    if "," in out["host"]:
        return None
    if "user" not in out:
        import pwd

        try:
            out["user"] = pwd.getpwuid(os.getuid()).pw_name
        except KeyError:
            return None
    out.setdefault("dbname", out["user"])
    sslmode = out.get("sslmode", "prefer")
    if not out["host"].startswith("/") and not (
            sslmode in ("disable", "allow") or (sslmode == "prefer" and out["host"] in LOCAL)):
        return None  # TLS wanted (or possible) over the network: libpq's job
    return out


def _pgpass(p: dict[str, str]) -> str | None:
    path = os.environ.get("PGPASSFILE") or os.path.expanduser("~/.pgpass")
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    host = "localhost" if p["host"].startswith("/") else p["host"]
    want = (host, p["port"], p["dbname"], p["user"])
    for line in lines:
        if not line or line.startswith("#"):
            continue
        fields: list[str] = []
        cur, esc = "", False
        for ch in line:
            if esc:
                cur += ch
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == ":" and len(fields) < 4:
                fields.append(cur)
                cur = ""
            else:
                cur += ch
        fields.append(cur)
        if len(fields) == 5 and all(f in ("*", w) for f, w in zip(fields[:4], want, strict=True)):
            return fields[4]
    return None


class Result:
    __slots__ = ("names", "oids", "rows", "tag")

    def __init__(self) -> None:
        self.names: tuple[str, ...] | None = None
        self.oids: tuple[int, ...] = ()
        self.rows: list[tuple] = []
        self.tag = ""

    @property
    def rowcount(self) -> int:
        last = self.tag.rsplit(" ", 1)[-1]
        return int(last) if last.isdigit() else -1


def _value(raw: bytes | None, oid: int) -> object:
    if raw is None:
        return None
    if oid in INT_OIDS:
        return int(raw)
    if oid in FLOAT_OIDS:
        return float(raw)
    if oid == 1700:
        text = raw.decode()
        try:
            return int(text)
        except ValueError:
            return float(text)
    if oid == 16:
        return raw == b"t"
    if oid == 17:
        return bytes.fromhex(raw[2:].decode()) if raw.startswith(b"\\x") else raw
    text = raw.decode("utf-8")
    if "\uffff" in text:
        import re

        text = re.sub("\uffff([01])", lambda m: "\x00" if m.group(1) == "0" else "\uffff", text)
    return text


def _param(value: object) -> tuple[int, bytes | None]:
    """(type oid, text) of a parameter: as psycopg sends them (a string's type left to the
    server; NUL kept as U+FFFF 0, U+FFFF as U+FFFF 1, and turned back on the way out)."""
    if value is None:
        return 0, None
    if isinstance(value, bool):
        return 20, b"1" if value else b"0"
    if isinstance(value, int):  # the smallest integer type that holds it, as psycopg does
        oid = 21 if -2**15 <= value < 2**15 else 23 if -2**31 <= value < 2**31 else \
            20 if -2**63 <= value < 2**63 else 1700
        return oid, str(value).encode()
    if isinstance(value, float):
        text = repr(value)
        return 701, (b"Infinity" if text == "inf" else b"-Infinity" if text == "-inf"
                     else b"NaN" if text == "nan" else text.encode())
    if isinstance(value, bytes | bytearray | memoryview):
        return 17, b"\\x" + bytes(value).hex().encode()
    text = str(value)
    if "\x00" in text or "\uffff" in text:
        text = text.replace("\uffff", "\uffff1").replace("\x00", "\uffff0")
    return 0, text.encode("utf-8")


class Notify:
    __slots__ = ("channel", "payload", "pid")

    def __init__(self, pid: int, channel: str, payload: str) -> None:
        self.pid, self.channel, self.payload = pid, channel, payload


class Wire:
    """One connection. `query` runs a statement (with $n parameters) or, without parameters, a
    simple query (several statements allowed)."""

    def __init__(self, p: dict[str, str], timeout: float) -> None:
        self.status = "I"  # the transaction status of the last ReadyForQuery
        self.parameters: dict[str, str] = {}
        self.notes: list[Notify] = []
        self.broken = False
        self.closed = False
        self._buf = bytearray()
        self._prepared: dict[tuple, bytes] = {}
        self._serial = 0
        try:
            if p["host"].startswith("/"):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(timeout)
                sock.connect(os.path.join(p["host"], f".s.PGSQL.{p['port']}"))
            else:
                sock = socket.create_connection((p["host"], int(p["port"])), timeout)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            raise WireError(f"connection to server at {p['host']} failed: "
                            f"{exc.strerror or exc}") from None
        self.sock = sock
        try:
            self._startup(p)
        except OSError as exc:
            self.close()
            raise WireError(f"connection to server failed: {exc.strerror or exc}") from None
        sock.settimeout(None)  # statement_timeout bounds what runs; the socket waits for it

    # -- framing -----------------------------------------------------------------------------------

    def _send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as exc:
            self.broken = True
            raise WireError(f"server closed the connection ({exc.strerror or exc})") from None

    @staticmethod
    def _msg(kind: bytes, body: bytes) -> bytes:
        return kind + struct.pack("!i", len(body) + 4) + body

    def _fill(self, n: int) -> None:
        while len(self._buf) < n:
            try:
                chunk = self.sock.recv(max(65536, n - len(self._buf)))
            except OSError as exc:
                self.broken = True
                raise WireError(f"server closed the connection ({exc.strerror or exc})") from None
            if not chunk:
                self.broken = True
                raise WireError("server closed the connection unexpectedly")
            self._buf += chunk

    def _read(self) -> tuple[bytes, bytes]:
        self._fill(5)
        kind = bytes(self._buf[:1])
        size = struct.unpack("!i", self._buf[1:5])[0]
        self._fill(1 + size)
        body = bytes(self._buf[5:1 + size])
        del self._buf[:1 + size]
        if kind == b"A":
            pid = struct.unpack("!i", body[:4])[0]
            channel, payload = body[4:].split(b"\0")[:2]
            self.notes.append(Notify(pid, channel.decode(), payload.decode()))
        return kind, body

    @staticmethod
    def _error(body: bytes) -> WireError:
        fields = {}
        for part in body.split(b"\0"):
            if part:
                fields[chr(part[0])] = part[1:].decode("utf-8", "replace")
        return WireError(fields.get("M", "error"), fields)

    # -- startup and authentication -------------------------------------------------------------

    def _startup(self, p: dict[str, str]) -> None:
        pairs = {"user": p["user"], "database": p["dbname"], "client_encoding": "UTF8",
                 "application_name": p.get("application_name", "nexus")}
        if p.get("options"):
            pairs["options"] = p["options"]
        body = struct.pack("!i", 196608) + b"".join(
            k.encode() + b"\0" + v.encode() + b"\0" for k, v in pairs.items()) + b"\0"
        self._send(struct.pack("!i", len(body) + 4) + body)
        scram = None
        while True:
            kind, body = self._read()
            if kind == b"E":
                raise self._error(body)
            if kind == b"R":
                code = struct.unpack("!i", body[:4])[0]
                if code == 0:
                    continue
                password = p.get("password") or _pgpass(p)
                if password is None:
                    raise WireError("the server asks for a password and none was given "
                                    "(~/.pgpass, PGPASSWORD or the URL)", {"C": "28P01"})
                if code == 3:
                    self._send(self._msg(b"p", password.encode() + b"\0"))
                elif code == 5:
                    import hashlib

                    inner = hashlib.md5(password.encode() + p["user"].encode()).hexdigest()
                    outer = hashlib.md5(inner.encode() + body[4:8]).hexdigest()
                    self._send(self._msg(b"p", b"md5" + outer.encode() + b"\0"))
                elif code == 10:
                    if b"SCRAM-SHA-256" not in body[4:].split(b"\0"):
                        raise WireError("the server offers no SASL mechanism this client knows")
                    scram = _Scram(password)
                    first = scram.first()
                    self._send(self._msg(b"p", b"SCRAM-SHA-256\0" + struct.pack("!i", len(first))
                                         + first))
                elif code == 11 and scram is not None:
                    self._send(self._msg(b"p", scram.final(body[4:])))
                elif code == 12 and scram is not None:
                    scram.verify(body[4:])
                else:
                    raise WireError(f"authentication method {code} is not supported here")
            elif kind == b"S":
                key, value = body.split(b"\0")[:2]
                self.parameters[key.decode()] = value.decode()
            elif kind == b"Z":
                self.status = chr(body[0])
                return

    # -- queries ----------------------------------------------------------------------------------

    def query(self, sql: str, values: list | tuple | None = None) -> Result:
        if self.closed or self.broken:
            raise WireError("the connection is closed")
        key: tuple = ()
        name = b""
        if values is None:
            self._send(self._msg(b"Q", sql.encode("utf-8") + b"\0"))
        else:
            typed = [_param(v) for v in values]
            key = (sql, tuple(oid for oid, _ in typed))
            known = self._prepared.get(key)
            if known is None and len(self._prepared) >= PREPARED_MAX and self.status == "I":
                self._forget()  # statements built on the fly: keep the server's share bounded
            parse = b""
            if known is not None:
                name = known
            else:  # prepared once per connection: the server parses and plans once
                self._serial += 1
                name = f"n{self._serial}".encode()
                parse = self._msg(b"P", name + b"\0" + sql.encode("utf-8") + b"\0"
                                  + struct.pack("!h", len(typed))
                                  + b"".join(struct.pack("!I", oid) for oid, _ in typed))
            bind = [b"\0" + name + b"\0", struct.pack("!hh", 0, len(typed))]
            for _, text in typed:
                bind.append(struct.pack("!i", -1) if text is None else
                            struct.pack("!i", len(text)) + text)
            bind.append(struct.pack("!h", 0))
            self._send(parse + self._msg(b"B", b"".join(bind))
                       + self._msg(b"D", b"P\0") + self._msg(b"E", b"\0\0\0\0\0")
                       + self._msg(b"S", b""))
        result, error, parsed = Result(), None, False
        while True:
            kind, body = self._read()
            if kind == b"D":
                count = struct.unpack("!h", body[:2])[0]
                pos, row = 2, []  # type: int, list
                for i in range(count):
                    size = struct.unpack("!i", body[pos:pos + 4])[0]
                    pos += 4
                    if size < 0:
                        row.append(None)
                    else:
                        row.append(_value(body[pos:pos + size], result.oids[i]))
                        pos += size
                result.rows.append(tuple(row))
            elif kind == b"T":
                count = struct.unpack("!h", body[:2])[0]
                pos, names, oids = 2, [], []
                for _ in range(count):
                    end = body.index(b"\0", pos)
                    names.append(body[pos:end].decode())
                    oids.append(struct.unpack("!I", body[end + 7:end + 11])[0])
                    pos = end + 19
                result = Result()  # a simple query's last statement is the one returned
                result.names, result.oids = tuple(names), tuple(oids)
            elif kind == b"C":
                result.tag = body[:-1].decode()
            elif kind == b"E":
                error = self._error(body)
            elif kind == b"1":
                parsed = True
            elif kind == b"Z":
                self.status = chr(body[0])
                if parsed:
                    self._prepared[key] = name
                if error is not None:
                    if error.sqlstate == "0A000":  # a cached plan outlived a schema change
                        self._forget()
                    raise error
                return result
            elif kind == b"S":
                setting, value = body.split(b"\0")[:2]
                self.parameters[setting.decode()] = value.decode()

    def _forget(self) -> None:
        """Drop every prepared statement (the next use prepares it again)."""
        self._prepared.clear()
        self._send(self._msg(b"Q", b"DEALLOCATE ALL\0"))
        while self._read()[0] != b"Z":
            pass

    def wait_notify(self, timeout: float) -> None:
        """Read what arrives within `timeout` seconds (notifications), outside any query."""
        import select

        if self.notes:
            return
        ready, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        if not ready:
            return
        self.sock.setblocking(False)
        try:
            chunk = self.sock.recv(65536)
        except BlockingIOError:
            chunk = b"-"
        except OSError:
            chunk = b""
        finally:
            self.sock.setblocking(True)
        if not chunk:
            self.broken = True
            raise WireError("server closed the connection unexpectedly")
        if chunk != b"-":
            self._buf += chunk
            while len(self._buf) >= 5 and len(self._buf) >= 1 + struct.unpack(
                    "!i", self._buf[1:5])[0]:
                self._read()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.sock.sendall(self._msg(b"X", b""))
            except OSError:
                pass
            self.sock.close()


class _Scram:
    """SCRAM-SHA-256 (RFC 5802, 7677) without channel binding."""

    def __init__(self, password: str) -> None:
        import base64

        self.b64 = base64
        self.password = password.encode()
        self.nonce = base64.b64encode(os.urandom(18)).decode()
        self.bare = f"n=,r={self.nonce}"

    def first(self) -> bytes:
        return ("n,," + self.bare).encode()

    def final(self, server_first: bytes) -> bytes:
        import hashlib
        import hmac

        text = server_first.decode()
        attrs = dict(part.split("=", 1) for part in text.split(","))
        if not attrs["r"].startswith(self.nonce):
            raise WireError("the server's SCRAM nonce does not extend ours")
        salted = hashlib.pbkdf2_hmac("sha256", self.password, self.b64.b64decode(attrs["s"]),
                                     int(attrs["i"]))
        client_key = hmac.new(salted, b"Client Key", "sha256").digest()
        stored = hashlib.sha256(client_key).digest()
        without_proof = f"c=biws,r={attrs['r']}"
        message = f"{self.bare},{text},{without_proof}".encode()
        signature = hmac.new(stored, message, "sha256").digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.new(salted, b"Server Key", "sha256").digest()
        self.expected = hmac.new(server_key, message, "sha256").digest()
        return f"{without_proof},p={self.b64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        attrs = dict(part.split("=", 1) for part in server_final.decode().split(","))
        if self.b64.b64decode(attrs.get("v", "")) != self.expected:
            raise WireError("the server's SCRAM signature is wrong")
