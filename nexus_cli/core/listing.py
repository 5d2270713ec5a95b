"""The one list envelope every listing returns: `total/count/offset/limit/truncated/next`, and
the one rule for request-id replays. Stdlib only."""

from __future__ import annotations

from typing import Any

from .errors import NexusError


def envelope(items: list[Any], total: int, offset: int, limit: int, key: str = "items",
             **extra: Any) -> dict[str, Any]:
    truncated = offset + len(items) < total
    return {"total": total, "count": len(items), "offset": offset, "limit": limit,
            "truncated": truncated,
            "next": f"--offset {offset + len(items)}" if truncated else None, **extra, key: items}


def replayed(prior: Any, same: bool, request_id: str, what: str) -> bool:
    """True when a request id was used before for the same content (return the original); an
    error when it was used for other content; False when it is new."""
    if prior is None:
        return False
    if same:
        return True
    raise NexusError("request_id_conflict", request_id,
                     f"it was already used for {what} {prior['id']} with other content",
                     f"use a new request id for a new {what}")
