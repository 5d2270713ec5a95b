"""Who is who: session ids, handles, default names, project roots. Stdlib only (hot path).

A session id is `<client>:<the client's own id>` (`claude:<uuid>`, `codex:<uuid>`), the person
at a shell is `user:<login>`, and nexus itself writes as `nexus:system`. Every id is checked
against its exact shape (whole string, no trailing newline): an id is data and can never carry
a line of an announcement."""

from __future__ import annotations

import os
import re

from .. import clients
from .errors import NexusError

CLIENTS = clients.NAMES
USER = "user"
SYSTEM_ID = "nexus:system"
LOGIN_RE = re.compile(r"\A[A-Za-z0-9._-]{1,64}\Z")
NAME_RE = re.compile(r"\A[A-Za-z0-9._@#-]{1,48}\Z")
HANDLE_DIGITS = 12


def bad_id(value: str, why: str) -> NexusError:
    shown = value if len(value) <= 80 else value[:79] + "…"
    return NexusError("invalid_argument", repr(shown)[1:-1] or "(empty)", why,
                      "use an id such as claude:<uuid>, codex:<uuid> or user:<login> "
                      "(`nexus peers` lists them)")


def session_id(client: str, raw: str) -> str:
    """`<client>:<raw>` after checking `raw` against that client's id shape."""
    adapter = clients.ADAPTERS.get(client)
    if adapter is None:
        raise bad_id(f"{client}:{raw}", f"{client!r} is not a client nexus knows")
    if not isinstance(raw, str) or not adapter.ID_RE.match(raw):
        raise bad_id(f"{client}:{raw}", f"not a {client} session id (a lowercase UUID)")
    return f"{client}:{raw}"


def split_id(sid: str) -> tuple[str, str]:
    client, _, rest = sid.partition(":")
    return client, rest


def check_id(sid: str) -> str:
    """`sid` itself when it is a well-formed participant id, else a coded error."""
    client, sep, rest = sid.partition(":")
    if not sep:
        raise bad_id(sid, "an id has the form <client>:<id>")
    if client == USER:
        if not LOGIN_RE.match(rest):
            raise bad_id(sid, "a user id is user:<login> (1-64 of A-Z a-z 0-9 . _ -)")
        return sid
    return session_id(client, rest)


def is_valid(sid: str) -> bool:
    try:
        check_id(sid)
    except NexusError:
        return False
    return True


def handle_digits(sid: str) -> str:
    """The characters a handle is cut from: the client id's hex digits (a user's login)."""
    client, rest = split_id(sid)
    if client == USER:
        return rest
    return rest.replace("-", "").lower()


def handle_base(sid: str, length: int = HANDLE_DIGITS) -> str:
    client, _ = split_id(sid)
    if client == USER:
        return "u-" + handle_digits(sid)
    return "s-" + handle_digits(sid)[:length]


def login() -> str:
    import getpass

    try:
        name = getpass.getuser()
    except Exception:  # no passwd entry (containers): fall back to the uid
        name = ""
    if not LOGIN_RE.match(name):
        name = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:64]
    if not name:
        name = f"uid{os.getuid()}" if hasattr(os, "getuid") else "user"
    return name


def user_id() -> str:
    return f"{USER}:{login()}"


def base_name(sid: str, cwd: str) -> str:
    client, rest = split_id(sid)
    if client == USER:
        return rest[:48] or "user"
    folder = os.path.basename(cwd.rstrip(os.sep)) or "root"
    name = re.sub(r"[^A-Za-z0-9._@#-]", "-", f"{client}@{folder}")
    return name[:44]


def project_root(cwd: str) -> str:
    """The git top level above `cwd` (a `.git` directory or file), else `cwd` itself."""
    cwd = os.path.abspath(cwd)
    probe = cwd
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return cwd
        probe = parent
