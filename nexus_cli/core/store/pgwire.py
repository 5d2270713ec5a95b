"""A small PostgreSQL client in the standard library, for the hook hot path of team mode.

psycopg costs a hook about 200 ms to import; this speaks the frontend/backend protocol 3.0
directly (startup, TLS, trust/password/MD5/SCRAM-SHA-256(-PLUS) authentication, the extended query
protocol with text parameters, simple queries, LISTEN notifications) on a Unix socket or TCP. It
serves the URLs it can serve exactly as libpq would: every `sslmode`, `sslrootcert` (a file or
`system`), `sslcert`/`sslkey`, `sslsni`, and their environment variables and ~/.postgresql files;
anything else (a service file, `sslcrl` or ~/.postgresql/root.crl, `sslpassword`, Kerberos,
`require_auth`, `channel_binding`, `sslnegotiation` ...) goes to psycopg (`pg.connect` decides).
`ssl` is imported only when a connection asks the server for TLS. Stdlib only.

TLS as libpq does it: an SSLRequest before the startup message; `prefer` falls back to a plain
connection when the server says no, when the handshake fails or when the server refuses the
login over TLS, `allow` tries plain first and TLS when the server refuses that; the server's
certificate is verified against the root certificate whenever one is configured (sslrootcert or
~/.postgresql/root.crt), in every mode, and `verify-ca`/`verify-full` without one are an error;
`verify-full` matches the host name as libpq does (subjectAltName, else the common name); SCRAM
binds the channel (tls-server-end-point) when the server offers SCRAM-SHA-256-PLUS, as libpq's
default channel_binding=prefer does.

The server is not trusted further than the protocol lets it be: every length is checked before
anything is allocated for it (a row past ROW_MAX, a result past RESULT_MAX: a coded error,
SQLSTATE 54000), a malformed message is an error (the connection is closed; SQLSTATE 08P01), the
whole startup has one deadline and so has every statement, kept on the socket whatever the
server trickles meanwhile (a notice every second re-arms nothing; a `Deadline` is a budget
several connections share: a hook's 2 s in all; a `Budget` is what a whole command may spend
waiting for the server, its statements together), bytes the server sends between its TLS answer
and the handshake are refused (CVE-2021-23222), SCRAM's server signature is checked before the
session is used,
and a password never crosses a non-loopback network in clear text unless TLS with a verified
server certificate protects it (stricter than libpq, which sends it over any TLS: over an
unverified one a man in the middle would read it). That refusal is a coded error, never a
silent difference."""

from __future__ import annotations

import os
import socket
import struct
import time
from _thread import _local as _thread_local  # (threading itself costs a hook a millisecond)

# the URL and query parameters served here (any other: libpq's job, e.g. require_auth,
# channel_binding, sslcrl, sslpassword, service, target_session_attrs ...)
KNOWN = frozenset({"host", "port", "user", "password", "dbname", "sslmode", "options",
                   "application_name", "fallback_application_name", "connect_timeout",
                   "sslrootcert", "sslcert", "sslkey", "sslsni"})
SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
# set in the environment, these ask libpq for what this client does not do
LIBPQ_ENV = ("PGSERVICE", "PGSERVICEFILE", "PGHOSTADDR", "PGSSLCRL", "PGSSLCRLDIR",
             "PGSSLCERTMODE", "PGSSLMINPROTOCOLVERSION", "PGSSLMAXPROTOCOLVERSION",
             "PGREQUIREAUTH", "PGCHANNELBINDING", "PGGSSENCMODE", "PGREQUIRESSL",
             "PGTARGETSESSIONATTRS", "PGREQUIREPEER", "PGSSLNEGOTIATION", "PGLOADBALANCEHOSTS")
SSLREQUEST = struct.pack("!ii", 8, 80877103)
PREPARED_MAX = 256  # statements kept prepared per connection
INT_OIDS = frozenset({20, 21, 23, 26, 28})
FLOAT_OIDS = frozenset({700, 701})
MESSAGE_MAX = 1 << 30  # PostgreSQL's own limit on a message (MaxAllocSize)
ROW_MAX = 32 << 20  # one row as it arrives (the team database keeps one below 24 MB as text)
RESULT_MAX = 128 << 20  # the rows of one result together
SHORT_MAX = 30_000  # as libpq: only these kinds of message may be longer
LONG_KINDS = frozenset(b"TDdVENA")
CHUNK = 1 << 20  # a read asks for at most this much: memory follows what really arrived
SCRAM_ITERATIONS_MAX = 1_000_000  # about a second of PBKDF2; a hostile server asks for 10^9


class WireError(Exception):
    """An error the server sent (its fields by their protocol letters), or a lost connection
    (`sqlstate` None), or what this client refused: a broken protocol (08P01), a statement that
    outlived its deadline (57014), a row or result past its cap (54000)."""

    def __init__(self, message: str, fields: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.fields = fields or {}
        self.sqlstate = self.fields.get("C")


BROKEN = {"C": "08P01"}  # protocol_violation
LATE = {"C": "57014"}  # query_canceled (what statement_timeout says)
TOO_LARGE = {"C": "54000", "nexus": "too large"}  # program_limit_exceeded


class Deadline:
    """A budget of seconds that every wait for the server ends by, shared by the connections of
    a process (a hook: 2 s in all); `renew` starts it again (a waiting hook, after each wait)."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def renew(self) -> None:
        self.at = time.monotonic() + self.seconds

    def left(self) -> float:
        return self.at - time.monotonic()


class Budget:
    """What one whole command (a CLI command, an MCP tool call) may spend waiting for the server,
    in all: every connection and statement of the command draws on it (a server that answers one
    byte at a time holds the command, not each of its statements, to this). Waits of the
    command's own (for a notification, a sleep) are not the server's: they spend nothing."""

    __slots__ = ("left_s",)

    def __init__(self, seconds: float) -> None:
        self.left_s = seconds

    def spend(self, seconds: float) -> None:
        self.left_s -= max(0.0, seconds)


_BUDGET = _thread_local()  # this thread's command's Budget (`command`)


def command(seconds: float | None) -> None:
    """Start this thread's command with a budget of `seconds` (None: none)."""
    _BUDGET.now = Budget(seconds) if seconds is not None else None


def budget() -> Budget | None:
    """The budget of the command running in this thread, if one was started."""
    return getattr(_BUDGET, "now", None)


class outside_budget:  # (lower case: read as a `with` statement)
    """Work that must not be cut short by the command's budget, only by each statement's own
    deadline: a migration (all or nothing: cut short, it would fail the same way each time) and a
    move of a whole store (long by nature, resumable)."""

    def __enter__(self) -> None:
        self.saved = budget()
        _BUDGET.now = None

    def __exit__(self, *exc: object) -> None:
        _BUDGET.now = self.saved


_PROCESS: list[Deadline] = []


def process_deadline(seconds: float) -> Deadline:
    """This process's budget (made at the first ask: a hook's, from its first look at the
    server), shared by every connection it opens."""
    if not _PROCESS:
        _PROCESS.append(Deadline(seconds))
    return _PROCESS[0]


def _unquote(text: str) -> str:
    if "%" not in text:
        return text
    from urllib.parse import unquote

    return unquote(text, errors="surrogateescape")  # bytes that are not UTF-8 kept as they are


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
            host, closed, port = netloc[1:].partition("]")
            if not closed or (port and not port.startswith(":")):
                return None  # not an address libpq takes: its error says why
            port = port[1:]
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
        if key not in KNOWN:
            return None
        out[key] = value
    env = os.environ
    for key, var in (("host", "PGHOST"), ("port", "PGPORT"), ("user", "PGUSER"),
                     ("password", "PGPASSWORD"), ("dbname", "PGDATABASE"),
                     ("sslmode", "PGSSLMODE"), ("options", "PGOPTIONS"),
                     ("sslrootcert", "PGSSLROOTCERT"), ("sslcert", "PGSSLCERT"),
                     ("sslkey", "PGSSLKEY"), ("sslsni", "PGSSLSNI")):
        if key not in out and env.get(var):
            out[key] = env[var]
    if any(env.get(v) for v in LIBPQ_ENV):
        return None
    out.setdefault("port", "5432")
    if not out["port"].isdigit() or not 0 < int(out["port"]) < 65536:
        return None  # libpq's error says why
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
    if sslmode not in SSLMODES:
        return None  # libpq says what is wrong with it
    if out.get("sslrootcert") == "system":  # libpq 16+: the system's roots, verify-full only
        if "sslmode" not in out:
            out["sslmode"] = "verify-full"
        elif sslmode != "verify-full":
            return None  # libpq refuses the weaker mode, in its own words
    if out.get("sslsni", "1") not in ("0", "1") or out.get("sslkey", "").startswith("engine:"):
        return None
    # a Unix socket never carries TLS (libpq ignores sslmode there too); over TCP, a CRL in
    # ~/.postgresql is one more check libpq makes (and sslcrl, refused above): its job
    if not out["host"].startswith("/") and sslmode != "disable" and os.path.exists(
            os.path.join(_dotdir(), "root.crl")):
        return None
    # over TCP, libpq built with GSSAPI first tries GSSAPI encryption (gssencmode=prefer) when a
    # Kerberos ticket is at hand: its job too
    if not out["host"].startswith("/") and (
            env.get("KRB5CCNAME") or os.path.exists(f"/tmp/krb5cc_{os.getuid()}")):
        return None
    return out


def _dotdir() -> str:
    """~/.postgresql, where libpq looks for the default certificates and keys."""
    return os.path.join(os.path.expanduser("~"), ".postgresql")


def root_cert(given: str | None) -> str:
    """The root certificate libpq verifies a server with: `sslrootcert`, else ~/.postgresql's."""
    return given or os.path.join(_dotdir(), "root.crt")


def _pgpass(p: dict[str, str]) -> str | None:
    path = os.environ.get("PGPASSFILE") or os.path.expanduser("~/.pgpass")
    try:
        with open(path, encoding="utf-8") as fh:
            if os.fstat(fh.fileno()).st_mode & 0o077:
                return None  # others can read it: libpq ignores it too
            lines = fh.read().splitlines()
    except (OSError, ValueError):
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


def _cstr(text: str, what: str, errors: str = "strict") -> bytes:
    """`text` as a protocol string (UTF-8, NUL-terminated): NUL or a lone surrogate cannot go
    (errors="surrogateescape": the bytes of a password read from the environment as they were)."""
    try:
        data = text.encode("utf-8", errors)
    except UnicodeEncodeError:
        raise WireError(f"{what} is not valid text (a lone surrogate)", {"C": "22021"}) from None
    if b"\0" in data:
        raise WireError(f"{what} contains a NUL character", {"C": "22021"})
    return data + b"\0"


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
    return 0, _cstr(text, "a parameter")[:-1]


class Notify:
    __slots__ = ("channel", "payload", "pid")

    def __init__(self, pid: int, channel: str, payload: str) -> None:
        self.pid, self.channel, self.payload = pid, channel, payload


def _exposed(sock: socket.socket) -> bool:
    """Whether `sock` reaches its server over a network (TCP to a non-loopback address)."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return False
    import ipaddress

    try:
        address = ipaddress.ip_address(sock.getpeername()[0].split("%", 1)[0])
    except (OSError, ValueError):
        return True
    mapped = getattr(address, "ipv4_mapped", None)
    return not (mapped or address).is_loopback


def _present(path: str) -> bool:
    """Whether the file is there, as libpq asks about a client certificate: missing is fine,
    any other failure to look at it an error."""
    import errno

    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return False
        raise WireError(f'could not open certificate file "{path}": {exc.strerror}') from None
    return True


def _check_key(path: str) -> None:
    """libpq's checks of a client certificate's private key file, before it is read."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        raise WireError(f'certificate present, but not private key file "{path}"') from None
    if not stat.S_ISREG(st.st_mode):
        raise WireError(f'private key file "{path}" is not a regular file')
    if st.st_mode & (0o037 if st.st_uid == 0 else 0o077):
        raise WireError(f'private key file "{path}" has group or world access; file must have '
                        "permissions u=rw (0600) or less if owned by the current user, or "
                        "permissions u=rw,g=r (0640) or less if owned by root")


def _ascii_lower(text: str) -> str:
    return text.translate({c: c + 32 for c in range(65, 91)})


def _name_matches(name: str, host: str) -> bool:
    """A certificate's DNS name against the host, as libpq's pq_verify_peer_name_matches_
    certificate_name: equal ignoring ASCII case, or a leading `*.` standing for one label."""
    if "\0" in name:
        raise WireError("SSL certificate's name contains embedded null")
    name_l, host_l = _ascii_lower(name), _ascii_lower(host)
    if name_l == host_l:
        return True
    if len(name) < 3 or not name.startswith("*.") or len(name) > len(host):
        return False
    if name_l[1:] != host_l[len(host) - len(name) + 1:]:
        return False
    return not host.find(".") < len(host) - len(name)


def _packed(address: str) -> bytes | None:
    try:
        return socket.inet_pton(socket.AF_INET6 if ":" in address else socket.AF_INET, address)
    except OSError:
        return None


def _match_host(host: str, cert: dict) -> None:
    """sslmode=verify-full: the server's certificate names `host`, as libpq checks it: every
    subjectAltName (DNS names, IP addresses); the subject's common name only when no
    subjectAltName of the host's kind (an address or a name) is there."""
    address = _packed(host)
    check_cn, names = True, []
    for kind, value in cert.get("subjectAltName", ()):
        if kind == ("IP Address" if address else "DNS"):
            check_cn = False
        if kind == "DNS":
            names.append(value)
            if _name_matches(value, host):
                return
        elif kind == "IP Address":
            names.append(value)
            if address is not None and _packed(value) == address:
                return
    if check_cn:
        for rdn in cert.get("subject", ()):
            common = [value for key, value in rdn if key == "commonName"]
            if common:
                names.append(common[0])
                if _name_matches(common[0], host):
                    return
                break
    if not names:
        raise WireError("could not get server's host name from server certificate")
    others = f" (and {len(names) - 1} other name{'s' if len(names) > 2 else ''})" \
        if len(names) > 1 else ""
    raise WireError(f'server certificate for "{names[0]}"{others} does not match host name '
                    f'"{host}"')


# the hash of a certificate's signature algorithm (RFC 5929 tls-server-end-point: MD5 and SHA-1
# become SHA-256), by the algorithm's DER-encoded object identifier; as libpq, no other
SIGNATURE_HASHES = {
    "2a864886f70d010104": "sha256", "2a864886f70d010105": "sha256",  # RSA with MD5, SHA-1
    "2a864886f70d01010b": "sha256", "2a864886f70d01010c": "sha384",
    "2a864886f70d01010d": "sha512", "2a864886f70d01010e": "sha224",
    "2a864886f70d01010f": "sha512_224", "2a864886f70d010110": "sha512_256",
    "2a8648ce3d0401": "sha256", "2a8648ce3d040301": "sha224",  # ECDSA with SHA-1, SHA-2
    "2a8648ce3d040302": "sha256", "2a8648ce3d040303": "sha384", "2a8648ce3d040304": "sha512",
    "2a8648ce380403": "sha256", "608648016503040301": "sha224",  # DSA with SHA-1, SHA-2
    "608648016503040302": "sha256",
}


def _der(data: bytes, pos: int) -> tuple[int, int, int]:
    """The DER element at `pos`: (tag, where its content starts, where it ends)."""
    tag, first = data[pos], data[pos + 1]
    pos += 2
    if first & 0x80:
        count = first & 0x7F
        if not 0 < count <= 4:
            raise ValueError("a DER length out of range")
        size = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    else:
        size = first
    if pos + size > len(data):
        raise ValueError("a DER element longer than the certificate")
    return tag, pos, pos + size


def _end_point(cert: bytes) -> bytes:
    """RFC 5929 tls-server-end-point: the server certificate's hash, by the hash of its
    signature algorithm (Certificate ::= SEQUENCE {tbsCertificate, signatureAlgorithm ...})."""
    import hashlib

    try:
        _, inner, _ = _der(cert, 0)
        _, _, after_tbs = _der(cert, inner)
        _, algorithm, _ = _der(cert, after_tbs)
        tag, start, end = _der(cert, algorithm)
        oid = cert[start:end].hex() if tag == 6 else ""
    except (ValueError, IndexError):
        oid = ""
    name = SIGNATURE_HASHES.get(oid)
    if name is None:
        raise WireError("could not find digest for the server certificate's signature algorithm "
                        "(channel binding)")
    return hashlib.new(name, cert).digest()


class Wire:
    """One connection. `query` runs a statement (with $n parameters) or, without parameters, a
    simple query (several statements allowed). `timeout` bounds the whole connection and
    authentication; `read_timeout` (None: none) bounds each statement afterwards, from its
    sending to its last reply; `limit` bounds both as well, and so does what is left of the
    command's `Budget` (`command`). Any failure of the connection closes its socket."""

    def __init__(self, p: dict[str, str], timeout: float, read_timeout: float | None = None,
                 limit: Deadline | None = None) -> None:
        self.limit = limit  # a budget every wait ends by, too (a hook's)
        if limit is not None:
            timeout = min(timeout, limit.left())
        spent = budget()  # and the command's
        if spent is not None:
            timeout = min(timeout, spent.left_s)
        started = time.monotonic()
        try:
            self._open(p, timeout, read_timeout)
        finally:
            if spent is not None:
                spent.spend(time.monotonic() - started)

    def _open(self, p: dict[str, str], timeout: float, read_timeout: float | None) -> None:
        self.status = "I"  # the transaction status of the last ReadyForQuery
        self.parameters: dict[str, str] = {}
        self.notes: list[Notify] = []
        self.broken = False
        self.closed = False
        self.read_timeout = read_timeout
        self._buf = bytearray()
        self._prepared: dict[tuple, bytes] = {}
        self._serial = 0
        self._deferred: list[tuple[bytes, tuple, bytes]] = []  # (messages, key, name): `defer`
        self._begin_waits = False  # the first of them is the transaction's BEGIN
        self._deadline: float | None = time.monotonic() + timeout
        self._late: dict[str, str] = {}  # what an expired deadline says: at startup, nothing
        self._armed: float | None = None  # the socket's timeout as last set (_arm)
        self.tls = False  # the connection is encrypted
        self.verified = False  # ... and the server's certificate was verified
        self.name_checked = False  # ... and its host name matched (verify-full)
        self._cert: bytes | None = None  # the server's certificate (DER): channel binding
        mode = "disable" if p["host"].startswith("/") else p.get("sslmode", "prefer")
        # libpq's attempts, in order: the second one only after a failure libpq retries
        # (prefer: the handshake failed or the server refused the login over TLS; allow: the
        # server refused the plain login)
        tries = {"allow": (False, True), "prefer": (True, False)}.get(mode, (mode != "disable",))
        for n, tls in enumerate(tries):
            self._retry = False
            try:
                self._connect(p)
                try:
                    if tls:
                        self._secure(p, mode)
                    self._startup(p)
                except WireError:
                    self._lose()
                    raise
                except OSError as exc:
                    self._lose()
                    raise WireError(f"connection to server failed: {exc.strerror or exc}"
                                    ) from None
                except (ValueError, LookupError, struct.error) as exc:  # a malformed message
                    self._lose()
                    raise WireError(f"the server broke the protocol during startup ({exc})",
                                    BROKEN) from None
            except WireError:
                if self._retry and n + 1 < len(tries):
                    continue
                raise
            break
        self._deadline = None
        self.sock.settimeout(read_timeout)  # (a statement's own deadline is kept by _arm)
        self._armed = read_timeout

    def _left(self) -> float:
        left = (self._deadline or 0.0) - time.monotonic()
        if left <= 0:
            raise WireError("the server did not answer in time")
        return left

    def _connect(self, p: dict[str, str]) -> None:
        """A fresh socket to the server (a retry starts over: nothing of the last one kept)."""
        self.status, self.parameters, self._buf = "I", {}, bytearray()
        self.broken = self.closed = self.tls = self.verified = self.name_checked = False
        self._cert = None
        self._armed = None
        try:
            if p["host"].startswith("/"):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    sock.settimeout(self._left())
                    sock.connect(os.path.join(p["host"], f".s.PGSQL.{p['port']}"))
                except BaseException:
                    sock.close()
                    raise
            else:
                sock = socket.create_connection((p["host"], int(p["port"])), self._left())
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            raise WireError(f"connection to server at {p['host']} failed: "
                            f"{exc.strerror or exc}") from None
        self.sock = sock

    # -- TLS, as libpq sets it up ----------------------------------------------------------------

    def _secure(self, p: dict[str, str], mode: str) -> None:
        """SSLRequest, then the TLS handshake and the checks of `mode`. The server saying no
        leaves the connection plain where `mode` allows that (prefer, allow), else fails."""
        self._send(SSLREQUEST)
        self._fill(1)
        answer = bytes(self._buf[:1])
        if answer == b"N":
            del self._buf[:1]
            if mode not in ("prefer", "allow"):
                raise WireError("server does not support SSL, but SSL was required")
            return
        if answer != b"S":  # 'E' included: its text comes before anything is secured
            raise WireError(f"received invalid response to SSL negotiation: {answer!r}", BROKEN)
        if len(self._buf) > 1:  # CVE-2021-23222: a man in the middle's plaintext
            raise WireError("received unencrypted data after SSL response", BROKEN)
        del self._buf[:1]
        import ssl

        self._retry = mode == "prefer"  # a failure from here on: prefer tries plain
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False  # verify-full: matched below, exactly as libpq matches
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2  # libpq's ssl_min_protocol_version
        ctx.set_ciphers("DEFAULT")  # OpenSSL's (and the system's) choice, as libpq leaves it
        ctx.set_alpn_protocols(["postgresql"])  # as libpq 17+
        root = root_cert(p.get("sslrootcert"))
        if root == "system":
            ctx.set_default_verify_paths()
        elif os.path.exists(root):  # libpq: whenever the file is there, in every mode
            try:
                ctx.load_verify_locations(cafile=root)
            except (OSError, ValueError, ssl.SSLError) as exc:
                raise WireError(f'could not read root certificate file "{root}": {exc}'
                                ) from None
        elif mode in ("verify-ca", "verify-full"):
            raise WireError(f'root certificate file "{root}" does not exist\nEither provide the '
                            "file, use the system's trusted roots with sslrootcert=system, or "
                            "change sslmode to disable server certificate verification.")
        else:
            ctx.verify_mode = ssl.CERT_NONE
        cert = p.get("sslcert") or os.path.join(_dotdir(), "postgresql.crt")
        if _present(cert):  # libpq: a client certificate only when its file is there
            key = p.get("sslkey") or os.path.join(_dotdir(), "postgresql.key")
            _check_key(key)
            try:
                ctx.load_cert_chain(cert, key, password=lambda: b"")  # no prompt, as libpq
            except (OSError, ValueError, ssl.SSLError) as exc:
                raise WireError(f'could not load the client certificate "{cert}" or its '
                                f'private key "{key}": {exc}') from None
        host = p["host"]
        # SNI as libpq: the host name, never an address (digits and dots, or a colon)
        sni = p.get("sslsni", "1") == "1" and not set(host) <= set("0123456789.") \
            and ":" not in host
        try:
            self.sock = ctx.wrap_socket(self.sock, server_hostname=host if sni else None,
                                        do_handshake_on_connect=False)
            self.sock.settimeout(self._left())
            self._armed = None
            self.sock.do_handshake()
        except ssl.SSLCertVerificationError as exc:
            raise WireError(f"SSL error: certificate verify failed: {exc.verify_message}"
                            ) from None
        except ssl.SSLError as exc:
            raise WireError(f"SSL error: {exc.reason or exc}") from None
        except TimeoutError:
            raise WireError("the server did not answer in time") from None
        self.tls = True
        self.verified = ctx.verify_mode == ssl.CERT_REQUIRED
        self._cert = self.sock.getpeercert(binary_form=True)
        if mode == "verify-full":
            _match_host(host, self.sock.getpeercert() or {})
            self.name_checked = True
        self._retry = False

    # -- framing -----------------------------------------------------------------------------------

    def _lose(self) -> None:
        """The connection cannot be used any more: its socket is closed."""
        self.broken = True
        if not self.closed:
            self.closed = True
            self.sock.close()

    def _send(self, data: bytes) -> None:
        try:
            self._arm()  # a server that stops reading does not hold us either
            self.sock.sendall(data)
        except TimeoutError:
            self._lose()
            raise WireError("the server did not answer in time", self._late) from None
        except OSError as exc:
            self._lose()
            raise WireError(f"server closed the connection ({exc.strerror or exc})") from None

    @staticmethod
    def _msg(kind: bytes, body: bytes) -> bytes:
        if len(body) > MESSAGE_MAX:
            raise WireError("a message is too long for PostgreSQL (1 GB at most)", {"C": "54000"})
        return kind + struct.pack("!i", len(body) + 4) + body

    def _arm(self) -> None:
        """The socket's timeout no longer than what is left of the deadline (give or take 10
        ms: a timeout set is a system call, and a statement's replies take several reads). One
        shorter than that is fine: its expiry only looks again."""
        if self._deadline is None:
            return
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        if self._armed is None or self._armed > left + 0.01:
            self.sock.settimeout(left)
            self._armed = left

    def _fill(self, n: int) -> None:
        while len(self._buf) < n:
            try:
                self._arm()
                chunk = self.sock.recv(min(CHUNK, max(4096, n - len(self._buf))))
            except TimeoutError:
                if self._deadline is not None and time.monotonic() < self._deadline:
                    self._armed = None  # woke early (a shorter timeout was set): the rest now
                    continue
                self._lose()
                raise WireError("the server did not answer in time", self._late) from None
            except OSError as exc:
                self._lose()
                raise WireError(f"server closed the connection ({exc.strerror or exc})") from None
            if not chunk:
                self._lose()
                raise WireError("server closed the connection unexpectedly")
            self._buf += chunk

    def _framed(self) -> bool:
        """Whether a whole message is buffered (its length checked before it is waited for)."""
        if len(self._buf) < 5:
            return False
        size = struct.unpack("!i", self._buf[1:5])[0]
        if size < 4 or size > MESSAGE_MAX or (size > SHORT_MAX and self._buf[0] not in LONG_KINDS):
            self._lose()
            raise WireError(f"the server broke the protocol (a message {self._buf[:1]!r} of "
                            f"length {size})", BROKEN)
        if size > ROW_MAX and self._buf[:1] == b"D":  # refused before a byte of it is kept
            self._lose()
            raise WireError(f"a row of {size:,} bytes is more than one row may hold "
                            f"({ROW_MAX:,})", TOO_LARGE)
        return len(self._buf) >= 1 + size

    def _read(self) -> tuple[bytes, bytes]:
        self._fill(5)
        if not self._framed():
            self._fill(1 + struct.unpack("!i", self._buf[1:5])[0])
        size = struct.unpack("!i", self._buf[1:5])[0]
        kind = bytes(self._buf[:1])
        body = bytes(self._buf[5:1 + size])
        del self._buf[:1 + size]
        if kind == b"A":
            pid = struct.unpack("!i", body[:4])[0]
            channel, payload, _ = body[4:].split(b"\0", 2)
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
        # the formats the results are read in, whatever the role or database sets (a client's
        # startup settings win over theirs): bytea in hex, floats exact on every version
        pairs = {"user": p["user"], "database": p["dbname"], "client_encoding": "UTF8",
                 "bytea_output": "hex", "extra_float_digits": "3",
                 "application_name": p.get("application_name", "nexus")}
        if p.get("options"):
            pairs["options"] = p["options"]
        body = struct.pack("!i", 196608) + b"".join(
            _cstr(k, "a connection parameter") + _cstr(v, f"the connection parameter {k}")
            for k, v in pairs.items()) + b"\0"
        self._send(struct.pack("!i", len(body) + 4) + body)
        scram = None
        mode = p.get("sslmode", "prefer")
        while True:
            kind, body = self._read()
            if kind == b"E":  # refused: libpq tries its other way (prefer: plain, allow: TLS)
                self._retry = mode in ("prefer", "allow") and (mode == "prefer") == self.tls
                raise self._error(body)
            if kind == b"R":
                code = struct.unpack("!i", body[:4])[0]
                if code == 0:
                    if scram is not None and not scram.verified:
                        raise WireError("the server ended SCRAM authentication without proving "
                                        "it knows the password", {"C": "28000"})
                    continue
                if code == 11 and scram is not None:
                    self._send(self._msg(b"p", scram.final(body[4:])))
                    continue
                if code == 12 and scram is not None:
                    scram.verify(body[4:])
                    continue
                if code not in (3, 5, 10) or scram is not None:
                    raise WireError(f"authentication method {code} is not supported here")
                if code == 3 and _exposed(self.sock) and not self.verified:
                    raise WireError("the server asks for the password in clear text over the "
                                    "network without TLS whose server certificate was verified: "
                                    "refused (use sslmode=verify-full with sslrootcert, or "
                                    "scram-sha-256 in the server's pg_hba.conf)", {"C": "28000"})
                password = p.get("password") or _pgpass(p)
                if password is None:
                    raise WireError("the server asks for a password and none was given "
                                    "(~/.pgpass, PGPASSWORD or the URL)", {"C": "28P01"})
                if code == 3:
                    self._send(self._msg(b"p", _cstr(password, "the password", "surrogateescape")))
                elif code == 5:
                    import hashlib

                    inner = hashlib.md5(_cstr(password, "the password", "surrogateescape")[:-1]
                                        + p["user"].encode()).hexdigest()
                    outer = hashlib.md5(inner.encode() + body[4:8]).hexdigest()
                    self._send(self._msg(b"p", b"md5" + outer.encode() + b"\0"))
                else:
                    offered = body[4:].split(b"\0")
                    # as libpq's channel_binding=prefer: bound to the TLS channel when the
                    # server offers it ("p"), else saying whether this client could ("y", "n")
                    if b"SCRAM-SHA-256-PLUS" in offered and not self.tls:
                        raise WireError("server offered SCRAM-SHA-256-PLUS authentication over "
                                        "a non-SSL connection")  # TLS stripped on the way?
                    if b"SCRAM-SHA-256-PLUS" in offered and self._cert:
                        mechanism, scram = b"SCRAM-SHA-256-PLUS", _Scram(password, self._cert)
                    elif b"SCRAM-SHA-256" in offered:
                        mechanism, scram = b"SCRAM-SHA-256", _Scram(password, None, self.tls)
                    else:
                        raise WireError("the server offers no SASL mechanism this client knows")
                    first = scram.first()
                    self._send(self._msg(b"p", mechanism + b"\0" + struct.pack("!i", len(first))
                                         + first))
            elif kind == b"S":
                key, value, _ = body.split(b"\0", 2)
                self.parameters[key.decode()] = value.decode()
            elif kind == b"Z":
                if scram is not None and not scram.verified:
                    raise WireError("the server ended SCRAM authentication without proving "
                                    "it knows the password", {"C": "28000"})
                self.status = chr(body[0])
                return

    # -- queries ----------------------------------------------------------------------------------

    def query(self, sql: str, values: list | tuple | None = None) -> Result:
        if self.closed or self.broken:
            raise WireError("the connection is closed")
        started = time.monotonic()
        spent = budget()
        ends = [t for t in (self.limit.at if self.limit is not None else None,
                            started + self.read_timeout if self.read_timeout is not None else None,
                            started + spent.left_s if spent is not None else None)
                if t is not None]
        self._deadline = min(ends) if ends else None
        self._late = LATE
        try:
            return self._query(sql, values)
        except (ValueError, LookupError, struct.error) as exc:  # a malformed message
            self._lose()
            raise WireError(f"the server broke the protocol ({exc})", BROKEN) from None
        finally:
            self._deadline = None
            if spent is not None:
                spent.spend(time.monotonic() - started)

    # Statements that travel with the next one (one round trip for several): a transaction's
    # BEGIN, and writes whose result nobody reads (a touch, a new message, a notification). Their
    # replies are read in order when the next statement's are; the first error among them is the
    # one raised (later statements ran in an aborted transaction, if at all), so a failed write
    # fails its transaction exactly as if it had been sent alone.

    def defer_begin(self, sql: str) -> None:
        """BEGIN (a simple query), sent with the transaction's first statement."""
        self._deferred = [(self._msg(b"Q", _cstr(sql, "the statement")), (), b"")]
        self._begin_waits = True

    def defer(self, sql: str, values: list | tuple | None) -> None:
        """A statement inside a transaction, sent with the next one. Raises where `query` would
        fail to build the message (bad parameters), never later."""
        if self.closed or self.broken:
            raise WireError("the connection is closed")
        self._deferred.append(self._message(sql, values))

    @property
    def in_transaction(self) -> bool:
        """Inside a transaction as callers see it (its BEGIN may still be waiting)."""
        return self._begin_waits or self.status in ("T", "E")

    def settle(self, commit: bool) -> bool:
        """Before COMMIT (`commit`) or a rollback: True when nothing need be said (the server
        never saw the transaction begin; what waited is dropped). A rollback drops what waits;
        a COMMIT sends it along."""
        if self._begin_waits and (not commit or len(self._deferred) == 1):
            self._deferred, self._begin_waits = [], False
            return True
        if not commit:
            self._deferred = []
        return False

    def _message(self, sql: str, values: list | tuple | None) -> tuple[bytes, tuple, bytes]:
        """The protocol messages of one statement, its prepared-statement key and name."""
        text = _cstr(sql, "the statement")
        if values is None:
            return self._msg(b"Q", text), (), b""
        typed = [_param(v) for v in values]
        if len(typed) > 65535:
            raise WireError("a statement takes 65535 parameters at most", {"C": "54000"})
        key = (sql, tuple(oid for oid, _ in typed))
        known = self._prepared.get(key)
        if known is None and len(self._prepared) >= PREPARED_MAX and self.status == "I" \
                and not self._deferred:
            self._forget()  # statements built on the fly: keep the server's share bounded
        parse = b""
        if known is not None:
            name = known
        else:  # prepared once per connection: the server parses and plans once
            self._serial += 1
            name = f"n{self._serial}".encode()
            parse = self._msg(b"P", name + b"\0" + text + struct.pack("!H", len(typed))
                              + b"".join(struct.pack("!I", oid) for oid, _ in typed))
        bind = [b"\0" + name + b"\0", struct.pack("!hH", 0, len(typed))]
        for _, data in typed:
            bind.append(struct.pack("!i", -1) if data is None else
                        struct.pack("!i", len(data)) + data)
        bind.append(struct.pack("!h", 0))
        return (parse + self._msg(b"B", b"".join(bind)) + self._msg(b"D", b"P\0")
                + self._msg(b"E", b"\0\0\0\0\0") + self._msg(b"S", b"")), key, name

    def _query(self, sql: str, values: list | tuple | None) -> Result:
        message, key, name = self._message(sql, values)
        waiting, self._deferred, self._begin_waits = self._deferred, [], False
        self._send(b"".join(m for m, _, _ in waiting) + message)
        first: WireError | None = None
        for _, k, n in waiting:
            try:
                self._results(k, n)
            except WireError as exc:
                if self.broken:
                    raise
                first = first or exc
        try:
            result = self._results(key, name)
        except WireError:
            if first is None or self.broken:
                raise
        if first is not None:
            raise first
        return result

    def _results(self, key: tuple, name: bytes) -> Result:
        result, error, parsed, held = Result(), None, False, 0
        while True:
            kind, body = self._read()
            if kind == b"D":
                held += len(body)
                if held > RESULT_MAX:
                    self._lose()
                    raise WireError(f"a result of more than {RESULT_MAX:,} bytes is more than "
                                    "one result may hold", TOO_LARGE)
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
                setting, value, _ = body.split(b"\0", 2)
                self.parameters[setting.decode()] = value.decode()
            elif kind in (b"G", b"H", b"W"):  # COPY: not spoken here
                self._lose()
                raise WireError("COPY is not supported by this client", BROKEN)

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
        if self.closed or self.broken:
            raise WireError("the connection is closed")
        self._drain()  # what came in behind the last reply
        if self.notes:
            return
        poll = select.poll()  # not select(): a descriptor past 1023 is fine in a busy process
        poll.register(self.sock, select.POLLIN)
        # over TLS, what was decrypted already waits inside the SSL object, not in the socket
        pending = self.tls and self.sock.pending()  # type: ignore[attr-defined]
        if not pending and not poll.poll(max(0.0, timeout) * 1000):
            return
        self.sock.setblocking(False)
        try:
            chunk = self.sock.recv(CHUNK)
        except BlockingIOError:
            chunk = b"-"
        except OSError as exc:  # over TLS, part of a record came: ssl.SSLWantReadError
            chunk = b"-" if type(exc).__name__ in ("SSLWantReadError", "SSLWantWriteError") \
                else b""
        finally:
            if not self.closed:
                self.sock.settimeout(self.read_timeout)
                self._armed = self.read_timeout
        if not chunk:
            self._lose()
            raise WireError("server closed the connection unexpectedly")
        if chunk != b"-":
            self._buf += chunk
            self._drain()

    def _drain(self) -> None:
        """Read the whole messages already buffered (notifications, notices)."""
        try:
            while self._framed():
                self._read()
        except (ValueError, LookupError, struct.error) as exc:
            self._lose()
            raise WireError(f"the server broke the protocol ({exc})") from None

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.sock.settimeout(0)  # a goodbye never waits for a server that stopped reading
                self.sock.send(self._msg(b"X", b""))
            except OSError:
                pass
            self.sock.close()


def _saslprep(password: str) -> bytes:
    """The password as the server prepared it for SCRAM (RFC 4013 SASLprep, as PostgreSQL's
    pg_saslprep does it: ASCII as it is, and the raw password when SASLprep prohibits it)."""
    raw = password.encode("utf-8", "surrogateescape")
    if password.isascii():
        return raw
    import stringprep
    import unicodedata

    chars = ["\x20" if stringprep.in_table_c12(c) else c for c in password
             if not stringprep.in_table_b1(c)]
    if not chars:
        return raw
    prohibited = (stringprep.in_table_c12, stringprep.in_table_c21_c22, stringprep.in_table_c3,
                  stringprep.in_table_c4, stringprep.in_table_c5, stringprep.in_table_c6,
                  stringprep.in_table_c7, stringprep.in_table_c8, stringprep.in_table_c9,
                  stringprep.in_table_a1)
    if any(test(c) for c in chars for test in prohibited):
        return raw
    if any(stringprep.in_table_d1(c) for c in chars) and (
            any(stringprep.in_table_d2(c) for c in chars)
            or not (stringprep.in_table_d1(chars[0]) and stringprep.in_table_d1(chars[-1]))):
        return raw
    return unicodedata.normalize("NFKC", "".join(chars)).encode("utf-8")


class _Scram:
    """SCRAM-SHA-256 (RFC 5802, 7677), and -PLUS bound to the TLS channel (RFC 5929
    tls-server-end-point: `cert` is the server's certificate) as libpq does it. The server must
    prove it knows the password (`verify`) before the session is used."""

    def __init__(self, password: str, cert: bytes | None = None, tls: bool = False) -> None:
        import base64

        self.b64 = base64
        self.password = _saslprep(password)
        self.nonce = base64.b64encode(os.urandom(18)).decode()
        self.bare = f"n=,r={self.nonce}"
        self.expected: bytes | None = None
        self.verified = False
        # gs2 header: bound ("p=..."), could bind but the server offers no -PLUS ("y"), or no TLS
        self.header = b"p=tls-server-end-point,," if cert else b"y,," if tls else b"n,,"
        self.binding = self.header + (_end_point(cert) if cert else b"")

    def first(self) -> bytes:
        return self.header + self.bare.encode()

    @staticmethod
    def _attrs(message: bytes) -> dict[str, str]:
        attrs: dict[str, str] = {}
        for part in message.decode("utf-8").split(","):
            key, eq, value = part.partition("=")
            if len(key) != 1 or not eq:
                raise WireError("the server's SCRAM message is malformed")
            attrs.setdefault(key, value)
        return attrs

    def final(self, server_first: bytes) -> bytes:
        import binascii
        import hashlib
        import hmac

        if self.expected is not None:
            raise WireError("the server repeated a SCRAM step")
        attrs = self._attrs(server_first)
        nonce, salt, iterations = attrs.get("r", ""), attrs.get("s", ""), attrs.get("i", "")
        if "m" in attrs:
            raise WireError("the server asks for a SCRAM extension this client does not know")
        if not (nonce.startswith(self.nonce) and len(nonce) > len(self.nonce)):
            raise WireError("the server's SCRAM nonce does not extend ours")
        if not nonce.isprintable() or not nonce.isascii():
            raise WireError("the server's SCRAM nonce is malformed")
        if not iterations.isdigit() or not 1 <= int(iterations) <= SCRAM_ITERATIONS_MAX:
            raise WireError(f"the server asks for {iterations[:20]!r} SCRAM iterations "
                            f"(1 to {SCRAM_ITERATIONS_MAX} here)")
        try:
            salted_with = self.b64.b64decode(salt, validate=True)
        except (binascii.Error, ValueError):
            salted_with = b""
        if not salted_with:
            raise WireError("the server's SCRAM salt is not base64")
        salted = hashlib.pbkdf2_hmac("sha256", self.password, salted_with, int(iterations))
        client_key = hmac.new(salted, b"Client Key", "sha256").digest()
        stored = hashlib.sha256(client_key).digest()
        without_proof = f"c={self.b64.b64encode(self.binding).decode()},r={nonce}"
        message = f"{self.bare},{server_first.decode()},{without_proof}".encode()
        signature = hmac.new(stored, message, "sha256").digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.new(salted, b"Server Key", "sha256").digest()
        self.expected = hmac.new(server_key, message, "sha256").digest()
        return f"{without_proof},p={self.b64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        import binascii
        import hmac

        if self.expected is None or self.verified:
            raise WireError("the server sent SCRAM steps out of order")
        attrs = self._attrs(server_final)
        if "e" in attrs:
            raise WireError(f"the server refused SCRAM authentication ({attrs['e'][:100]})",
                            {"C": "28P01"})
        try:
            signature = self.b64.b64decode(attrs.get("v", ""), validate=True)
        except (binascii.Error, ValueError):
            signature = b""
        if not hmac.compare_digest(signature, self.expected):
            raise WireError("the server's SCRAM signature is wrong", {"C": "28000"})
        self.verified = True
