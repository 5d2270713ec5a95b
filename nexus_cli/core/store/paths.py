"""Where the per-user store lives. Stdlib only (hook hot path)."""

from __future__ import annotations

import os
import sys

DB_NAME = "nexus.db"


def home() -> str:
    """`$NEXUS_HOME`, else the platform's per-user data directory plus `nexus`."""
    explicit = os.environ.get("NEXUS_HOME")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
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
