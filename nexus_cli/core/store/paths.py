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


def wake_dir(root: str | None = None) -> str:
    return os.path.join(root or home(), "wake")


def ensure_private_dir(path: str) -> None:
    """Create `path` (and the store root above it) with mode 0700."""
    if not os.path.isdir(path):
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)
