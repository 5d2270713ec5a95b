"""Human output of session insight, and the board's frame as plain lines that fit a width. Every
text that came from a transcript or a peer is escaped (`core.text`)."""

from __future__ import annotations

import json
import time
from typing import Any

from ..core.human import Part, Table, ago, fields, home_short, page_footer, plural
from ..core.text import cut_columns, one_line, pad, visible
from ..core.text import width as text_width
from ..core.timefmt import human_duration

LABEL = {"user/message": "user", "assistant/message": "assistant", "tool/call": "tool",
         "tool/result": "result", "turn/end": "turn end", "turn/start": "turn start",
         "usage": "usage", "compaction": "compaction", "system": "system", "error": "error"}


def who(s: dict[str, Any]) -> str:
    name = s.get("name")
    head = f"{one_line(name)} ({s['handle']})" if name else s["id"]
    return head + (f": {one_line(s['title'], 70)}" if s.get("title") else "")


def _event_line(e: dict[str, Any]) -> str:
    t = e["type"]
    label = LABEL.get(t, t)
    if t == "tool/call":
        args = json.dumps(e.get("args"), ensure_ascii=False, default=str) if e.get("args") \
            is not None else ""
        body = f"{e.get('tool') or '?'} {args}"
    elif t == "tool/result":
        label = "result!" if e.get("is_error") else "result"
        body = e.get("text") or ""
    elif t == "usage":
        u = e.get("usage") or {}
        body = f"{u.get('input', 0):,} in, {u.get('output', 0):,} out" + (
            f", {e['llm_ms']:.0f} ms" if e.get("llm_ms") is not None else "")
    elif t == "turn/end":
        body = " ".join(x for x in (
            f"{human_duration(e['duration_ms'] / 1000)}" if e.get("duration_ms") else "",
            f"aborted: {e['aborted']}" if e.get("aborted") else "",
            f"error: {e['error']}" if e.get("error") else "") if x)
    else:
        body = e.get("text") or e.get("subtype") or ""
    when = f"{ago(e['time_epoch'])}  " if e.get("time_epoch") is not None else ""
    text = visible(body).rstrip()
    lines = text.splitlines() or [""]
    if len(lines) > 12:
        lines = [*lines[:12], f"… ({plural(len(lines) - 12, 'more line')})"]
    first = f"{e['seq']:>5}  {when}{label:<10} {lines[0]}"
    return "\n".join([first, *("                  " + x for x in lines[1:])])


def log(r: dict[str, Any]) -> str:
    p = r["provenance"]
    source = "from its hooks" if p["path_source"] == "hook" else "found by its id"
    head = [who(r["session"]),
            f"transcript {visible(p['transcript_path'], keep_lines=False)} ({source}; changed "
            f"{ago(p['transcript_mtime_epoch'])}; matched by {p['resolved_by']})"]
    body = [_event_line(e) for e in r["events"]] or ["(no matching events)"]
    if r["order"] == "head+tail" and r["omitted"] and 0 < r["head_shown"] < len(body):
        body.insert(r["head_shown"], f"    … {plural(r['omitted'], 'more event')} …")
    total = plural(r["total"], "event") if r["total_exact"] else \
        f"at least {plural(r['total'], 'event')}"
    foot = f"{r['shown']} of {total} ({', '.join(r['types'])})"
    if r["next"]:
        foot += f"; {r['next']}"
    counts = r["counts"]
    skipped = [f"{counts[k]} {word}" for k, word in (("unknown", "unknown"),
               ("malformed", "malformed"), ("oversize", "over-long")) if counts.get(k)]
    if skipped:
        n = sum(counts.get(k, 0) for k in ("unknown", "malformed", "oversize"))
        foot += f"; skipped {plural(n, 'record')} ({', '.join(skipped)})"
    return "\n".join([*head, "", *body, "", foot, p["warning"]])


def sessions(r: dict[str, Any]) -> list[Part] | str:
    if not r["items"]:
        return "no sessions in scope (try --all-workspaces)" + (
            f"; {plural(r['skipped'], 'transcript')} could not be read" if r["skipped"] else "")
    rows = []
    for s in r["items"]:
        tokens = (f"{s['input_tokens']:,}/{s['output_tokens']:,}"
                  if s["input_tokens"] is not None else "-")
        rows.append([s["title"] or "-", s["handle"] or s["id"].split(":", 1)[1][:13],
                     s["client"], s["status"] or "-", ago(s["updated_at_epoch"]),
                     "-" if s["message_count"] is None else str(s["message_count"]), tokens,
                     s["llm_time_human"] or "-", home_short(s["cwd"] or "")])
    table = Table(["title", "session", "client", "status", "active", "msgs", "tokens in/out",
                   "llm", "cwd"], rows, wide=("title", "cwd"))
    foot = page_footer(r) + (f"; {plural(r['skipped'], 'transcript')} could not be read"
                             if r["skipped"] else "")
    return [table, foot]


def stats(r: dict[str, Any]) -> str:
    rate = f"{r['cache_hit_rate'] * 100:.0f}%" if r["cache_hit_rate"] is not None else None
    return "\n".join([who(r["session"]), fields([
        ("rounds", r["rounds"]), ("steps", r["steps"]),
        ("messages", f"{r['user_messages']} user, {r['assistant_messages']} assistant"),
        ("tool calls", f"{r['tool_calls']} ({r['tool_errors']} failed)"),
        ("model time", r["llm_time_human"]), ("tool time", r["tool_time_human"]),
        ("first token", f"{r['ttft_human']} on average ({plural(r['ttft_samples'], 'sample')})"
         if r["ttft_human"] else None),
        ("tokens/s", r["tokens_per_sec"]),
        ("tokens", f"{r['input_tokens']:,} in ({r['cache_read_tokens']:,} cached, "
                   f"{r['cache_write_tokens']:,} written to cache), {r['output_tokens']:,} out "
                   f"({r['reasoning_tokens']:,} reasoning)"),
        ("cache hits", rate), ("compactions", r["compactions"] or None),
        ("errors", r["errors"] or None), ("models", ", ".join(r["models"]) or None),
        ("transcript", r["provenance"]["transcript_path"]),
    ])])


def search(r: dict[str, Any]) -> str:
    out = []
    for h in r["results"]:
        head = (f"{one_line(h['name'])} ({h['handle']})" if h["name"] else h["session_id"])
        title = f": {one_line(h['title'], 70)}" if h["title"] else ""
        extra = f"; {plural(h['hits'], 'hit')}" if h["hits"] else ""
        if h["timed_out"]:
            extra += " (time limit: partial)"
        out.append(f"{head}{title}  [{h['matched']}{extra}; {ago(h['updated_at_epoch'])}]")
        out.append(f"  id {h['session_id']}")
        for s in h["snippets"]:
            out.append(f"  {s['seq']:>5} {LABEL.get(s['type'], s['type']):<9} "
                       f"{one_line(s['snippet'], 160)}")
    ix = r["index"]
    how = ("index " + ("current" if ix["was_current"] else
                       f"brought up to date ({plural(ix['updated_sessions'], 'session')})"
                       if ix["current"] else "partly current: the rest was scanned")
           if ix["used"] else f"scanned without the index ({ix['reason']})")
    out.append(f"{r['matched']} of {plural(r['total'], 'session')} matched "
               f"({plural(r['hits'], 'hit')}; {how})"
               + (f"; next page: {r['next']}" if r["next"] else ""))
    if r.get("timed_out_sessions"):
        ids = r["timed_out_sessions"]
        out.append("cut short by the time limit: " + ", ".join(ids[:10])
                   + (f" and {len(ids) - 10} more" if len(ids) > 10 else ""))
    out.append(r["hint"])
    return "\n".join(out)


def rename(r: dict[str, Any]) -> str:
    was = f" (was {one_line(r['previous'])!s})" if r["previous"] else ""
    return f"{r['session_id']} is now titled {one_line(r['title'])}{was}\n{r['note']}"


def _ref(p: dict[str, Any]) -> str:
    return f"{one_line(p['name'])} ({p['handle']})"


def waits(r: dict[str, Any]) -> str:
    lines = []
    for e in r["edges"]:
        lines.append(f"{_ref(e['from'])} waits on {_ref(e['to'])}: {e['kind']} {e['id']} "
                     f"({ago(e['since_epoch'])}) {one_line(e['text'], 60)}")
    if not r["edges"]:
        lines.append("nobody waits on anybody")
    for d in r["deadlocks"]:
        names = {p["id"]: _ref(p) for p in d["sessions"]}
        loop = " -> ".join(names.get(s, s) for s in d["cycle"])
        lines.append(f"DEADLOCK{'' if d['blocked'] else ' (one still works)'}: {loop}")
    if r["would_deadlock"] is not None:
        lines.append("waiting on it would close a cycle: " + " -> ".join(r["would_cycle"] or [])
                     if r["would_deadlock"] else "waiting on it closes no cycle")
    lines.append(r["note"])
    return "\n".join(lines)


# -- the board ------------------------------------------------------------------------------------


def fit(headers: list[str], rows: list[list[str]], width: int,
        shrink: tuple[int, ...]) -> list[str]:
    """Aligned columns within `width`: the `shrink` columns give up room (cut with …)."""
    cells = [[visible(c, keep_lines=False) for c in r] for r in [headers, *rows]]
    widths = [max(text_width(r[i]) for r in cells) for i in range(len(headers))]
    floor = {i: max(4, min(len(headers[i]), 8)) for i in shrink}
    while sum(widths) + 2 * (len(widths) - 1) > width:
        candidates = [i for i in shrink if widths[i] > floor[i]]
        if not candidates:
            break
        i = max(candidates, key=lambda j: widths[j])
        widths[i] -= 1
    out = []
    for r in cells:
        parts = []
        for i, c in enumerate(r):
            parts.append(pad(cut_columns(c, max(2, widths[i])), widths[i]))
        out.append(cut_columns("  ".join(parts).rstrip(), width, ""))
    return out


def doing(s: dict[str, Any], now: float) -> str:
    if s["status"] == "offline":
        return "-"
    if s["status"] == "waiting":  # short: the board's cell; `nexus status` says all of it
        return one_line(f"waits for {s.get('waiting_for') or 'a person'}", 36)
    if s["tool"] and s["tool_running"] and s["tool_since_epoch"]:
        return f"{s['tool']} {human_duration(now - s['tool_since_epoch'])}"
    if s["status"] == "working":
        since = s["transcript_epoch"] or s["last_active_epoch"]
        last = f"after {s['tool']}" if s["tool"] else "thinking"
        return f"{last} {human_duration(now - since)}" if since else last
    if s["status"] == "listening":
        return "waits for mail"
    idle = f"idle {human_duration(now - s['last_active_epoch'])}"
    return idle + (", no wake" if s.get("wakeable") is False else "")


def cut(lines: list[str], width: int) -> list[str]:
    return [cut_columns(line, width) for line in lines]


def board_lines(snap: dict[str, Any], width: int, now: float | None = None,
                numbered: bool = False) -> list[str]:
    """The board as plain lines, none longer than `width` (`numbered`: keys pick sessions)."""
    now = time.time() if now is None else now
    scope = "all projects" if snap["all_workspaces"] else home_short(snap["project"])
    lines = cut([f"nexus board: {plural(len(snap['sessions']), 'session')} in {scope}"], width)
    rows = []
    for n, s in enumerate(snap["sessions"], 1):
        answer = one_line(s["answer"] or "", 200)
        key = f"{n}." if numbered and n < 10 else ""
        rows.append([key + ("*" if s["self"] else "") + (s["name"] or s["id"]), s["client"],
                     s["status"], doing(s, now), str(s["unread"]),
                     f"{s['owns']}/{s['waits_on']}", answer or "-"])
    if rows:
        lines += fit(["session", "client", "status", "doing", "in", "tasks", "last answer"], rows,
                     width, shrink=(0, 3, 6))
        lines += cut(["in: unread messages; tasks: open tasks it owns/waits on"], width)
    else:
        lines.append("no sessions in scope (--all-workspaces, --include-offline)"[:width])
    w = snap["waits"]
    lines.append("")
    lines.append("who waits on whom"[:width])
    names = {n["id"]: n["name"] for n in w["nodes"]}
    for e in w["edges"]:
        text = (f"  {one_line(e['from']['name'])} -> {one_line(e['to']['name'])}  {e['kind']} "
                f"{e['id']}  {ago(e['since_epoch'])}  {one_line(e['text'])}")
        lines.append(text if len(text) <= width else text[: width - 1] + "…")
    if not w["edges"]:
        lines.append("  nobody waits on anybody"[:width])
    for d in w["deadlocks"]:
        loop = " -> ".join(one_line(names.get(s, s)) for s in d["cycle"])
        text = f"  DEADLOCK{'' if d['blocked'] else ' (one still works)'}: {loop}"
        lines.append(text if len(text) <= width else text[: width - 1] + "…")
    return lines


def focus_lines(log: dict[str, Any], width: int) -> list[str]:
    out = ["", f"log of {one_line(log['name'] or log['session_id'])} ({home_short(log['path'])})"]
    for e in log["events"]:
        out += _event_line(e).splitlines()[:3]
    return cut(out, width)
