"""Codex without a terminal (`codex exec --json`), as `nexus run` starts it: the command line for
a task, the sandbox tiers as `--sandbox`, and the JSON events read back into the parts of a run's
result. Stdlib only. Observed with 0.171.0 (tests/test_realclients.py).

`codex exec` always runs with approval `never` unless `--approve-for-me` is passed; with
approvals routed to nexus it is (and the tier goes in as `-c sandbox_mode=...`: exec refuses
`--sandbox` beside it), so an escalation under `workspace-write` reaches the
PermissionRequest hook (MCP calls under `workspace-write`/`read-only` reach it either way)."""

from __future__ import annotations

import json
import shlex

NAME = "codex"
TIERS = ("read-only", "workspace-write", "danger-full-access")
FLAGS_VAR = "NEXUS_CODEX_FLAGS"  # flags of the user's own, added to every run
# what flags of one's own may not set: what a run may do (its sandbox, approvals, profile,
# directories, rules, features) and where it runs; of the config overrides only the model's
NEXUS_OWN = ("-s", "--sandbox", "-p", "--profile", "--dangerously-bypass-approvals-and-sandbox",
             "--yolo", "--full-auto", "--approve-for-me", "--add-dir", "-C", "--cd", "--trust",
             "--ignore-rules", "--ignore-user-config", "--enable", "--disable", "--remote",
             "--remote-auth-token-env", "--oss", "--local-provider", "--json", "--worktree")


def binary(env: dict) -> str | None:
    import shutil

    return shutil.which(NAME, path=env.get("PATH"))


def refused_flag(words: list[str]) -> str | None:
    """The first of the user's own flags that sets what nexus sets (see NEXUS_OWN; a `-c`
    override other than the model's), or None. `-sVALUE`, `--x=VALUE` and `-c KEY=VALUE` are
    read as the client reads them."""
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        short = word[:2] if word[:1] == "-" and word[1:2] != "-" and len(word) > 2 else ""
        if name in NEXUS_OWN or short in NEXUS_OWN:
            return word
        if name in ("-c", "--config") or short == "-c":
            key = (value if eq and not short else word[2:] if short else
                   words[i + 1] if i + 1 < len(words) else "")
            if not key.strip().strip("'\"").startswith("model"):
                return word if eq or short else f"{word} {key}".strip()
    return None


def flags(sandbox: str | None, approvals: str) -> list[str]:
    """`--sandbox TIER`; with approvals routed to nexus `--approve-for-me`, which exec refuses
    beside `--sandbox`: the tier then goes in as the config override `sandbox_mode`."""
    if approvals == "nexus":
        return (["-c", f'sandbox_mode="{sandbox}"'] if sandbox else []) + ["--approve-for-me"]
    return ["--sandbox", sandbox] if sandbox else []


def command(exe: str, prompt: str, *, session: str | None, resume: str | None,
            sandbox: str | None, approvals: str, model: str | None, system: str | None,
            allowed_tools: list[str], env: dict) -> list[str]:
    argv = [exe, "exec", "--json", "--skip-git-repo-check", *flags(sandbox, approvals)]
    if model:
        argv += ["--model", model]
    if system:
        argv += ["-c", "developer_instructions=" + json.dumps(system)]
    argv += shlex.split(env.get(FLAGS_VAR, ""))
    # the prompt goes on standard input (`-`), never in argv: a task beginning with `-` is not
    # an option, and a prompt over Linux's 128 KiB argument limit still starts
    if resume:
        return [*argv, "resume", resume, "-"]
    return [*argv, "-"]


def run_env(env: dict) -> dict:
    return dict(env)


BYPASS = "--dangerously-bypass-hook-trust"


def approvals_blocker(env: dict, project: str) -> tuple[str, str] | None:
    """Why permission requests of a `codex exec --approve-for-me` run would not reach nexus
    (reason, next action), or None. Codex skips a hook the user has not reviewed, silently, and
    `--approve-for-me` then hands the request to Codex's own automatic reviewer: nexus's
    PermissionRequest hook must be installed and trusted (as `nexus doctor` reads it)."""
    from . import trust

    bypass = BYPASS in shlex.split(env.get(FLAGS_VAR, ""))
    found, how = trust.permission_hook(project, bypass)
    if how == trust.TRUSTED:
        return None
    if not found:
        return ("nexus's PermissionRequest hook is not installed for Codex",
                "run `nexus install codex --trust` at your terminal (or install, then review "
                "nexus's hooks in Codex: start `codex`, run /hooks); or run without "
                "--approvals nexus")
    why = {trust.CHANGED: "has changed since it was reviewed",
           trust.DISABLED: "is turned off in Codex's /hooks"}.get(how or "",
                                                                  "has not been reviewed")
    return (f"Codex has not trusted nexus's PermissionRequest hook ({found}): it {why}, so "
            "Codex would skip it and let its own reviewer decide",
            "run `nexus install codex --trust` at your terminal, or review nexus's hooks in "
            "Codex (start `codex` in a terminal, run /hooks and trust them; `nexus doctor` "
            "lists them); or run without --approvals nexus")


def read(events: list[tuple[float, dict]]) -> dict:
    out: dict = {"session": None, "texts": [], "calls": [], "results": [], "changes": [],
                 "steps": 0, "usage": {}, "error": None, "final": None, "turns": 0,
                 "first_at": None, "api_ms": None}
    for at, ev in events:
        kind = ev.get("type")
        if kind == "thread.started":
            out["session"] = ev.get("thread_id")
        elif kind == "turn.started":
            out["turns"] += 1
        elif kind == "turn.completed":
            usage = ev.get("usage") or {}
            for key, value in usage.items():
                if isinstance(value, int):
                    out["usage"][key] = out["usage"].get(key, 0) + value
        elif kind == "turn.failed":
            out["error"] = ((ev.get("error") or {}).get("message")) or "the turn failed"
        elif kind == "error":
            out["error"] = ev.get("message") or "error"
        elif kind in ("item.started", "item.completed"):
            item = ev.get("item") or {}
            itype = item.get("type")
            if itype in ("agent_message", "command_execution", "mcp_tool_call", "file_change") \
                    and out["first_at"] is None:
                out["first_at"] = at
            if kind == "item.started":
                if itype == "command_execution":
                    out["calls"].append({"id": item.get("id"), "name": "shell",
                                         "input": {"command": item.get("command")}, "at": at})
                elif itype == "mcp_tool_call":
                    out["calls"].append({"id": item.get("id"),
                                         "name": f"mcp__{item.get('server')}__{item.get('tool')}",
                                         "input": item.get("arguments") or {}, "at": at})
                continue
            if itype == "agent_message" and item.get("text"):
                out["steps"] += 1
                out["texts"].append(item["text"])
            elif itype == "command_execution":
                out["steps"] += 1
                out["results"].append({"id": item.get("id"), "name": "shell",
                                       "output": item.get("aggregated_output") or "",
                                       "is_error": item.get("exit_code") not in (0, None),
                                       "at": at})
            elif itype == "mcp_tool_call":
                out["steps"] += 1
                result, error = item.get("result"), item.get("error")
                text = ""
                if isinstance(result, dict):
                    text = "\n".join(c.get("text", "") for c in result.get("content") or []
                                     if isinstance(c, dict))
                out["results"].append({"id": item.get("id"),
                                       "name": f"mcp__{item.get('server')}__{item.get('tool')}",
                                       "output": text or (json.dumps(error) if error else ""),
                                       "is_error": bool(error), "at": at})
            elif itype == "file_change":
                for change in item.get("changes") or []:
                    if isinstance(change, dict) and isinstance(change.get("path"), str):
                        out["changes"].append({"path": change["path"],
                                               "kind": str(change.get("kind", "update"))})
    out["final"] = out["texts"][-1] if out["texts"] else None
    usage = out["usage"]
    out["tokens"] = {
        "input": int(usage.get("input_tokens") or 0),
        "output": int(usage.get("output_tokens") or 0),
        "cache_read": int(usage.get("cached_input_tokens") or 0),
        "cache_write": int(usage.get("cache_write_input_tokens") or 0),
        "reasoning": int(usage.get("reasoning_output_tokens") or 0),
    }
    return out
