"""Argument and result models of the activity log (compiled into contract/tools.json)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..core.models import Args, Epoch, Page, Result, Stamp


class EventsArgs(Args):
    action: str | None = Field(None, max_length=100, description="Only this action "
                               "(`meeting.end`) or this prefix (`meeting`, `security`).")
    limit: int = Field(20, ge=1, le=500, description="How many, newest first (1-500).")
    offset: int = Field(0, ge=0, description="Skip this many.")


class Event(Result):
    seq: int
    timestamp: str | None = Stamp("When it happened")
    timestamp_epoch: float | None = Epoch("When it happened")
    actor: str = Field(description="Who did it: a session id, or the process that tried.")
    action: str
    target: str | None
    detail: Any = Field(description="What else was recorded (an object), if anything.")


class EventsResult(Page):
    events: list[Event]
