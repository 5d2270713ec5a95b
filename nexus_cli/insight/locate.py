"""Which transcript a target names, and every transcript in scope. Stdlib only.

A session is found through nexus first (id, handle, name: the same rules as every target, a name
reaching offline sessions of the last 24 h too), else by its id or handle among the transcripts
the clients wrote (sessions nexus never saw: started before it was installed, or elsewhere).
Its transcript is the path its hooks reported, else the file its client wrote under its id.
Scope is the project root of the session's cwd, exactly as for live sessions."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Mapping
from types import ModuleType
from typing import Any, NamedTuple

from ..clients import transcript as common
from ..clients.claude import transcript as claude_transcript
from ..clients.codex import transcript as codex_transcript
from ..core import discovery, identity, sessions
from ..core.errors import NexusError
from ..core.sessions import Caller

READERS: dict[str, ModuleType] = {"claude": claude_transcript, "codex": codex_transcript}
WARNING = ("A transcript shows what a session wrote, not that it answered you: a peer's answer "
           "is a message in your inbox (`nexus inbox`, `nexus read`).")


def env() -> Mapping[str, str]:
    return os.environ


class Located(NamedTuple):
    session_id: str
    client: str
    raw: str
    path: str | None
    path_source: str | None  # hook | found
    resolved_by: str  # id | handle | name | transcript id | transcript handle | self
    row: sqlite3.Row | None
    cwd: str
    project: str

    def require(self, target: str) -> str:
        """The transcript path, or the coded error saying why there is none."""
        if self.path is None:
            raise NexusError("transcript_not_found", target,
                             f"no transcript of {self.session_id} under "
                             f"{where(self.client)}", "the session may have run with another "
                             "HOME, CLAUDE_CONFIG_DIR or CODEX_HOME, or its file was removed")
        return self.path


def where(client: str) -> str:
    e = env()
    return claude_transcript.root(e) if client == "claude" else \
        os.path.join(codex_transcript.home(e), "sessions")


def project_of(cwd: str) -> str:
    return identity.project_root(cwd) if cwd else ""


def reported(row: sqlite3.Row, raw: str) -> os.stat_result | None:
    """The transcript a session's hooks reported, when it can be believed: a session of this
    machine (another machine's path means a file there), and the session's own file, a regular
    file named after its id (`<id>.jsonl`, Codex `rollout-...-<id>.jsonl`), not a link, hard or
    symbolic. A hook
    may name any path; nexus reads nothing else through it (not /etc/passwd, not another
    session's transcript, not a FIFO)."""
    path = row["transcript_path"]
    name = os.path.basename(path or "")
    if not path or not sessions.here(row) or not (
            name == f"{raw}.jsonl" or name.endswith(f"-{raw}.jsonl")):
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    # one name only: a hard link made under the session's name to another file is not its own
    return st if stat.S_ISREG(st.st_mode) and st.st_nlink == 1 else None


def transcript_for(client: str, raw: str, row: sqlite3.Row | None,
                   cwd: str | None) -> tuple[str | None, str | None]:
    if row is not None and reported(row, raw) is not None:
        return row["transcript_path"], "hook"
    found = READERS[client].find(raw, env(), cwd)
    return (found, "found") if found else (None, None)


def from_row(row: sqlite3.Row, resolved_by: str, target: str) -> Located:
    client, raw = identity.split_id(row["id"])
    if client not in READERS:
        raise NexusError("transcript_not_found", target, f"{row['name']} is a person at a shell: "
                         "people have no transcript", "name an agent session (`nexus peers`)")
    path, source = transcript_for(client, raw, row, row["cwd"])
    return Located(row["id"], client, raw, path, source, resolved_by, row, row["cwd"],
                   row["project"])


def resolve(conn: sqlite3.Connection, me: Caller, target: str | None, now: float,
            all_workspaces: bool) -> Located:
    """The session and transcript `target` names (None: the caller's own)."""
    if target is None:
        row = sessions.get(conn, me.id)
        if not me.is_agent:
            raise NexusError("invalid_argument", "TARGET", "a person at a shell has no "
                             "transcript of its own", "name a session (`nexus sessions`)")
        if row is None:
            client, raw = identity.split_id(me.id)
            path, source = transcript_for(client, raw, None, me.cwd)
            return Located(me.id, client, raw, path, source, "self", None, me.cwd, me.project)
        return from_row(row, "self", "TARGET")
    try:
        row = discovery.resolve_target(conn, me, target, now, all_workspaces, allow_self=True,
                                      include_offline=True)
    except NexusError as exc:
        if exc.code != "target_not_found":
            raise
        found = by_transcript(conn, me, target.strip(), all_workspaces)
        if found is None:
            raise
        return found
    how = "id" if row["id"] == target.strip() else \
        "handle" if row["handle"] == target.strip() else "name"
    return from_row(row, how, target)


def _id_parts(target: str) -> tuple[list[str], str] | None:
    """(clients, raw id or hex prefix) when `target` looks like an id or a handle."""
    client, sep, rest = target.partition(":")
    if sep and client in READERS:
        return [client], rest.lower()
    if claude_transcript.is_id(target.lower()):
        return list(READERS), target.lower()
    if target.startswith("s-") and len(target) >= 2 + identity.HANDLE_DIGITS and \
            all(c in "0123456789abcdef" for c in target[2:]):
        return list(READERS), target[2:]
    return None


def by_transcript(conn: sqlite3.Connection, me: Caller, target: str,
                  all_workspaces: bool) -> Located | None:
    """A session nexus never saw, by its id (`claude:<uuid>`, `codex:<uuid>`, a bare uuid) or its
    handle, among the clients' transcripts; None when nothing matches."""
    parts = _id_parts(target)
    if parts is None:
        return None
    clients, key = parts
    hits: list[tuple[str, str, str]] = []
    if len(key) == 36:
        for client in clients:
            path = READERS[client].find(key, env())
            if path:
                hits.append((client, key, path))
    else:  # a handle: the hex digits of the id a handle is cut from
        for client in clients:
            for raw, path in READERS[client].discover(env()):
                if identity.handle_digits(f"{client}:{raw}").startswith(key):
                    hits.append((client, raw, path))
    if not hits:
        return None
    if len(hits) > 1:
        shown = ", ".join(f"{c}:{r}" for c, r, _ in hits[:12])
        raise NexusError("target_ambiguous", target, f"{len(hits)} transcripts match: {shown}",
                         "use the full id")
    client, raw, path = hits[0]
    sid = f"{client}:{raw}"
    row = sessions.get(conn, sid)
    if row is not None and row["client"] in READERS:
        # nexus knows it after all (another project, or a name it did not match): its own rules
        if not all_workspaces and not me.holds(row):
            raise outside(target, row["project"])
        return from_row(row, "id", target)
    try:
        cwd = common.sniff(path, READERS[client].reader).get("cwd") or ""
    except OSError as exc:  # not a regular file, or not readable: nothing to scope it by
        raise NexusError("transcript_not_found", target, f"{path}: {exc.strerror or exc}",
                         "only a regular file the user can read is a transcript") from None
    project = project_of(cwd)
    if not all_workspaces and project != me.project:
        raise outside(target, project)
    return Located(sid, client, raw, path, "found",
                   "transcript id" if len(key) == 36 else "transcript handle", None, cwd, project)


def outside(target: str, project: str) -> NexusError:
    reason = f"its transcript belongs to project {project}" if project else \
        "its transcript does not say which directory it ran in, so it is outside this project"
    return NexusError("target_not_found", target, reason, "add --all-workspaces to reach it")


def meta_of(client: str, path: str) -> dict[str, Any] | None:
    """cwd, first prompt and start of a transcript, from its first lines; None when it cannot
    be read."""
    try:
        return common.sniff(path, READERS[client].reader)
    except OSError:
        return None


class Found(NamedTuple):
    session_id: str
    client: str
    raw: str
    path: str
    size: int
    mtime: float


def discover() -> tuple[list[Found], int]:
    """Every main transcript of both clients, and how many could not be looked at."""
    out, skipped = [], 0
    e = env()
    for client, mod in READERS.items():
        for raw, path in mod.discover(e):
            try:
                st = os.stat(path)
            except OSError:
                skipped += 1
                continue
            if not stat.S_ISREG(st.st_mode):  # a FIFO or a directory named like one: not read
                skipped += 1
                continue
            out.append(Found(f"{client}:{raw}", client, raw, path, st.st_size, st.st_mtime))
    return out, skipped
