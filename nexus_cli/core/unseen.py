"""Client processes nexus has not seen yet: a Codex TUI runs its first hook at its first prompt,
but starts its MCP servers at launch. `nexus mcp` records the client process above it in the
store's `starting/` folder (one small file per process); `peers` lists those still running in
the project that no session names yet, and `send` to an offline session of that project says
one runs ("a Codex process runs in this project; it appears at its first prompt"). What is read
back is input: a file that is not such a record is skipped. Stdlib only."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Sequence

from .. import clients
from .proctable import Proc, machine, table
from .store import paths

FOLDER = "starting"
LOOKED_AT = 64  # records read by one listing (and pruned by one start): a bound, not a guess
TITLES = {"claude": "Claude Code", "codex": "Codex"}
SIZE = 4096  # a record is far smaller: anything larger is not one


def client_above(chain: Sequence[Proc]) -> tuple[str, Proc] | None:
    """The nearest client process in an ancestry (the one that started `nexus mcp`)."""
    for proc in chain:
        for name, adapter in clients.ADAPTERS.items():
            if adapter.is_client(proc):
                return name, proc
    return None


def record(root: str, chain: Sequence[Proc], cwd: str) -> None:
    """In `nexus mcp`, once it serves: note the client process that started it (nothing when no
    client is above it, or the store does not exist yet), and drop the notes of processes that
    have exited."""
    found = client_above(chain)
    if found is None or not os.path.isdir(root):
        return
    name, proc = found
    note = {"client": name, "pid": proc.pid, "start": proc.start, "cwd": cwd,
            "project": _project(cwd), "machine": machine(), "at": time.time()}
    with paths.subdir(root, FOLDER, create=True) as fd:
        if fd is None:
            return
        _prune(fd)
        temp = f".{proc.pid}.{os.getpid()}.tmp"
        out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600,
                      dir_fd=fd)
        try:
            os.write(out, json.dumps(note).encode())
        finally:
            os.close(out)
        os.replace(temp, f"{proc.pid}.json", src_dir_fd=fd, dst_dir_fd=fd)


def _project(cwd: str) -> str:
    from .identity import project_root

    return project_root(cwd)


def _read(fd: int, entry: str) -> dict | None:
    """One record, checked; None for anything else."""
    try:
        handle = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    except OSError:
        return None
    try:
        raw = os.read(handle, SIZE + 1)
    except OSError:
        return None
    finally:
        os.close(handle)
    try:
        note = json.loads(raw) if len(raw) <= SIZE else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(note, dict) or note.get("client") not in TITLES or \
            not isinstance(note.get("pid"), int) or isinstance(note.get("pid"), bool) or \
            note["pid"] <= 0 or f"{note['pid']}.json" != entry:
        return None
    for key in ("start", "cwd", "project", "machine"):
        if not isinstance(note.get(key), str):
            return None
    if not isinstance(note.get("at"), int | float) or isinstance(note.get("at"), bool):
        return None
    return note


def _entries(fd: int) -> list[str]:
    return sorted(e for e in os.listdir(fd) if e.endswith(".json"))[:LOOKED_AT]


def _prune(fd: int) -> None:
    for entry in _entries(fd):
        note = _read(fd, entry)
        if note is None or (note["machine"] == machine()
                             and not table().alive(note["pid"], note["start"])):
            try:
                os.unlink(entry, dir_fd=fd)
            except OSError:
                pass


def running(conn: sqlite3.Connection, root: str, project: str | None,
            client: str | None = None) -> list[dict]:
    """Client processes of this machine running in `project` (None: anywhere; of `client`, when
    given) that no session names yet, oldest first."""
    found = []
    with paths.subdir(root, FOLDER) as fd:
        if fd is None:
            return []
        for entry in _entries(fd):
            note = _read(fd, entry)
            if note is None or project not in (None, note["project"]) \
                    or note["machine"] != machine() \
                    or (client and note["client"] != client) \
                    or not table().alive(note["pid"], note["start"]):
                continue
            if conn.execute("SELECT 1 FROM sessions WHERE client_pid = ? AND client_start = ?"
                            " LIMIT 1", (note["pid"], note["start"])).fetchone() is None:
                found.append(note)
    found.sort(key=lambda n: n["at"])
    return found


def said(note: dict) -> str:
    """What a reader is told of one such process."""
    return (f"a {TITLES[note['client']]} process runs in this project; it appears at its "
            "first prompt")


def shown(note: dict) -> dict:
    """The process as `peers` lists it."""
    return {"client": note["client"], "pid": note["pid"], "cwd": note["cwd"],
            "since_epoch": note["at"], "note": said(note)}
