"""The store tools: where it lives, and maintenance on demand."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import render, upkeep

register(Tool(
    name="path", group="store", title="Where the store lives",
    description="Print the store directory (set NEXUS_HOME to move it); --json adds the database "
    "file and its schema.",
    args="NoArgs", result="PathResult", run=upkeep.store_path, render=render.path,
    read_only=True, idempotent=True, mcp=False, needs_caller=False,
))
register(Tool(
    name="maintenance", group="store", title="Run maintenance now",
    description="Expire unread messages older than 24 h (notifying their senders), clear "
    "sessions stuck listening after their waiter exited, purge old tool-use bindings. Normal "
    "commands do this lazily; this does it now. Also migrates an older store.",
    args="NoArgs", result="MaintenanceResult", run=upkeep.maintenance, render=render.maintenance,
    destructive=True, idempotent=True, mcp=False, needs_caller=False,
))
