"""Who is who: session ids, handles, default names, project roots, process ancestry.

Stdlib only (the hook hot path uses it)."""

from __future__ import annotations

import os
import re

CLIENTS = ("claude", "codex")
USER = "user"
SYSTEM_ID = "nexus:system"
NAME_RE = re.compile(r"^[A-Za-z0-9._@#-]{1,48}$")
_HEX = re.compile(r"[0-9a-f]")


def session_id(client: str, client_session_id: str) -> str:
    return f"{client}:{client_session_id}"


def split_id(sid: str) -> tuple[str, str]:
    client, _, rest = sid.partition(":")
    return client, rest


def handle_for(sid: str) -> str:
    """`s-` plus the first 12 hex digits of the client's id (a digest fills in when it has fewer)."""
    client, rest = split_id(sid)
    if client == USER:
        return "u-" + rest[:12]
    digits = "".join(_HEX.findall(rest.lower()))
    if len(digits) < 12:
        import hashlib

        digits += hashlib.sha1(sid.encode()).hexdigest()
    return "s-" + digits[:12]


def login() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no passwd entry (containers): fall back to the uid
        return f"uid{os.getuid()}" if hasattr(os, "getuid") else "user"


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


def parent_pid(pid: int) -> int | None:
    """The parent of `pid` from /proc (None where that is not available)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    # the command name may hold spaces and parentheses: the fields follow the last ')'
    fields = data[data.rindex(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def ancestors(pid: int | None = None, limit: int = 64) -> list[int]:
    """The chain of parent pids above `pid` (default: this process), nearest first."""
    chain: list[int] = []
    current = pid if pid is not None else os.getpid()
    for _ in range(limit):
        parent = parent_pid(current)
        if not parent or parent in chain:
            break
        chain.append(parent)
        current = parent
    return chain


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""


SHELLS = {"sh", "bash", "dash", "zsh", "fish", "ksh"}


def hook_client_pid(env: dict[str, str] | os._Environ[str]) -> int | None:
    """The client process that ran this hook: `NEXUS_CLIENT_PID` (for wrappers that run hooks
    through other processes) or `CLAUDE_PID` when set, else the first ancestor that is not a
    shell (clients may run hooks through `sh -c`)."""
    for var in ("NEXUS_CLIENT_PID", "CLAUDE_PID"):
        explicit = env.get(var, "")
        if explicit.isdigit():
            return int(explicit)
    for pid in ancestors(limit=4):
        if process_name(pid) not in SHELLS:
            return pid
    return os.getppid() if hasattr(os, "getppid") else None
