"""A finished run's structured result (seed 001's shape): the assistant's text, tool calls and
results, changed files and run statistics, each field capped on its own so the JSON stays valid
(the whole stream stays in the run's output file). Stdlib only."""

from __future__ import annotations

import json
import os
import re

from ..core.settings import RUN_CALL_CHARS, RUN_CALLS_MAX, RUN_OUTPUT_MAX, RUN_RESULTS_MAX
from ..core.timefmt import human_duration

WROTE = re.compile(r"\b(wrote|written|write|writing|created|saved|save[sd]?)\b", re.IGNORECASE)
FILE_LIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/])")
ABSOLUTE = re.compile(r"(?:^|[\s`'\"(])/[\w.-]+/")


def cap(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    note = f" … [{len(text) - limit + 40} more characters in the run's output file]"
    return text[: limit - len(note)] + note, True


def landing(text: str, cwd: str, changes: list[dict]) -> dict | None:
    """When the answer says it wrote a file but names no absolute path: where to look."""
    if not WROTE.search(text) or ABSOLUTE.search(text):
        return None
    mentioned = sorted(set(FILE_LIKE.findall(text)))[:20]
    return {"hint": f"the answer mentions writing a file without an absolute path: relative "
                    f"paths are relative to the run's working folder {cwd}",
            "likely_dir": cwd, "mentioned_write": True,
            "paths_in_result": [os.path.join(cwd, p) for p in mentioned],
            "changed": [c["path"] for c in changes][:20]}


def build(parts: dict, cwd: str, started: float, ended: float, sandbox: str | None,
          session_id: str | None) -> dict:
    text = "\n\n".join(t.strip() for t in parts["texts"] if t.strip())
    assistant, text_cut = cap(text, RUN_OUTPUT_MAX)
    calls = []
    for call in parts["calls"][:RUN_CALLS_MAX]:
        shown = json.dumps(call["input"], ensure_ascii=False)
        shown, _ = cap(shown, RUN_CALL_CHARS)
        calls.append({"name": call["name"], "input": shown})
    results = []
    for res in parts["results"][-RUN_RESULTS_MAX:]:
        output, _ = cap(res["output"], RUN_CALL_CHARS)
        results.append({"name": res["name"], "output": output, "is_error": res["is_error"]})
    seen, changes = set(), []
    for change in parts["changes"]:
        path = os.path.join(cwd, change["path"])  # an absolute path stays as it is
        if path not in seen:
            seen.add(path)
            changes.append({"path": path, "kind": change["kind"]})
    by_id = {r["id"]: r["at"] for r in parts["results"]}
    tool_s = sum(max(0.0, by_id[c["id"]] - c["at"]) for c in parts["calls"] if c["id"] in by_id)
    total_s = max(0.0, ended - started)
    llm_s = parts["api_ms"] / 1000 if parts.get("api_ms") else max(0.0, total_s - tool_s)
    tokens = parts["tokens"]
    ttft = (parts["first_at"] - started) if parts["first_at"] else None
    hit_base = tokens["cache_read"] + tokens["input"]
    stats = {
        "session_id": session_id, "scope": "run", "rounds": parts["turns"] or 1,
        "steps": parts["steps"],
        "llm_time_ms": int(llm_s * 1000), "llm_time": human_duration(llm_s),
        "tool_time_ms": int(tool_s * 1000), "tool_time": human_duration(tool_s),
        "total_time_ms": int(total_s * 1000), "total_time": human_duration(total_s),
        "ttft_ms": int(ttft * 1000) if ttft is not None else None,
        "ttft": human_duration(ttft) if ttft is not None else None,
        "tokens_per_sec": round(tokens["output"] / llm_s, 1) if llm_s > 0 and tokens["output"]
        else None,
        "cache_hit_rate": round(tokens["cache_read"] / hit_base, 3) if hit_base else None,
        "input_tokens": tokens["input"], "output_tokens": tokens["output"],
        "cache_read_tokens": tokens["cache_read"], "cache_write_tokens": tokens["cache_write"],
        "reasoning_tokens": tokens["reasoning"],
    }
    out: dict = {
        "session_id": session_id, "assistant_text": assistant, "tool_calls": calls,
        "tool_results": results, "changes": changes, "stats": stats,
        "truncated": {"assistant_text": text_cut,
                      "tool_calls": len(parts["calls"]) > RUN_CALLS_MAX,
                      "tool_results": len(parts["results"]) > RUN_RESULTS_MAX},
        "tool_calls_total": len(parts["calls"]), "tool_results_total": len(parts["results"]),
        "sandbox": sandbox,
    }
    out["landing"] = landing(text, cwd, changes)
    return out


def _complete(client: str, events: list[tuple[float, dict]]) -> bool:
    """Whether the client's stream ended as a finished run's does (Claude Code: its `result`
    event; Codex: the last turn completed or failed)."""
    if client == "claude":
        return any(ev.get("type") == "result" for _, ev in events)
    ended = False
    for _, ev in events:
        if ev.get("type") == "turn.started":
            ended = False
        elif ev.get("type") in ("turn.completed", "turn.failed"):
            ended = True
    return ended


def recover(row) -> dict | None:
    """A run whose runner died: the fields of its finished record rebuilt from its output file
    when the client's stream there is complete (nothing of the answer is lost), else None."""
    from ..clients.claude import headless as claude
    from ..clients.codex import headless as codex

    reader = {"claude": claude, "codex": codex}.get(row["client"])
    if not row["output"] or reader is None:
        return None
    events: list[tuple[float, dict]] = []
    try:
        with open(row["output"], encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    at, event = json.loads(line)
                except (ValueError, TypeError):
                    continue  # a line cut short by the kill
                if isinstance(event, dict) and isinstance(at, (int, float)):
                    events.append((float(at), event))
    except OSError:
        return None
    if not events or not _complete(row["client"], events):
        return None
    parts = reader.read(events)
    session = row["session_id"] or (
        f"{row['client']}:{parts['session']}" if parts["session"] else None)
    ended = events[-1][0]
    built = build(parts, row["cwd"], row["started_at"] or row["created_at"], ended,
                  row["sandbox"], session)
    return {"status": "error" if parts["error"] else "done", "error": parts["error"],
            "result": json.dumps(built, ensure_ascii=False), "session_id": session,
            "finished_at": ended}
