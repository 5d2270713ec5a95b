"""Human output of runs, presets, policy, info and echo (peer text escaped)."""

from __future__ import annotations

from typing import Any

from ..core.human import Part, Table, ago, fields, page_footer, who
from ..core.text import block, one_line, visible


def run(r: dict[str, Any]) -> str:
    head = [("run", f"{r['id']} {r['status']}"), ("client", r["client"]),
            ("title", r["title"]), ("session", who(r["session"]) if r["session"]
                                     else r["session_id"]),
            ("preset", r["preset"]), ("sandbox", r["sandbox"]),
            ("approvals", "nexus (`nexus approvals`)" if r["approvals"] == "nexus" else None),
            ("task", r["task_id"]), ("waited", r["waited"]), ("error", r["error"])]
    out = [fields(head)]
    res = r.get("result")
    if res:
        if res["assistant_text"]:
            out.append("\n" + block(res["assistant_text"]))
        if res["changes"]:
            out.append("\nchanged: " + ", ".join(visible(c["path"], keep_lines=False)
                                                 for c in res["changes"]))
        st = res["stats"]
        out.append(f"\n{st['steps']} steps, {res['tool_calls_total']} tool calls, model "
                   f"{st['llm_time']}, tools {st['tool_time']}, {st['input_tokens']} in / "
                   f"{st['output_tokens']} out tokens")
    if r.get("landing"):
        out.append("note: " + visible(r["landing"]["hint"]))
    out.append("next: " + r["next"])
    return "\n".join(out)


def runs(r: dict[str, Any]) -> list[Part] | str:
    if not r["items"]:
        return "no runs"
    rows = [[i["id"], i["status"], i["client"], who(i["session"]) if i["session"] else "-",
             ago(i["created_at_epoch"]), i["waited"] or "-",
             one_line(i["title"] or i["error"] or "", 50)] for i in r["items"]]
    return [Table(["id", "status", "client", "session", "queued", "took", "title / error"], rows,
                  wide=("title / error",)), f"{r['active']} active; " + page_footer(r)]


def cancelled(r: dict[str, Any]) -> str:
    if not r["ok"]:
        return f"{r['error']}\nnext: {r['next']}"
    return "\n".join(filter(None, [f"{r['run_id']} cancelled (was {r['was']})", r["note"],
                                   "next: " + r["next"]]))


def presets(r: dict[str, Any]) -> list[Part]:
    rows = [[p["id"] + (" *" if p["id"] == r["default"] else ""), p["sandbox"] or "-",
             p["model"] or "-", one_line(p["broken"] or p["description"], 60)]
            for p in r["presets"]]
    return [Table(["id", "sandbox", "model", "description"], rows, wide=("description",)),
            f"* default; your own presets: {r['file']}"]


def preset(r: dict[str, Any]) -> str:
    return fields([("preset", r["preset"]), ("session", r["session_id"]),
                   ("from", r["source"]), ("note", r["note"]), ("next", r["next"])])


def preset_set(r: dict[str, Any]) -> str:
    where = f"session {r['session_id']}" if r["session_id"] else "new runs"
    return f"{where} use preset {r['preset']} (was {r['previous'] or '-'})\nnext: {r['next']}"


def _flags(flags: dict[str, list[str]]) -> str:
    return "; ".join(f"{k}: {' '.join(v) or '(its own settings)'}" for k, v in flags.items())


def policy(r: dict[str, Any]) -> str:
    return fields([("session", r["session_id"]), ("sandbox", r.get("sandbox") or
                                                  "the client's own settings"),
                   ("from", r["source"]), ("approvals", r.get("approvals")),
                   ("flags", _flags(r["flags"])), ("next", r["next"])])


def info(r: dict[str, Any]) -> str:
    clients = ", ".join(f"{k} {v or 'not found'}" for k, v in r["clients"].items())
    creds = ", ".join(k for k, v in r["credentials_set"].items() if v) or "none"
    return fields([("version", r["version"]), ("store", r["store"]),
                   ("runs", f"{r['runs_active']} active of at most {r['max_runs']}, "
                            f"{r['runs_total']} kept"),
                   ("approvals", f"{r['approvals_pending']} pending (routing: "
                                 f"{r['approvals']})"),
                   ("sessions", f"{r['sessions_live']} live"), ("clients", clients),
                   ("preset", r["default_preset"]),
                   ("sandbox", r["default_sandbox"] or "the client's own settings"),
                   ("credentials set", creds), ("settings", r["settings_file"])])


def echo(r: dict[str, Any]) -> str:
    return visible(r["text"])


def toolsets(r: dict[str, Any]) -> list[Part] | str:
    rows = [[i["client"], i["preset"], i["sandbox"] or "(client's)", " ".join(i["flags"]) or "-",
             ", ".join(i["allowed_tools"]) or "(client's)", ", ".join(i["refused_tools"]) or "-",
             f"{len(i['nexus_tools'])} ({i['nexus_tools_from']})"] for i in r["items"]]
    return [Table(["client", "preset", "tier", "flags", "allowed", "refused", "nexus tools"], rows,
                  wide=("flags",)),
            "\n".join(sorted({f"{i['client']}: {i['note']}" for i in r["items"]}))]
