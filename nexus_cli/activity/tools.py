"""The activity log's tool."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import log, render

register(Tool(
    name="list_events", group="workspace", title="The activity log",
    description="What happened, newest first: who did what to what. Filter by an exact action "
    "or a prefix (`security` lists refused impersonations and forged hook events).",
    args="EventsArgs", result="EventsResult", run=log.events, render=render.events,
    command=("events",), read_only=True, idempotent=True,
    example="nexus events --limit 20",
))
