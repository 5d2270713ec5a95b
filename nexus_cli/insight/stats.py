"""`nexus stats`: rounds, steps, model and tool time, time to first token, tokens and cache use
of a session, from its whole transcript (seed 001's session_stats). Stdlib only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..clients import transcript as common
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.timefmt import human_duration
from . import locate
from .log import provenance, session_info

if TYPE_CHECKING:
    from .models import StatsArgs


def aggregate(events: Iterable[dict]) -> dict:
    """The numbers of one transcript's events (one pass, memory for open tool calls only)."""
    calls: dict[str, float | None] = {}
    intervals: list[tuple[float, float]] = []
    n = {"rounds": 0, "steps": 0, "user": 0, "assistant": 0, "calls": 0, "tool_errors": 0,
         "compactions": 0, "errors": 0}
    tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    llm_ms = 0
    ttft: list[float] = []
    turn_ttft = False  # Codex records time to first token per turn, Claude per step
    models: dict[str, None] = {}
    for ev in events:
        t = ev["type"]
        if t == "turn/end":
            n["rounds"] += 1
            if ev.get("error"):
                n["errors"] += 1
            if isinstance(ev.get("ttft_ms"), int | float):
                turn_ttft = True
                ttft.append(float(ev["ttft_ms"]))
        elif t == "usage":
            n["steps"] += 1
            for k in tokens:
                tokens[k] += (ev.get("usage") or {}).get(k, 0)
            llm_ms += ev.get("llm_ms") or 0
            if isinstance(ev.get("ttft_ms"), int | float) and not turn_ttft:
                ttft.append(float(ev["ttft_ms"]))
            if ev.get("model"):
                models[ev["model"]] = None
        elif t == "user/message":
            n["user"] += 1
        elif t == "assistant/message":
            n["assistant"] += 1
        elif t == "tool/call":
            n["calls"] += 1
            if ev.get("call_id"):
                calls[ev["call_id"]] = ev.get("time_epoch")
        elif t == "tool/result":
            if ev.get("is_error"):
                n["tool_errors"] += 1
            cid = ev.get("call_id")
            started = calls.pop(cid, None) if isinstance(cid, str) else None
            if started is not None and ev.get("time_epoch") is not None:
                intervals.append((started, max(started, ev["time_epoch"])))
        elif t == "compaction":
            n["compactions"] += 1
    tool_s = 0.0
    cur: list[float] | None = None
    for a, b in sorted(intervals):  # the union: parallel calls are counted once
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                tool_s += cur[1] - cur[0]
            cur = [a, b]
    if cur:
        tool_s += cur[1] - cur[0]
    avg = sum(ttft) / len(ttft) if ttft else None
    return {
        "rounds": n["rounds"], "steps": n["steps"], "user_messages": n["user"],
        "assistant_messages": n["assistant"], "tool_calls": n["calls"],
        "tool_errors": n["tool_errors"], "compactions": n["compactions"], "errors": n["errors"],
        "llm_time_ms": llm_ms, "llm_time_human": human_duration(llm_ms / 1000),
        "tool_time_ms": round(tool_s * 1000), "tool_time_human": human_duration(tool_s),
        "ttft_ms": round(avg, 1) if avg is not None else None,
        "ttft_human": human_duration(avg / 1000) if avg is not None else None,
        "ttft_samples": len(ttft),
        "tokens_per_sec": round(tokens["output"] / (llm_ms / 1000), 1) if llm_ms else None,
        "cache_hit_rate": round(tokens["cache_read"] / tokens["input"], 3)
        if tokens["input"] else None,
        "input_tokens": tokens["input"], "output_tokens": tokens["output"],
        "cache_read_tokens": tokens["cache_read"], "cache_write_tokens": tokens["cache_write"],
        "reasoning_tokens": tokens["reasoning"], "models": list(models),
    }


def of_file(path: str, client: str) -> tuple[dict, dict, dict]:
    """(numbers, reader metadata, reader counts) of one transcript."""
    reader = locate.READERS[client].reader()
    numbers = aggregate(common.read_all(path, reader))
    return numbers, reader.meta, reader.counts


def stats(ctx: Ctx, a: StatsArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        loc = locate.resolve(conn, me, a.target, ctx.now, a.all_workspaces)
        path = loc.require(a.target or "TARGET")
        try:
            prov = provenance(loc, path, ctx.now)
            numbers, meta, counts = of_file(path, loc.client)
        except OSError as exc:
            raise NexusError("transcript_not_found", a.target or loc.session_id,
                             f"{path}: {exc.strerror or exc}",
                             "check the file (its permissions; only a regular file is read); "
                             "nothing was changed") from None
        info = session_info(conn, loc, meta)
    return {"session": info, "provenance": prov, **numbers,
            "first_at_epoch": meta.get("started_epoch"), "last_at_epoch": meta.get("last_epoch"),
            "counts": counts}
