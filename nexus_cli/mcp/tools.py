"""One MCP tool call: the caller resolved from `_meta` and the process, the arguments checked, the
domain function run, and its result (or coded error) shaped for MCP. Stdlib only."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..core import caller, events, jsonstrict
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.registry import Tool, invoke, spec
from ..core.store.db import Store
from ..maintenance import expiry

ERROR_META = "nexus/error"  # the result's `_meta` key holding a failed call's structured error


def error_result(exc: NexusError) -> dict:
    """A tool execution error as every client accepts it: the coded text a model reads (control
    characters of an argument or a peer's text shown escaped, as on a terminal) and, for the
    programs that read it, the structured error in the result's `_meta`. Never in
    `structuredContent`: that must match the tool's output schema, and validating clients (the
    TypeScript SDK, the Inspector) check it even on an error."""
    return {"content": [{"type": "text", "text": exc.shown}], "isError": True,
            "_meta": {ERROR_META: exc.to_dict()}}


_STORE: list[Store] = []


def store() -> Store:
    """One store per server process, keeping a connection per worker thread."""
    if not _STORE:
        _STORE.append(Store(reuse=True))
    return _STORE[0]


def ok_result(result: dict) -> dict:
    return {"content": [{"type": "text", "text": jsonstrict.dumps(result, ensure_ascii=False)}],
            "structuredContent": result, "isError": False}


# the host's id of this tool call in `_meta`: Claude Code's, Codex's (both equal the tool use id
# the client's hooks see). A retry of the same call carries the same id.
CALL_IDS = ("claudecode/toolUseId", "callId")


def keyed(tool: Tool, args: dict, meta: Mapping[str, Any]) -> dict:
    """The arguments, with the host's tool-call id as the idempotency key of a tool that takes
    one (`request_id`: send, ask, delegate, reply ...) when the call gives none (seed 000): a
    retried identical call then returns the original with `duplicate: true`."""
    key = spec(tool)["inputSchema"]["properties"].get("request_id")
    if key is None or args.get("request_id") is not None:
        return args
    call_id = next((v for k in CALL_IDS if isinstance(v := meta.get(k), str)
                    and 0 < len(v) <= key.get("maxLength", len(v))), None)
    return args if call_id is None else {**args, "request_id": call_id}


class Cancelled(Exception):
    """The client cancelled the call before its result was handed over: nothing is consumed."""


def run_tool(tool: Tool, args: dict, meta: Mapping[str, Any], env: Mapping[str, str],
             ancestors: list, cancelled: threading.Event,
             reply: Callable[[dict], None]) -> dict | None:
    """The call's result, or None when it was already handed to `reply`: a tool that consumes
    (marks messages read) has its result written once it has committed (a COMMIT that fails
    answers with the error alone), and a client that is gone, or a stdout that fails, has what
    it consumed put back (`Ctx.hand_over`): everything stays unread."""
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
        result = invoke(tool, ctx, keyed(tool, args, meta))
    except Cancelled:
        return None
    except NexusError as exc:
        events.refused(ctx.store, exc, "mcp", tool=tool.name)
        return error_result(exc)
    return None if ctx.delivered else ok_result(result)
