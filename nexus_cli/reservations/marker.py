"""The reservation marker: what lets a client skip Python on a file edit when nothing is reserved.

`<store>/reserved` exists whenever some reservation may be active (and while `autoReserve` is
on: every edit must then reach nexus). A write that adds or extends a reservation raises it
inside its transaction, before COMMIT (a marker with nothing behind it, after a rollback, only
costs one Python start). It is lowered only by `settle`, in a write transaction of its own that
changes nothing: under the store's write lock it sees that no reservation is active and removes
the marker, and no reservation can be added before that transaction ends. So the marker is never
missing while a reservation is active. The installed PreToolUse hook of the file-editing tools
tests it in the client's shell (`[ -e <store>/reserved ] || exit 0; nexus hook ...`). Stdlib
only."""

from __future__ import annotations

import os

from ..core.store.db import Store

FILE = "reserved"


def path(root: str) -> str:
    return os.path.join(root, FILE)


def raise_(root: str) -> None:
    """Inside the write that adds a reservation (or when autoReserve is on). Best effort: when
    the marker cannot be made (a full disk), edits are not checked until it can; the commit guard
    still is."""
    try:
        os.close(os.open(path(root), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    except OSError:
        pass


def raised(root: str) -> bool:
    return os.path.lexists(path(root))


def shared_store() -> bool:
    """Team mode: reservations of other machines never raise this machine's marker, so it
    stays raised (every edit reaches the check)."""
    from ..core.store import team

    return team.url() is not None


def auto_reserve(root: str) -> int:
    """The autoReserve setting, without parsing the settings files when neither mentions it
    (parsing TOML costs an edit's hook milliseconds; a file without the name cannot set it)."""
    from ..core import settings

    for file in (settings.legacy_path(root), settings.path(root)):
        try:
            with open(file, "rb") as fh:
                if b"autoReserve" in fh.read():
                    return int(settings.load(root)["autoReserve"])  # type: ignore[call-overload]
        except OSError:
            continue
    return 0


def settle(store: Store, now: float) -> bool:
    """Lower the marker when no reservation is active and autoReserve is off; True when it was
    lowered. Its own short write transaction: call it after the change that ended reservations
    has committed, never inside another write."""
    from . import leases

    root = store.root
    if not raised(root):
        return False
    with store.write() as conn:
        if leases.any_active(conn, now) or auto_reserve(root) or shared_store():
            return False
        try:
            os.unlink(path(root))
        except OSError:
            return False
    return True
