"""Human output of the store tools."""

from __future__ import annotations

from typing import Any

from ..core.human import fields


def path(r: dict[str, Any]) -> str:
    return r["home"]


def version(r: dict[str, Any]) -> str:
    return f"nexus {r['version']} (contract {r['contract_version']})"


def maintenance(r: dict[str, Any]) -> str:
    return fields([("messages expired", r["expired"]), ("tasks failed (TTL)", r["tasks_expired"]),
                   ("sessions gone offline", r["sessions_retired"]),
                   ("stuck waiters cleared", r["waiters_cleared"]),
                   ("bindings purged", r["bindings_purged"]),
                   ("reservations ended", r["reservations_ended"]),
                   ("wake channels swept", r["channels_swept"])])


def config(r: dict[str, Any]) -> list | str:
    from ..core.human import Table

    rows = [[e["key"], str(e["value"]), e["source"], e["range"], e["meaning"]]
            for e in r["settings"]]
    return [Table(["key", "value", "from", "range", "meaning"], rows, wide=("meaning",)),
            f"file: {r['file']}"]


def setting(r: dict[str, Any]) -> str:
    return str(r["value"])


def changed(r: dict[str, Any]) -> str:
    how = "set in config.toml" if r["source"] == "file" else "unset: the default applies"
    return f"{r['key']} = {r['value']} ({how})"
