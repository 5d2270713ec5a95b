"""What nexus knows about a running Claude Code (2.1.332, see contract/hook.json). Stdlib only.

- Session ids are lowercase UUIDs, the same in hook events, `CLAUDE_CODE_SESSION_ID` (set for
  hooks, the Bash tool and MCP servers; an MCP server's copy goes stale after /clear) and the
  transcript's file name.
- MCP calls carry `_meta["claudecode/toolUseId"]`, the `tool_use_id` its PreToolUse hook saw.
- The client process is `claude` (the native binary; `claude.exe` when started by its real
  name). Hooks run through `/bin/sh -c` with `CLAUDE_PID` set to it.
- An idle session wakes when an `asyncRewake` Stop hook exits 2 (its stderr becomes the prompt,
  after the hook definition's `rewakeMessage`; the terminal shows its `rewakeSummary`, else
  "Stop hook feedback"); a synchronous Stop hook's `additionalContext` continues the turn and
  shows as "Stop hook says: …" (`decision: block`: "Stop hook reported a problem"). Esc at the
  prompt leaves a background hook running; during a synchronous Stop hook it kills the hook;
  unattended `claude -p` runs (`CLAUDE_CODE_SESSION_ATTENDED=0`) wait for such hooks, so the
  idle wait must return at once there.
- Each running process keeps `<config dir>/sessions/<pid>.json` (what `claude agents --json`
  lists): `pid`, `sessionId` (the conversation it runs now), `procStart` (field 22 of
  /proc/<pid>/stat: the start time nexus records), `status` (`busy`, `idle`, `waiting`; the
  idle one written about a second after the turn ends), `waitingFor` (`permission prompt`,
  `dialog open`) and `statusUpdatedAt` (ms). A process killed with -9 leaves its file behind.
- A subagent's (Task tool's) hook events carry `agent_id` and `agent_type`; the commands its
  Bash tool runs see the very environment of the main conversation's."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping

from ...core.proctable import Proc, is_shell
from .. import is_uuid

NAME = "claude"
is_id = is_uuid  # the shape of its session ids
ENV_SESSION = ("CLAUDE_CODE_SESSION_ID",)
ENV_MARKERS = ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID")
META_BINDING = "claudecode/toolUseId"
WAKE = "rewake"  # exit 2 from the asyncRewake Stop hook


def is_client(proc: Proc) -> bool:
    """A process named as Claude Code is, that is not a shell so named (a link to /bin/sh)."""
    return (proc.name in ("claude", "claude.exe") or proc.name.startswith("claude-")) \
        and not is_shell(proc.pid)


def hook_client(chain: Iterable[Proc], env: Mapping[str, str]) -> Proc | None:
    """The Claude Code process that ran this hook: the nearest `claude` above it (CLAUDE_PID says
    the same; it counts only when it names an ancestor that is a Claude Code process)."""
    for proc in chain:
        if is_client(proc):
            return proc
    return None


def meta_session(meta: Mapping[str, object]) -> str | None:
    return None  # Claude Code names its conversation only through the tool-use binding


# its permission modes as sandbox tiers; `default` (and the others) ask or decide per call: no
# tier of their own
MODE_TIERS = {"plan": "read-only", "acceptEdits": "workspace-write",
              "bypassPermissions": "danger-full-access"}


def hook_tier(data: Mapping[str, object]) -> str | None:
    """The tier of a tool call as its hook event states it: the permission mode it runs in."""
    mode = data.get("permission_mode")
    return MODE_TIERS.get(mode) if isinstance(mode, str) else None


def meta_tier(meta: Mapping[str, object]) -> str | None:
    return None  # read from the tool-use binding (the PreToolUse hook's permission mode)


def unattended(env: Mapping[str, str]) -> bool:
    return env.get("CLAUDE_CODE_SESSION_ATTENDED") == "0"


def continue_turn(text: str) -> dict:
    """The Stop hook's reply that gives the model one more turn with `text`: context, which it
    shows as "Stop hook says: …" (`decision: block` shows as "Stop hook reported a problem")."""
    return {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": text}}


def listens_in_background(data: Mapping[str, object], env: Mapping[str, str]) -> bool:
    """Whether a listening session waits in its background Stop hook (asyncRewake), not in the
    synchronous one: a person's session, whose spinner would read "running Stop hooks…" and
    whose Esc would end the wait; an unattended `claude -p` waits for its async hooks, so it
    listens synchronously."""
    return not unattended(env)


def config_dir(transcript: str | None) -> str:
    """The Claude Code configuration folder a session's client uses: the one its transcript
    (`<dir>/projects/<slug>/<id>.jsonl`) lives in, else `$CLAUDE_CONFIG_DIR`, else ~/.claude."""
    if transcript:
        projects = os.path.dirname(os.path.dirname(transcript))
        if os.path.basename(projects) == "projects":
            return os.path.dirname(projects)
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")


def live(row: Mapping) -> tuple[str, str | None, float] | None:
    """(status, what it waits for, when that was said) as the running client says it of itself in
    its registry file, when that file is its very process's (pid and start time) and names this
    conversation; None when there is none to believe (nexus then goes by its hooks)."""
    pid = row["client_pid"]
    path = os.path.join(config_dir(row["transcript_path"]), "sessions", f"{pid}.json")
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read(1 << 16))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("pid") != pid \
            or data.get("sessionId") != row["id"].partition(":")[2] \
            or str(data.get("procStart")) != row["client_start"]:
        return None
    status, at = data.get("status"), data.get("statusUpdatedAt") or data.get("updatedAt")
    if not isinstance(status, str) or not isinstance(at, int | float) or isinstance(at, bool):
        return None
    waiting = data.get("waitingFor")
    return status, " ".join(waiting.split())[:200] if isinstance(waiting, str) else None, at / 1000


def turn_interrupted(row: Mapping) -> bool:
    """Whether the session's turn ended without its Stop hook (Esc): the client's registry says
    idle since the last hook event. An asyncRewake hook of an earlier turn still wakes the
    session then (measured)."""
    seen = live(row)
    return seen is not None and seen[0] == "idle" and seen[2] > row["last_active"]
