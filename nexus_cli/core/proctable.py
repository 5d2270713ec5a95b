"""The process table: parent, name, start time and liveness of a pid, and the ancestry of this
process. Identity rests on it (which client process a command runs under), so it has one
interface and two backends:

- `proc`: Linux `/proc`, a few small reads per pid (the hooks' fast path);
- `ps`: one `ps -A` snapshot, for systems without `/proc` (macOS, BSD). `NEXUS_PROCESS_TABLE=ps`
  forces it on Linux too, so the suite runs every identity test through both.

Stdlib only (the hook hot path uses it)."""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator

from .record import Record


class Proc(Record):
    """One process."""

    __slots__ = ()
    _fields = ("pid", "ppid", "name", "start")
    pid: int
    ppid: int
    name: str  # the executable's base name (as `comm`, up to 15 characters on Linux)
    start: str  # an opaque start-time token: with the pid it names one process, never a reused pid


class ProcTable:
    backend = "none"
    _own: tuple[int, list[Proc]] | None = None  # (parent, chain): this process's ancestry

    def get(self, pid: int) -> Proc | None:
        raise NotImplementedError

    def exe(self, pid: int) -> str | None:
        return None

    def feeds_stdin(self, pid: int) -> bool:
        """Whether `pid` holds the pipe this process reads its standard input from (the client
        that started an MCP server writes its requests there). False where it cannot be seen."""
        return False

    def alive(self, pid: int | None, start: str | None = None) -> bool:
        """Whether `pid` runs, and is the process that had `start` (when given)."""
        if not pid or pid < 0:
            return False
        if start is not None and self.is_parent(pid, start):
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        except OverflowError:
            return False
        if start is None:
            return True
        proc = self.get(pid)
        return proc is not None and proc.start == start

    def is_parent(self, pid: int, start: str) -> bool:
        """Whether (pid, start) is this process's parent as its ancestry was read, which runs
        while it is still the parent (a process that exits has its children re-parented at
        once): the check of a client that started this process (an MCP server, a command it ran
        itself) costs no look at the process table."""
        own = self._own
        if own is None or own[0] != pid or not own[1]:
            return False
        parent = own[1][0]
        return parent.pid == pid and parent.start == start and os.getppid() == pid

    def ancestors(self, pid: int | None = None, limit: int = 64) -> list[Proc]:
        """The processes above `pid` (default: this one), nearest first, ending before pid 1.
        This process's own chain is kept while its parent stays the same (no process can take
        the pid of a living ancestor, and losing one re-parents us)."""
        if pid is None:
            parent = os.getppid()
            cached = self._own
            if cached is not None and cached[0] == parent:
                return list(cached[1])
            chain = self._walk(os.getpid(), limit)
            self._own = (parent, chain)
            return list(chain)
        return self._walk(pid, limit)

    def climb(self, limit: int = 64) -> Iterator[Proc]:
        """This process's ancestors as `ancestors()` lists them, each read only when asked for:
        a hook whose client is its parent reads no further up (the whole chain is asked for
        only by a session's first event)."""
        parent = os.getppid()
        cached = self._own
        if cached is not None and cached[0] == parent:
            return iter(list(cached[1]))
        return self._climb(os.getpid(), limit)

    def _climb(self, pid: int, limit: int) -> Iterator[Proc]:
        current = self.get(pid)
        seen: set[int] = set()
        while current is not None and len(seen) < limit:
            if current.ppid <= 1 or current.ppid in seen:
                return
            seen.add(current.ppid)
            parent = self.get(current.ppid)
            if parent is None:
                return
            yield parent
            current = parent

    def _walk(self, pid: int, limit: int) -> list[Proc]:
        return list(self._climb(pid, limit))


class ProcFS(ProcTable):
    """Linux: /proc/<pid>/stat holds the parent, the name and the start time in one read (an
    unbuffered one: a Python file object costs three times the system calls' own time, and a
    listing of 1,000 sessions asks for 1,000 processes)."""

    backend = "proc"

    @staticmethod
    def _stat(pid: int) -> bytes:
        try:
            fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        except (OSError, ValueError):
            return b""
        try:
            return os.read(fd, 4096)
        except OSError:
            return b""
        finally:
            os.close(fd)

    def get(self, pid: int) -> Proc | None:
        data = self._stat(pid)
        if not data:
            return None
        # the name may hold spaces and parentheses: it ends at the last ')'
        end = data.rindex(b")")
        name = data[data.index(b"(") + 1 : end].decode("utf-8", "replace")
        fields = data[end + 2 :].split()
        if fields[:1] in ([b"Z"], [b"X"]):
            return None  # it has exited (a zombie its parent has not reaped yet)
        try:
            return Proc(pid, int(fields[1]), name, fields[19].decode())
        except (IndexError, ValueError):
            return None

    def exe(self, pid: int) -> str | None:
        try:
            return os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return None

    def feeds_stdin(self, pid: int) -> bool:
        try:
            st = os.fstat(0)
            if not stat.S_ISFIFO(st.st_mode):
                return False  # a file, a socket or a terminal: no pipe of a client's
            ours = f"pipe:[{st.st_ino}]"
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return False
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == ours:
                    return True
            except OSError:
                continue
        return False

    def alive(self, pid: int | None, start: str | None = None) -> bool:
        if start is None or not pid or pid < 0:
            return super().alive(pid, start)
        if self.is_parent(pid, start):
            return True
        data = self._stat(pid)  # one read says both: it runs (not a zombie), and since when
        fields = data[data.rfind(b")") + 2:].split(None, 20) if data else []
        return len(fields) > 19 and fields[0] not in (b"Z", b"X") and \
            fields[19] == start.encode()


class PsTable(ProcTable):
    """Any POSIX system: one `ps -A` snapshot, taken at the first question and again once it is
    a second old (a board or an MCP server lives long: a client started since must not look
    gone). `lstart` is the start time to the second, which with the pid names one process."""

    backend = "ps"
    FRESH = 1.0  # seconds a snapshot answers for

    def __init__(self) -> None:
        self._rows: dict[int, Proc] | None = None
        self._paths: dict[int, str] = {}
        self._taken = 0.0

    def _snapshot(self) -> dict[int, Proc]:
        if self._rows is None or time.monotonic() - self._taken > self.FRESH:
            import subprocess

            self._taken = time.monotonic()
            self._rows, self._paths = {}, {}
            try:
                out = subprocess.run(
                    ["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "stat=", "-o", "lstart=",
                     "-o", "comm="],
                    capture_output=True, text=True, timeout=10,
                    env={**os.environ, "LC_ALL": "C"}).stdout
            except (OSError, subprocess.SubprocessError):
                return self._rows
            for line in out.splitlines():
                parts = line.split(None, 8)  # pid ppid stat Dow Mon DD HH:MM:SS YYYY comm
                if len(parts) < 9 or not parts[0].isdigit() or not parts[1].isdigit() \
                        or parts[2].startswith("Z"):  # a zombie has exited
                    continue
                comm = parts[8].strip()
                pid = int(parts[0])
                self._paths[pid] = comm
                self._rows[pid] = Proc(pid, int(parts[1]), os.path.basename(comm)[:15],
                                       " ".join(parts[3:8]))
        return self._rows

    def get(self, pid: int) -> Proc | None:
        if pid == os.getpid():
            self._rows = None  # our own row must exist: a snapshot taken earlier may predate us
        return self._snapshot().get(pid)

    def exe(self, pid: int) -> str | None:
        self._snapshot()
        path = self._paths.get(pid)
        return path if path and os.path.isabs(path) else None


# a shell's program (the real file, links resolved): what an agent's shell tool already is, and
# never a client, whatever the process is named (a link `claude` -> /bin/bash); the sh family's
# names may end in a version (`bash5.2`)
SH_FAMILY = frozenset(p + "sh" for p in ("", "ba", "da", "z", "k", "mk", "pdk", "a", "c", "tc",
                                         "fi", "ya"))
SHELLS = frozenset(("rc", "es", "busybox", "toybox", "pwsh", "nu", "elvish", "xonsh"))


def shell_program(name: str) -> bool:
    """Whether a program's file name is a shell's."""
    return name.rstrip("0123456789.") in SH_FAMILY or name in SHELLS


SHELLS_FILE = "/etc/shells"  # the system's shells, a copy of which is a shell by any name
COPY_MAX = 64 << 20  # a program larger than this is compared with no shell (no shell is)


def is_shell(pid: int) -> bool:
    """Whether the process runs a shell's program (unknown, as for another user's process: no):
    by its file's name, links resolved, or as a byte-for-byte copy of a shell the system lists
    (`cp /bin/bash claude`)."""
    exe = table().exe(pid)
    if not exe:
        return False
    real = exe if table().backend == "proc" else os.path.realpath(exe)  # /proc: resolved
    if shell_program(os.path.basename(real)):
        return True
    # /proc/<pid>/exe opens the very file the process runs, even if its name was replaced since
    return copy_of_a_shell(f"/proc/{pid}/exe" if table().backend == "proc" else real)


def copy_of_a_shell(path: str) -> bool:
    """Whether the program at `path` is one of /etc/shells, or has the same bytes as one. Sizes
    decide first: a program no shell's size is never read (Claude Code and Codex are far larger
    than any shell)."""
    try:
        st = os.stat(path)
        if st.st_size > COPY_MAX or not st.st_size:
            return False
        with open(SHELLS_FILE, "rb") as fh:
            listed = {line.strip() for line in fh.read(1 << 16).splitlines()}
    except OSError:
        return False
    same_size = []
    for entry in sorted(e for e in listed if e.startswith(b"/")):
        try:
            other = os.stat(entry)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return True
        if other.st_size == st.st_size and (other.st_dev, other.st_ino) not in same_size:
            same_size.append((other.st_dev, other.st_ino))
            if _same_bytes(path, entry):
                return True
    return False


def _same_bytes(one: str | bytes, two: str | bytes) -> bool:
    try:
        with open(one, "rb") as a, open(two, "rb") as b:
            while True:
                x, y = a.read(1 << 20), b.read(1 << 20)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def chosen() -> ProcTable:
    """A new table of the kind this system (or `NEXUS_PROCESS_TABLE`) calls for."""
    wanted = os.environ.get("NEXUS_PROCESS_TABLE", "")
    if wanted == "ps" or (wanted != "proc" and not os.path.exists("/proc/self/stat")):
        return PsTable()
    return ProcFS()


_TABLE: list[ProcTable] = []


def table() -> ProcTable:
    if not _TABLE:
        _TABLE.append(chosen())
    return _TABLE[0]


def use(replacement: ProcTable | None) -> None:
    """Install another table (the test suite's synthetic process trees); None restores the real
    one. Only code running in this process can call it: no variable or file switches it."""
    _TABLE[:] = [replacement] if replacement is not None else []


_MACHINE: list[str] = []
_PARTS: list[tuple[str, str]] = []


def _machine_parts() -> tuple[str, str]:
    """(host name, machine id): `NEXUS_MACHINE_ID` overrides the id."""
    if not _PARTS:
        ident = os.environ.get("NEXUS_MACHINE_ID", "")
        for file in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
            if ident:
                break
            try:
                with open(file, "rb") as fh:  # (bytes: no codec to import)
                    ident = fh.read().decode("ascii", "replace").strip()
            except OSError:
                continue
        node = os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")
        _PARTS.append((node, ident))
    return _PARTS[0]


def machine() -> str:
    """This machine, as sessions record it: the host name and the first 12 characters of the
    machine id (`NEXUS_MACHINE_ID` overrides the id). Process ids and start times mean something
    only on the machine whose process table they come from."""
    if not _MACHINE:
        node, ident = _machine_parts()
        _MACHINE.append(f"{node}/{ident[:12]}" if ident else node)
    return _MACHINE[0]


def machine_name() -> str:
    """This machine's short, stable name in a person's team id (`user:<login>@<name>`): the
    first label of the host name (letters, digits and -, at most 24) and the first 6 characters
    of the machine id, so two machines that share a host name (containers, CI runners) stay two.
    Always matches [A-Za-z0-9._-]{1,40}."""
    node, ident = _machine_parts()
    host = re.sub(r"[^A-Za-z0-9-]+", "-", node.split(".", 1)[0]).strip("-")[:24].strip("-")
    tail = re.sub(r"[^A-Za-z0-9]+", "", ident)[:6].lower()
    return "-".join(p for p in (host.lower(), tail) if p) or "host"
