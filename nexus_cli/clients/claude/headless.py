"""Claude Code without a terminal (`claude -p`), as `nexus run` starts it: the command line for a
task, the sandbox tiers as permission modes and rules, and the stream-json events read back into
the parts of a run's result. Stdlib only. Observed with 2.1.332 (tests/test_realclients.py).

Tiers: `read-only` keeps the default permission mode and refuses Write, Edit and NotebookEdit
(a shell command asks, and in a headless run an unanswered request is denied); `workspace-write`
is `acceptEdits` (edits in the working folder go through, a shell command asks);
`danger-full-access` is `bypassPermissions`. With approvals routed to nexus, what asks reaches
`nexus approvals` through the PermissionRequest hook."""

from __future__ import annotations

import os
import shlex

NAME = "claude"
TIERS = {
    "read-only": ["--permission-mode", "default", "--disallowedTools", "Write", "Edit",
                  "NotebookEdit"],
    "workspace-write": ["--permission-mode", "acceptEdits"],
    "danger-full-access": ["--permission-mode", "bypassPermissions"],
}
WRITERS = ("Write", "Edit", "NotebookEdit")
FLAGS_VAR = "NEXUS_CLAUDE_FLAGS"  # flags of the user's own, added to every run
# what flags of one's own may not set: what a run may do (its permissions, tools, directories,
# settings, hooks) and which conversation it is (nexus chooses both)
NEXUS_OWN = ("--permission-mode", "--dangerously-skip-permissions",
             "--allow-dangerously-skip-permissions", "--allowedTools", "--allowed-tools",
             "--tools", "--add-dir", "--settings", "--setting-sources", "--permission-prompt-tool",
             "--permission-prompts", "--mcp-config", "--strict-mcp-config", "--plugin-dir",
             "--plugin-url", "--agent", "--agents", "--bare", "--resume", "-r", "--continue",
             "-c", "--session-id", "--fork-session", "--from-pr", "--teleport", "--remote-control",
             "--cloud", "--environment", "--bg", "--background", "-p", "--print",
             "--output-format", "--input-format")


def binary(env: dict) -> str | None:
    import shutil

    return shutil.which(NAME, path=env.get("PATH"))


def refused_flag(words: list[str]) -> str | None:
    """The first of the user's own flags that sets what nexus sets (see NEXUS_OWN), or None."""
    for word in words:
        short = word[:2] if word[:1] == "-" and word[1:2] != "-" and len(word) > 2 else ""
        if word.split("=", 1)[0] in NEXUS_OWN or short in NEXUS_OWN:
            return word
    return None


def flags(sandbox: str | None, approvals: str) -> list[str]:
    """The permission flags for a tier (none: the user's own Claude Code settings decide)."""
    return list(TIERS[sandbox]) if sandbox else []


def command(exe: str, prompt: str, *, session: str | None, resume: str | None,
            sandbox: str | None, approvals: str, model: str | None, system: str | None,
            allowed_tools: list[str], env: dict) -> list[str]:
    """The command line; the prompt goes on standard input (`-p` with no prompt argument reads
    it there), never in argv: a task beginning with `-` is not an option, and a prompt over
    Linux's 128 KiB argument limit still starts. `prompt` is not used here."""
    argv = [exe, "-p", "--output-format", "stream-json", "--verbose"]
    if resume:
        argv += ["--resume", resume]
    elif session:
        argv += ["--session-id", session]
    argv += flags(sandbox, approvals)
    if model:
        argv += ["--model", model]
    if system:
        argv += ["--append-system-prompt", system]
    if allowed_tools:
        argv += ["--allowedTools", *allowed_tools]
    return argv + shlex.split(env.get(FLAGS_VAR, ""))


def approvals_blocker(env: dict, project: str) -> tuple[str, str] | None:
    """Claude Code runs its hooks unreviewed; without nexus's PermissionRequest hook a request
    of `claude -p` is denied (never allowed), so nothing blocks a run here."""
    return None


def run_env(env: dict) -> dict:
    """A headless run is unattended: its idle wait returns at once (see runtime.unattended)."""
    return {**env, "CLAUDE_CODE_SESSION_ATTENDED": "0"}


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(c.get("text", "")) if isinstance(c, dict) else str(c)
                         for c in content)
    return "" if content is None else str(content)


def read(events: list[tuple[float, dict]]) -> dict:
    """The run's parts from its stream-json events (each with the time it arrived)."""
    out: dict = {"session": None, "texts": [], "calls": [], "results": [], "changes": [],
                 "steps": 0, "usage": {}, "error": None, "final": None, "turns": None,
                 "first_at": None, "api_ms": None}
    names: dict[str, str] = {}
    for at, ev in events:
        kind = ev.get("type")
        init = kind == "system" and ev.get("subtype") == "init" and ev.get("session_id")
        if init or (not out["session"] and isinstance(ev.get("session_id"), str)):
            out["session"] = ev["session_id"]
        if kind == "assistant":
            msg = ev.get("message") or {}
            out["steps"] += 1
            if out["first_at"] is None:
                out["first_at"] = at
            for block in msg.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and block.get("text"):
                    out["texts"].append(block["text"])
                elif block.get("type") == "tool_use":
                    names[block.get("id", "")] = block.get("name", "")
                    tool_input = block.get("input") or {}
                    out["calls"].append({"id": block.get("id"), "name": block.get("name", ""),
                                         "input": tool_input, "at": at})
                    path = tool_input.get("file_path") or tool_input.get("notebook_path")
                    if block.get("name") in WRITERS and isinstance(path, str):
                        out["changes"].append({"path": path, "kind": block["name"].lower()})
        elif kind == "user":
            for block in (ev.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tid = block.get("tool_use_id", "")
                    out["results"].append({"id": tid, "name": names.get(tid, ""),
                                           "output": _text(block.get("content")),
                                           "is_error": bool(block.get("is_error")), "at": at})
        elif kind == "result":
            out["final"] = ev.get("result") if isinstance(ev.get("result"), str) else None
            out["usage"] = ev.get("usage") or {}
            out["turns"] = ev.get("num_turns")
            out["api_ms"] = ev.get("duration_api_ms")
            if ev.get("is_error") or (ev.get("subtype") or "success") != "success":
                out["error"] = out["final"] or ev.get("subtype") or "the run ended in error"
    usage = out["usage"]
    out["tokens"] = {
        "input": int(usage.get("input_tokens") or 0),
        "output": int(usage.get("output_tokens") or 0),
        "cache_read": int(usage.get("cache_read_input_tokens") or 0),
        "cache_write": int(usage.get("cache_creation_input_tokens") or 0),
        "reasoning": 0,
    }
    return out


def absolute(path: str, cwd: str) -> str:
    return path if os.path.isabs(path) else os.path.join(cwd, path)
