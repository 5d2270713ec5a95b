"""News markers: what lets a client skip Python on a tool call with nothing to announce.

`news/<client pid>` exists while a session that client process runs may have a message it has
not been told about. A message's INSERT creates its recipient's marker inside the writing
transaction; a hook removes it inside its own write transaction once nothing announceable is
left. Both hold the store's write lock, so a removal never hides a committed message: a message
committed before the hook's transaction is announced by it, one committed after re-creates the
marker. A marker with nothing behind it (a rolled-back write, a reused pid) only costs one
Python start. The installed PostToolUse hook tests the marker in the client's shell
(`[ -e <store>/news/"$PPID" ] || exit 0; nexus hook ...`) before it starts Python; the Stop
hook always runs, so a message is announced at the latest when the turn ends. Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import stat

from . import paths

FOLDER = "news"


def folder(root: str) -> str:
    return os.path.join(root, FOLDER)


def _root(conn: sqlite3.Connection) -> str | None:
    """The store's directory (the team store's: this machine's), None for an in-memory one."""
    return getattr(conn, "local_root", None)


def mark(conn: sqlite3.Connection, recipient: str, row: sqlite3.Row | None = None) -> None:
    """Inside the write that stored a message for `recipient`: raise its client's marker. Best
    effort (a full disk costs only the shortcut: the Stop hook still announces). `row`: the
    recipient's session row, read in this transaction, when the caller has it."""
    from ..proctable import machine

    root = _root(conn)
    if root is None:
        return
    if row is None or row["id"] != recipient:
        row = conn.execute("SELECT client_pid, machine FROM sessions WHERE id = ?",
                           (recipient,)).fetchone()
    # only for a client process of this machine (the team store: others learn after a tool call)
    if not row or not row["client_pid"] or row["machine"] not in (None, machine()):
        return
    with paths.subdir(root, FOLDER, create=True) as where:
        if where is None:
            return
        try:
            os.close(os.open(str(int(row["client_pid"])),
                             os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=where))
        except OSError:
            pass


def clear(conn: sqlite3.Connection, pid: int) -> None:
    """Inside a hook's write, once its session has nothing announceable left."""
    root = _root(conn)
    if root is None:
        return
    with paths.subdir(root, FOLDER) as where:
        if where is None:
            return
        try:
            os.unlink(str(int(pid)), dir_fd=where)
        except OSError:
            pass


def sweep(root: str) -> int:
    """Remove the markers of client processes that are gone."""
    from ..proctable import table

    removed = 0
    with paths.subdir(root, FOLDER) as where:
        for name in os.listdir(where) if where is not None else ():
            if name.isdigit() and table().alive(int(name)):
                continue
            try:  # a marker is an empty file of nexus's: nothing else here is removed
                if stat.S_ISREG(os.stat(name, dir_fd=where, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=where)
                    removed += 1
            except OSError:
                pass
    return removed
