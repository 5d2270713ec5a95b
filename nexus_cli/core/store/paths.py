"""Where the per-user store lives. Stdlib only (hook hot path)."""

from __future__ import annotations

import os
import sys

DB_NAME = "nexus.db"


def explicit_home() -> str | None:
    """`$NEXUS_HOME` as an absolute path (a relative one is taken from the current directory,
    and what is written for other processes, such as installed hooks, must not depend on
    theirs), or None when it is not set."""
    explicit = os.environ.get("NEXUS_HOME")
    return os.path.abspath(os.path.expanduser(explicit)) if explicit else None


def home() -> str:
    """`$NEXUS_HOME`, else the platform's per-user data directory plus `nexus`."""
    explicit = explicit_home()
    if explicit:
        return explicit
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    elif os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    else:
        base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(base, "nexus")


def db_path(root: str | None = None) -> str:
    return os.path.join(root or home(), DB_NAME)


WAKE = "wake"  # the waiters' channels (wake.py)


def wake_dir(root: str | None = None) -> str:
    return os.path.join(root or home(), WAKE)


def open_subdir(root: str, name: str, create: bool = False) -> int:
    """A descriptor of the store's folder `name` (wake/, news/), created 0700 when `create`:
    the folder itself, never a symbolic link, and the user's own (what nexus writes and deletes
    in it must stay in the store). Work in it goes through the descriptor (`dir_fd`), so the
    folder cannot be swapped meanwhile. Raises OSError when it is missing or not such a folder."""
    path = os.path.join(root, name)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if not create:
            raise
        os.makedirs(root, 0o700, exist_ok=True)  # (a team store's local root may not exist yet)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        fd = os.open(path, flags)
    if hasattr(os, "geteuid") and os.fstat(fd).st_uid != os.geteuid():
        os.close(fd)
        raise PermissionError(f"{path} belongs to another user")
    return fd


class subdir:
    """`open_subdir` for one piece of work, as `with subdir(root, name) as fd:`: the descriptor,
    or None when there is no such folder of nexus's own (nothing to do there); closed afterwards.
    (A class, not contextlib's decorator: the hooks do not import contextlib.)"""

    __slots__ = ("fd",)

    def __init__(self, root: str, name: str, create: bool = False) -> None:
        try:
            self.fd: int | None = open_subdir(root, name, create)
        except OSError:
            self.fd = None

    def __enter__(self) -> int | None:
        return self.fd

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)


def ensure_private_dir(path: str) -> None:
    """Create `path` (and the store root above it) with mode 0700."""
    if not os.path.isdir(path):
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)
