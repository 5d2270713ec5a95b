"""Timestamps and durations as people and programs read them. Stdlib only."""

from __future__ import annotations

from datetime import datetime


def iso(epoch: float | None) -> str | None:
    """ISO 8601 in the local zone with an explicit offset, to the second."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


def stamp(obj: object) -> object:
    """Add `<name>` (ISO) beside every `<name>_epoch` key, recursively."""
    if isinstance(obj, dict):
        out = {k: stamp(v) for k, v in obj.items()}
        for k, v in obj.items():
            if k.endswith("_epoch") and k[:-6] not in obj:
                out[k[:-6]] = iso(v)
        return out
    if isinstance(obj, list):
        return [stamp(v) for v in obj]
    return obj


def human_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s".replace(".0s", "s")
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    if seconds < 86400:
        return f"{seconds / 3600:.1f}h".replace(".0h", "h")
    return f"{seconds / 86400:.1f}d".replace(".0d", "d")
