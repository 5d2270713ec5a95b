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
    """450 ms, 2.4 s, 12 s, 2 min, 1.5 h, 3 d: the way people read them."""
    seconds = max(0.0, seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h".replace(".0 h", " h")
    return f"{seconds / 86400:.1f} d".replace(".0 d", " d")
