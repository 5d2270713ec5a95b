"""The registry as MCP sees it: the served tools, their `tools/list` entries (from the compiled
schemas in contract/tools.json), and one call. Stdlib only."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..catalog import load
from ..core import caller, events
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.registry import Tool, chosen_groups, invoke, spec
from ..core.store.db import Store
from ..maintenance import expiry


def served(wanted: Iterable[str]) -> dict[str, Tool]:
    chosen = set(chosen_groups(",".join(wanted)))
    return {t.name: t for t in load().values() if t.mcp and t.group in chosen}


LISTED = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def entry(tool: Tool) -> dict:
    """The tool's `tools/list` entry: its contract entry, without the CLI-only fields, and with
    an input schema the model reads cheaply (every request of every session carries it)."""
    found = spec(tool)
    return {**{k: found[k] for k in LISTED}, "inputSchema": lean_input(found["inputSchema"])}


def lean_input(schema: Any) -> Any:
    """The input schema as listed: without string length bounds and a flag's `default: false`.
    Both still hold (the contract's schema is enforced, and a call past a bound gets an error
    naming it); a model needs them far less than it pays for them on every request."""
    if isinstance(schema, list):
        return [lean_input(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: lean_input(v) for k, v in schema.items()
            if not (k in ("minLength", "maxLength") and isinstance(v, int))
            and not (k == "default" and v is False)}


def listing(tools: Iterable[Tool]) -> list[dict]:
    return [entry(t) for t in tools]


def error_result(exc: NexusError) -> dict:
    # the text a model reads: control characters of an argument or a peer's text shown escaped,
    # as on a terminal (the structured error keeps the exact values)
    return {"content": [{"type": "text", "text": exc.shown}],
            "structuredContent": {"error": exc.to_dict()}, "isError": True}


_STORE: list[Store] = []


def store() -> Store:
    """One store per server process, keeping a connection per worker thread."""
    if not _STORE:
        _STORE.append(Store(reuse=True))
    return _STORE[0]


def ok_result(result: dict) -> dict:
    return {"content": [{"type": "text", "text": json.dumps(result, ensure_ascii=False)}],
            "structuredContent": result, "isError": False}


class Cancelled(Exception):
    """The client cancelled the call before its result was handed over: nothing is consumed."""


def run_tool(tool: Tool, args: dict, meta: Mapping[str, Any], env: Mapping[str, str],
             ancestors: list, cancelled: threading.Event,
             reply: Callable[[dict], None]) -> dict | None:
    """The call's result, or None when it was already handed to `reply`: a tool that consumes
    (marks messages read) has its result written before its COMMIT, so that a client that is
    gone, or a stdout that fails, leaves everything unread."""
    cwd = os.getcwd()

    def resolve(conn: Any, now: float) -> caller.Caller:
        me = caller.resolve_mcp(conn, now, meta, env, ancestors, cwd)
        if me.agent and not tool.read_only:
            raise NexusError(
                "subagent_refused", tool.name,
                f"called from a subagent (Task tool) of {me.id}: nexus acts for the "
                "conversation that owns the inbox, and what a subagent did here would never "
                "reach it", "hand what you found back to the main agent; it can call "
                f"{tool.name} itself (reading tools such as peers and status work here)")
        return me

    def deliver(result: dict) -> None:
        if cancelled.is_set():
            raise Cancelled
        reply(ok_result(result))

    ctx = Ctx(store(), resolve, face="mcp", upkeep=expiry.LAZY, deliver=deliver)
    ctx.cancelled = cancelled
    try:
        result = invoke(tool, ctx, args)
    except Cancelled:
        return None
    except Exception as exc:
        if ctx.delivered:  # answered, then the COMMIT failed: nothing was consumed, and a call
            log_failure(tool.name, exc)  # gets one response (it may see those messages again)
            return None
        if not isinstance(exc, NexusError):
            raise
        events.refused(ctx.store, exc, "mcp", tool=tool.name)
        return error_result(exc)
    return None if ctx.delivered else ok_result(result)


def log_failure(name: str, exc: BaseException) -> None:
    import sys

    sys.stderr.write(f"nexus mcp: {name} answered, then failed to commit ({exc}); nothing was "
                     "consumed\n")
