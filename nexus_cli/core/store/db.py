"""The locked per-user SQLite store. Stdlib only: the hook hot path opens it too.

Rules kept here, once:
- the directory is 0700 and the file 0600, owned by the caller; anything else is refused;
- a file that is not a readable nexus database (not SQLite, truncated, foreign, newer) is refused
  with an error naming it, and never written to: a new store is built in a temporary file and
  linked into place only when complete;
- every write runs in `BEGIN IMMEDIATE` (a deferred read-then-write cannot wait for the lock);
- a read-only command never creates or migrates anything.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import stat
import time
from collections.abc import Callable

from .. import store as rows
from ..errors import NexusError
from . import APPLICATION_ID, SCHEMA, paths, queue, team, wake

BUSY_TIMEOUT_MS = 10_000
# what the features' SQL needs of SQLite (the subset PostgreSQL reads too): IS NOT DISTINCT FROM
# (3.39), RETURNING (3.35), ON CONFLICT ... DO UPDATE/NOTHING (3.24)
SQLITE_MIN = (3, 39, 0)
SQLITE_MAGIC = b"SQLite format 3\x00"
# One descriptor per store file, opened for reading headers and never closed: closing any
# descriptor of a file drops every POSIX lock this process holds on it, SQLite's included, and
# another process would then take itself for the store's last user, checkpoint it and delete the
# WAL under our feet (later commits here would be lost). Keeping it open also keeps its inode.
_HEADER_FDS: dict[tuple[int, int], int] = {}


def present(row: sqlite3.Row | None, what: str) -> sqlite3.Row:
    """A row the caller has just written or resolved in its open transaction: its absence is a
    bug in nexus, reported as one (never a None that fails later)."""
    if row is None:
        if rows.last_skipped is not None:  # not vanished: read past, a row nexus would not
            raise rows.row_error(rows.last_skipped)  # have written
        raise NexusError("internal_error", what, f"{what} vanished inside its own transaction",
                         "report this as a bug in nexus")
    return row


def _header_fd(path: str, ident: tuple[int, int]) -> int:
    fd = _HEADER_FDS.get(ident)
    if fd is None:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != ident:  # replaced between the look and the open
            os.close(fd)  # never had a lock: a file this process had not opened before
            raise FileNotFoundError(path)
        _HEADER_FDS[ident] = fd
    return fd


def _no_link(path: str, mode: int) -> None:
    if stat.S_ISLNK(mode):
        raise _fail("store_insecure", path, "it is a symbolic link",
                    "replace the link with the file itself; nexus never follows a link out of "
                    "its private directory")


def _fail(code: str, path: str, reason: str, action: str) -> NexusError:
    return NexusError(code, path, reason, action)


def aside(path: str) -> str:
    """The command that moves a damaged store out of the way into a folder beside it, with its
    WAL and shared-memory files, whichever exist then (a WAL left beside a new store would be
    replayed into it); nexus then starts an empty store, the old files kept for a backup or a
    recovery."""
    from shlex import quote  # (an error's text only: hooks do not load shlex)

    folder = "damaged-" + time.strftime("%Y%m%d-%H%M%S")
    name = os.path.basename(path)
    return (f"cd {quote(os.path.dirname(path) or '.')} && mkdir {folder} && "
            f"mv {quote(name)}* {folder}/")


def damaged(path: str, reason: str) -> NexusError:
    """A store whose pages SQLite cannot read: the error, with the fix that works."""
    return _fail("store_unreadable", path, f"{reason}; it was left untouched",
                 "restore it from a backup, or stop every agent and move it aside "
                 f"(`{aside(path)}`) and nexus starts an empty store")


def _busy(path: str) -> NexusError:
    return _fail("store_busy", path, "another process held the store lock too long",
                 "retry; `nexus doctor` shows stuck processes")


def _translate(exc: BaseException, path: str) -> NexusError:
    """Map an OS or SQLite failure to the coded error a user can act on."""
    import errno  # (failures only)

    text = str(exc).lower()
    err = getattr(exc, "errno", None)
    if "full" in text or err == errno.ENOSPC:
        return _fail("store_full", path, "the disk is full; nothing was written",
                     "free some space and retry")
    if "readonly" in text or "read-only" in text or err in (errno.EROFS, errno.EACCES, errno.EPERM):
        return _fail("store_readonly", path, "the store cannot be written here",
                     "make the file system writable or point NEXUS_HOME elsewhere")
    if "locked" in text or "busy" in text:
        return _busy(path)
    if "disk i/o error" in text:
        folder = os.path.dirname(path) or "."
        try:
            st = os.statvfs(folder)
            nearly_full = st.f_bavail * st.f_frsize < 1 << 20
        except OSError:
            nearly_full = False
        if nearly_full:  # SQLite reports some out-of-space writes (WAL, shm) as I/O errors
            return _fail("store_full", path, "the disk is full; nothing was written",
                         "free some space and retry")
        return _fail("store_io", path, "a disk I/O error; the transaction was rolled back",
                     "check the disk (dmesg), then retry; `nexus doctor` checks the store")
    if "unable to open" in text:
        return _fail("store_readonly", path, "the store could not be opened for writing",
                     "check the directory's permissions and the file system")
    if isinstance(exc, OSError):  # the file system, before SQLite had a say
        return _fail("store_unreadable", path, exc.strerror or str(exc),
                     "point NEXUS_HOME at a directory of yours that can be created or exists"
                     if err in (errno.ENOENT, errno.ENOTDIR) else
                     "check the disk and the store's directory, then retry")
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return damaged(path, f"SQLite says: {exc}")
    return _fail("store_unreadable", path, f"SQLite says: {exc}",
                 "the file was left untouched; run `nexus doctor`")


class Store:
    """One user's store: a directory holding `nexus.db` (and the wake channels). With a team URL
    set (`NEXUS_DATABASE_URL`, `nexus team join`), `Store(...)` is the team database instead
    (`pg.PgStore`, same interface); `LocalStore(...)` is always this file."""

    backend = "sqlite"

    def __new__(cls, root: str | None = None, linger: bool = False, reuse: bool = False):
        if cls is Store:
            url = team.url()
            if url:
                from .pg import PgStore

                return PgStore(url, root, linger, reuse)
        return super().__new__(cls)

    def __init__(self, root: str | None = None, linger: bool = False, reuse: bool = False) -> None:
        self.root = root or paths.home()
        self.path = paths.db_path(self.root)
        # linger: keep connections open until the process exits (short-lived hook processes end
        # with os._exit). Closing the last connection checkpoints the WAL, about 1 ms of a hook's
        # budget; an exit without close is as safe as a crash, which WAL mode is built for.
        self.linger = linger
        self._kept: list[sqlite3.Connection] = []
        # reuse: a long-lived process (the MCP server) keeps one connection per thread and kind,
        # so a call does not parse the schema again; it is dropped when the file is replaced
        self._ident: tuple[int, int] | None = None
        self._local: object | None = None  # (`keep`: a threading.local)
        # threading.local itself (the threading module costs a hook a millisecond to import)
        from _thread import _local as thread_local

        self._active = thread_local()  # the write transaction open in this thread, if any
        self._active.conn = None
        self._queue = queue.Queue(self.root)  # writers take turns (see queue.py)
        if reuse:
            self.keep()

    def command(self) -> None:
        """A command starts (a team database bounds its waits for the server: `pg`)."""

    def keep(self) -> None:
        """Keep one connection per thread and kind from now on (`reuse`): a waiter waits on the
        connection its writes then use."""
        if self._local is None:
            from _thread import _local as thread_local

            self._local = thread_local()

    # -- checks ---------------------------------------------------------------------------------

    def _check_private(self, st: os.stat_result, what: str, path: str, mode: int) -> None:
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise _fail("store_insecure", path, f"the {what} belongs to uid {st.st_uid}, not you",
                        "point NEXUS_HOME at a directory of your own")
        if st.st_mode & 0o077:
            raise _fail("store_insecure", path,
                        f"the {what} is mode {stat.S_IMODE(st.st_mode):04o}, open to other users",
                        f"run `chmod {mode:o} {path}`")

    def check_dir(self) -> bool:
        """True when the directory exists and is private; raise when it is not; False if absent."""
        try:
            st = os.stat(self.root)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _translate(exc, self.root) from None
        if not stat.S_ISDIR(st.st_mode):
            raise _fail("store_unreadable", self.root, "NEXUS_HOME is not a directory",
                        "point NEXUS_HOME at a directory")
        self._check_private(st, "store directory", self.root, 0o700)
        return True

    def check_file(self, sides: bool = True) -> bool:
        """Validate `nexus.db` before SQLite opens it: False when absent. The store's files are
        never symbolic links (SQLite would follow one out of the private directory). `sides`:
        the WAL, shared-memory and journal files too, which SQLite opens with a connection (one
        the store keeps has them open: `_links_refused` before a new one)."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _translate(exc, self.path) from None
        _no_link(self.path, st.st_mode)
        if sides:
            self._links_refused()
        if not stat.S_ISREG(st.st_mode):
            raise _fail("store_unreadable", self.path, "not a regular file",
                        "move it aside; nexus will create a new store")
        self._check_private(st, "store file", self.path, 0o600)
        if st.st_mode & 0o600 != 0o600:
            raise _fail("store_unreadable", self.path,
                        f"the file is mode {stat.S_IMODE(st.st_mode):04o}, not readable and "
                        "writable",
                        f"run `chmod 600 {self.path}`")
        self._ident = (st.st_dev, st.st_ino)
        header = self._header_checked(st.st_size)
        app_id = int.from_bytes(header[68:72], "big")
        if app_id != APPLICATION_ID:
            raise _fail("store_unreadable", self.path, "an SQLite database, but not a nexus store",
                        "point NEXUS_HOME elsewhere (the file was left untouched)")
        return True

    def _links_refused(self) -> None:
        """The WAL, shared-memory and rollback-journal files, where they exist, are no symbolic
        links (SQLite would follow one out of the private directory)."""
        for suffix in ("-wal", "-shm", "-journal"):
            try:
                mode = os.lstat(self.path + suffix).st_mode
            except OSError:
                continue
            _no_link(self.path + suffix, mode)

    def _wal_size(self) -> int:
        try:
            return os.stat(self.path + "-wal").st_size
        except OSError:
            return 0

    def _header_checked(self, size: int) -> bytes:
        """The 100-byte header, after checking the file holds every page it declares (`size`:
        its size as just looked at, the descriptor's own file). Pages a checkpoint has not copied
        yet (cut short by a full disk, or still running) are in the WAL: a shortfall counts as
        truncation only without a WAL, and only if it persists."""
        assert self._ident is not None
        for attempt in range(6):
            try:
                fd = _header_fd(self.path, self._ident)
                header = os.pread(fd, 100, 0)
                if attempt:
                    size = os.fstat(fd).st_size
            except FileNotFoundError:
                raise _fail("store_busy", self.path,
                            "the file was replaced while nexus looked at it", "retry") from None
            except OSError as exc:
                raise _translate(exc, self.path) from None
            if not header.startswith(SQLITE_MAGIC) or len(header) < 100:
                reason = ("the file is empty" if not header else
                          "the file is truncated" if SQLITE_MAGIC.startswith(header[:16]) else
                          "not an SQLite database")
                raise damaged(self.path, reason)
            page_size = int.from_bytes(header[16:18], "big")
            page_size = 65536 if page_size == 1 else page_size
            pages = int.from_bytes(header[28:32], "big")
            valid = header[24:28] == header[92:96]
            if not (valid and pages and size < page_size * pages) or self._wal_size():
                return header
            time.sleep(0.01 * (attempt + 1))
        raise _fail("store_unreadable", self.path,
                    f"the file is truncated ({size} of {page_size * pages} bytes) and no WAL holds "
                    "the rest", "the file was left untouched; restore it from a backup")

    # -- connections ----------------------------------------------------------------------------

    def _connect(self, target: str, uri: bool = False) -> sqlite3.Connection:
        if sqlite3.sqlite_version_info < SQLITE_MIN:
            raise _fail("store_unreadable", self.path, f"this Python's SQLite is "
                        f"{sqlite3.sqlite_version}; nexus needs {'.'.join(map(str, SQLITE_MIN))} "
                        "or newer", "run nexus with a Python built with a newer SQLite (the "
                        "store was left untouched)")
        conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               uri=uri, check_same_thread=False, factory=Connection)
        conn.local_root = self.root if target != ":memory:" else None
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA synchronous = NORMAL")  # a corrupt file fails here, at the first
        except BaseException:
            conn.close()  # closed now: a refused store leaves nothing for the garbage collector
            raise
        return conn

    def _opened(self, target: str, uri: bool = False) -> tuple[sqlite3.Connection, int]:
        """A connection and the schema version it reads, closed again when either fails."""
        conn = self._connect(target, uri)
        try:
            return conn, self._version(conn)
        except BaseException:
            conn.close()
            raise

    def _create(self) -> None:
        """Build a complete store in a temporary file, then link it into place (no clobber)."""
        if not self.check_dir():
            try:
                paths.ensure_private_dir(self.root)
            except OSError as exc:
                raise _translate(exc, self.root) from None
        tmp = f"{self.path}.new-{os.getpid()}-{time.monotonic_ns()}"
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            self._build(tmp)
            self._check_complete(tmp)
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass  # another process created it first: use theirs
        except (OSError, sqlite3.Error) as exc:
            raise _translate(exc, self.path) from None
        finally:
            for leftover in (tmp, tmp + "-wal", tmp + "-shm"):
                try:
                    os.unlink(leftover)
                except OSError:
                    pass

    def _build(self, tmp: str) -> None:
        """Fill the new, empty file `tmp` with a store at CURRENT: every migration, in order."""
        from . import migrations

        conn = self._connect(tmp)
        try:
            # built with a rollback journal, so a full disk fails the COMMIT itself (a WAL
            # checkpoint at close would fail silently); switched to WAL once complete
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute("BEGIN IMMEDIATE")
            migrations.apply(conn, time.time())
            conn.execute("COMMIT")
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()

    def _empty(self) -> sqlite3.Connection:
        """What a read sees before any store exists: an empty one at CURRENT, in memory."""
        from . import migrations

        conn = self._connect(":memory:")
        migrations.apply(conn, time.time())
        return conn

    @staticmethod
    def _check_complete(tmp: str) -> None:
        """The new store holds every page it declares and left nothing in a WAL, else the disk
        filled up while it was built: nothing is linked into place."""
        fd = os.open(tmp, os.O_RDONLY)
        try:
            header = os.pread(fd, 100, 0)
            size = os.fstat(fd).st_size
            os.fsync(fd)
        finally:
            os.close(fd)  # the temporary file: no SQLite connection of ours has it open
        page_size = int.from_bytes(header[16:18], "big") if len(header) == 100 else 0
        pages = int.from_bytes(header[28:32], "big") if len(header) == 100 else 0
        leftover = os.path.exists(tmp + "-wal") and os.path.getsize(tmp + "-wal") > 0
        if not pages or size < (65536 if page_size == 1 else page_size) * pages or leftover:
            import errno

            raise OSError(errno.ENOSPC, "the new store could not be written completely")

    def _version(self, conn: sqlite3.Connection) -> int:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA:
            raise _fail("store_newer", self.path,
                        f"schema {version} is newer than this nexus knows ({SCHEMA})",
                        "upgrade nexus; the file was left untouched")
        return version

    def _cached(self, kind: str) -> sqlite3.Connection | None:
        entry = getattr(self._local, kind, None) if self._local is not None else None
        if entry is None:
            return None
        if entry[0] == self._ident:
            return entry[1]
        entry[1].close()  # the file was replaced: this connection reads the old one
        setattr(self._local, kind, None)
        return None

    def _keep(self, kind: str, conn: sqlite3.Connection) -> sqlite3.Connection:
        if self._local is not None:
            setattr(self._local, kind, (self._ident, conn))
        return conn

    def open_write(self) -> sqlite3.Connection:
        """A connection for writing, creating or migrating the store as needed."""
        self.check_dir()
        if not self.check_file(sides=False):
            self._create()
            self.check_file(sides=False)
        cached = self._cached("write")
        if cached is not None:
            return cached
        self._links_refused()
        try:
            conn, version = self._opened(self.path)
            try:
                if version < SCHEMA:
                    self._migrate(conn)
            except BaseException:
                conn.close()
                raise
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from None
        return self._keep("write", conn)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if self._version(conn) < SCHEMA:  # another process may have, meanwhile
                from . import migrations

                migrations.apply(conn, time.time())
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def open_read(self, checked: bool = False) -> sqlite3.Connection:
        """A read-only connection; an empty in-memory store when none exists yet. `checked`: the
        caller has just checked the directory and the file (and found them)."""
        if not checked and not (self.check_dir() and self.check_file(sides=False)):
            return self._empty()
        cached = self._cached("read")
        if cached is not None:
            return cached
        self._links_refused()
        try:
            try:
                conn, version = self._opened(f"file:{self.path}?mode=ro", uri=True)
            except sqlite3.OperationalError:
                if not os.statvfs(self.root).f_flag & os.ST_RDONLY:
                    raise
                # read-only media: the WAL index cannot be opened for writing; nobody can write
                # there either, so reading the file as immutable is exact
                conn, version = self._opened(f"file:{self.path}?immutable=1", uri=True)
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from None
        if version < SCHEMA:
            conn.close()
            raise _fail("store_outdated", self.path,
                        f"schema {version} predates this nexus ({SCHEMA})",
                        "run `nexus maintenance` (or any command that writes) once")
        return self._keep("read", conn)

    def info(self) -> dict:
        """Where the store is and which schema it has; reads the header only, writes nothing."""
        exists = os.path.isfile(self.path)
        version = None
        if exists:
            try:
                conn = self._connect(f"file:{self.path}?mode=ro", uri=True)
                try:
                    version = conn.execute("PRAGMA user_version").fetchone()[0]
                finally:
                    conn.close()
            except sqlite3.Error:
                pass  # unreadable: `nexus doctor` says why
        return {"home": self.root, "database": self.path, "exists": exists,
                "schema_version": version, "schema_current": SCHEMA}

    # -- waking --------------------------------------------------------------------------------

    def poke(self, session_ids) -> int:
        """After COMMIT: nudge the waiters of these sessions."""
        return wake.poke(self.root, session_ids)

    def channel(self, session_id: str) -> wake.Channel:
        """A waiter's channel, created before its first look at the store. A wake folder that is
        not nexus's own (a link, another user's) is the store's problem, said as such."""
        try:
            return wake.Channel(self.root, session_id)
        except OSError as exc:
            import errno

            folder = paths.wake_dir(self.root)
            if exc.errno in (errno.ENOSPC, errno.EROFS):
                raise _translate(exc, folder) from None
            from shlex import quote

            raise _fail("store_insecure", folder, "the wake folder is a link or not yours: "
                        f"{exc.strerror or exc}", f"remove it (`rm -r {quote(folder)}`): nexus "
                        "makes a new one") from None

    def data_version(self, conn: sqlite3.Connection) -> object:
        """Changes whenever another connection committed (the waiters' safety poll)."""
        return conn.execute("PRAGMA data_version").fetchone()[0]

    # -- transactions ---------------------------------------------------------------------------

    # (the transactions are small classes, not contextlib's decorator: the hooks do not import
    # contextlib)

    def write(self, committed: Callable[[], object] | None = None) -> Write:
        """`with store.write() as conn:` `BEGIN IMMEDIATE` ... `COMMIT`; rolled back (and
        translated) on any failure. A write inside a write (same thread) is a savepoint of the
        outer one: it never waits for the lock its own thread holds. `committed` runs once the
        COMMIT is done and the writers' queue left, before the connection is let go (the poke:
        a waiter is woken before this process closes anything)."""
        return Write(self, committed)

    def read(self) -> Read:
        """`with store.read() as conn:` a consistent snapshot for read-only work (inside a
        write: the write's own view)."""
        return Read(self)

    def vouch(self) -> None:
        """An empty answer is believed only from a sound store: SQLite reads a damaged tree (an
        emptied root page, its rows' pages cut off) as no rows, without an error. A listing that
        finds nothing runs `quick_check` (milliseconds on a store of ordinary size; never on the
        hook path) and is store_unreadable, with the fix, when the store is damaged."""
        if not (self.check_dir() and self.check_file()):
            return
        with self.read() as conn:
            found = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if found != "ok":
            first = found.replace("*** in database main ***", "").strip().splitlines()[:1]
            raise damaged(self.path, f"the store is damaged ({first[0] if first else found})")

    def snapshot(self) -> Snapshot:
        """A read just before a write, outside its lock (`Ctx` resolves its caller there); the
        connection is None while there is no store yet (the write creates it)."""
        return Snapshot(self)

    def _release(self, conn: sqlite3.Connection) -> None:
        if self.linger:
            self._kept.append(conn)
        elif self._local is None or all(
                getattr(self._local, k, (None, None))[1] is not conn for k in ("read", "write")):
            conn.close()


_savepoints = itertools.count(1)


class Connection(sqlite3.Connection):
    """A connection that knows its store's directory (news markers live beside the file), and
    whose rows are checked where they become records (store/__init__.py)."""

    local_root: str | None = None
    execute_later = None  # (the team store's connections defer writes: `later`)

    def execute(self, sql: str, params: object = ()) -> sqlite3.Cursor:  # type: ignore[override]
        cur = sqlite3.Connection.execute(self, sql, params)  # type: ignore[arg-type]
        return cur if cur.description is None else rows.checked(cur, sql)  # type: ignore[return-value]


def later(conn: sqlite3.Connection, sql: str, params: object = ()) -> None:
    """A write whose result nobody reads (a touch, a new message, a notification). SQLite runs
    it now; the team database sends it with the transaction's next statement (pg.Conn), and an
    error it meets fails that statement, and so the transaction, as if it had been sent alone."""
    run = getattr(conn, "execute_later", None)
    if run is None:
        conn.execute(sql, params)  # type: ignore[arg-type]
    else:
        run(sql, params)


class Transaction:
    """`with Transaction(conn, path, immediate):` BEGIN (IMMEDIATE) ... COMMIT, rolled back on
    any failure; SQLite's errors come out translated. `savepoint`: a transaction inside the open
    one of the same connection instead, `SAVEPOINT` ... `RELEASE` (one class for both: a class
    costs every hook's start about 0.2 M instructions)."""

    __slots__ = ("conn", "immediate", "name", "path")

    def __init__(self, conn: sqlite3.Connection, path: str, immediate: bool,
                 savepoint: bool = False) -> None:
        self.conn, self.path, self.immediate = conn, path, immediate
        self.name = f"nx{next(_savepoints)}" if savepoint else None

    def __enter__(self) -> None:
        if self.name is not None:
            self.conn.execute(f"SAVEPOINT {self.name}")
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE" if self.immediate else "BEGIN")
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from None

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        if kind is None:
            if self.name is not None:
                self.conn.execute(f"RELEASE {self.name}")
                return
            try:
                self.conn.execute("COMMIT")
                return
            except BaseException as failed:
                self._undo()
                if isinstance(failed, sqlite3.Error):
                    raise _translate(failed, self.path) from None
                raise
        self._undo()
        if isinstance(exc, sqlite3.Error):
            raise _translate(exc, self.path) from None

    def _undo(self) -> None:
        try:
            if self.name is None:
                self.conn.execute("ROLLBACK")
            else:
                self.conn.execute(f"ROLLBACK TO {self.name}")
                self.conn.execute(f"RELEASE {self.name}")
        except sqlite3.Error:
            pass


class Write:
    """What `Store.write()` opens: the store's write lock (its writers' queue, then `BEGIN
    IMMEDIATE`), or a savepoint inside this thread's open write."""

    __slots__ = ("committed", "conn", "inner", "store", "turn")

    def __init__(self, store: Store, committed: Callable[[], object] | None = None) -> None:
        self.store, self.committed = store, committed
        self.conn: sqlite3.Connection | None = None  # None: a savepoint of the outer write

    def __enter__(self) -> sqlite3.Connection:
        store = self.store
        outer = getattr(store._active, "conn", None)
        if outer is not None:
            self.inner = Transaction(outer, store.path, True, savepoint=True)
            self.inner.__enter__()
            return outer
        conn = store.open_write()
        try:
            self.turn = store._queue.enter(BUSY_TIMEOUT_MS / 1000)
        except BaseException as exc:
            store._release(conn)
            if isinstance(exc, queue.Timeout):
                raise _busy(store.path) from None
            raise
        store._active.conn = self.conn = conn
        self.inner = Transaction(conn, store.path, immediate=True)
        try:
            self.inner.__enter__()
        except BaseException:
            self._done(None)
            raise
        return conn

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        try:
            self.inner.__exit__(kind, exc, tb)
        except BaseException:
            if self.conn is not None:
                self._done(None)
            raise
        if self.conn is not None:
            self._done(self.committed if kind is None else None)

    def _done(self, committed: Callable[[], object] | None) -> None:
        store, conn = self.store, self.conn
        assert conn is not None
        store._active.conn = None
        store._queue.leave(self.turn)
        try:
            if committed is not None:
                committed()
        finally:
            store._release(conn)


class Read:
    """What `Store.read()` opens: a read transaction of its own, or this thread's open write."""

    __slots__ = ("checked", "conn", "inner", "store")

    def __init__(self, store: Store, checked: bool = False) -> None:
        self.store, self.checked = store, checked  # checked: the store's files were just looked at
        self.conn: sqlite3.Connection | None = None  # its own connection (not the write's)

    def __enter__(self) -> sqlite3.Connection:
        store = self.store
        outer = getattr(store._active, "conn", None)
        if outer is not None:
            return outer
        conn = store.open_read(self.checked)
        self.inner = Transaction(conn, store.path, immediate=False)
        try:
            self.inner.__enter__()
        except BaseException:
            store._release(conn)
            raise
        self.conn = conn
        return conn

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        conn = self.conn
        if conn is not None:
            try:
                self.inner.__exit__(kind, exc, tb)
            finally:
                self.store._release(conn)


class Snapshot:
    """What `Store.snapshot()` opens: a `Read`, or None while there is no store file yet."""

    __slots__ = ("read",)

    def __init__(self, store: Store) -> None:
        self.read: Read | None = Read(store, checked=True)

    def __enter__(self) -> sqlite3.Connection | None:
        store = self.read.store  # type: ignore[union-attr]
        if getattr(store._active, "conn", None) is None and not (
                store.check_dir() and store.check_file(sides=False)):  # (one look serves both)
            self.read = None
        return self.read.__enter__() if self.read is not None else None

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        if self.read is not None:
            self.read.__exit__(kind, exc, tb)


class LocalStore(Store):
    """The per-user SQLite store whatever team URL is set (`nexus team migrate`)."""
