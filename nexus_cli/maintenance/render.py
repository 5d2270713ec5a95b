"""Human output of the store tools."""

from __future__ import annotations

from typing import Any

from ..core.human import fields


def path(r: dict[str, Any]) -> str:
    return r["home"]


def maintenance(r: dict[str, Any]) -> str:
    return fields([("messages expired", r["expired"]), ("tasks failed (TTL)", r["tasks_expired"]),
                   ("stuck waiters cleared", r["waiters_cleared"]),
                   ("bindings purged", r["bindings_purged"]),
                   ("wake channels swept", r["channels_swept"])])
