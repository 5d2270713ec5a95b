"""What nexus knows about a running Codex (0.171.0, see contract/hook.json). Stdlib only.

- Session (thread) ids are lowercase UUIDs (v7: the first 12 hex digits are a timestamp, which
  threads started together share; a handle is cut from the random digits instead).
- Hooks get only `CODEX_HOME`; the session id comes from stdin. The shell tool gets
  `CODEX_SESSION_ID` and `CODEX_THREAD_ID` (both the thread id), plus `CODEX_CI`.
- MCP calls carry `_meta.sessionId`, `threadId` and `x-codex-turn-metadata.session_id`.
- The client process is the native `codex` binary (below a `node codex.js` launcher); it runs
  hooks and the shell tool directly.
- An idle thread wakes through `codex queue --thread <id> --message <text>`, picked up by the
  running app at its next poll. A Stop hook's `decision: block` continues the turn, shown as
  "Blocked by hook" (no other reply does). The rollout's first line says who runs the thread
  (`source`: `cli` for the TUI, `exec` for `codex exec`).
- It keeps no live status of a running process (its `state_5.sqlite` threads and the rollout
  say nothing of a pending approval): a permission prompt is known from its PermissionRequest
  hook, which fires when the prompt shows, and its end from the rollout growing again."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from ...core.proctable import Proc, is_shell, table
from .. import is_uuid

NAME = "codex"
is_id = is_uuid  # the shape of its session ids
ENV_SESSION = ("CODEX_SESSION_ID", "CODEX_THREAD_ID")
ENV_MARKERS = ("CODEX_SESSION_ID", "CODEX_THREAD_ID", "CODEX_CI")
META_BINDING = None
WAKE = "queue"  # `codex queue`


def is_client(proc: Proc) -> bool:
    """A process named as Codex is, that is not a shell so named (a link to /bin/sh)."""
    return (proc.name == "codex" or proc.name.startswith("codex-")) and not is_shell(proc.pid)


def hook_client(chain: Iterable[Proc], env: Mapping[str, str]) -> Proc | None:
    for proc in chain:
        if is_client(proc):
            return proc
    return None


def meta_session(meta: Mapping[str, object]) -> str | None:
    turn = meta.get("x-codex-turn-metadata")
    for value in (meta.get("sessionId"), meta.get("threadId"),
                  turn.get("session_id") if isinstance(turn, Mapping) else None):
        if isinstance(value, str) and value:
            return value
    return None


TIERS = ("read-only", "workspace-write", "danger-full-access")


def hook_tier(data: Mapping[str, object]) -> str | None:
    return None  # a Codex hook event does not say its sandbox; its MCP call's `_meta` does


def meta_tier(meta: Mapping[str, object]) -> str | None:
    """The turn's sandbox, as the MCP call's `_meta` carries it
    (`x-codex-turn-metadata.sandbox_mode`)."""
    turn = meta.get("x-codex-turn-metadata")
    mode = turn.get("sandbox_mode") if isinstance(turn, Mapping) else None
    return mode if mode in TIERS else None


def unattended(env: Mapping[str, str]) -> bool:
    return False


def continue_turn(text: str) -> dict:
    """The Stop hook's reply that gives the model one more turn with `text`. The TUI shows it as
    "Blocked by hook" followed by the text: 0.171.0 has no other reply that continues a turn."""
    return {"decision": "block", "reason": text}


ROLLOUT_HEAD = 4096  # the rollout's first line (session_meta) names its source early on


def listens_in_background(data: Mapping[str, object], env: Mapping[str, str]) -> bool:
    """Whether a listening thread waits in its background Stop hook (`codex queue` wakes it)
    rather than holding the synchronous one: the interactive TUI (its rollout's `source` is
    `cli`), whose screen would show the hook running for minutes; `codex exec` (`exec`) ends
    when its turn does, so it listens synchronously."""
    path = data.get("transcript_path")
    if not isinstance(path, str) or not path:
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(ROLLOUT_HEAD)
    except OSError:
        return False
    return b'"source":"cli"' in head.split(b"\n", 1)[0]


def live(row: Mapping) -> None:
    return None  # nothing the running client says of itself (see above)


ROLLOUT_TAIL = 4096  # the rollout's last line, an interrupted turn's `turn_aborted` event


def turn_interrupted(row: Mapping) -> bool:
    """Whether the thread's turn ended without its Stop hook (Esc): the last line its rollout
    gained since the last hook event is a `turn_aborted` event. The TUI does not start a turn
    queued after that (measured: `codex queue` succeeds, nothing runs), so nothing waits to
    wake it until its next turn ends; `status` says so."""
    path = row["transcript_path"]
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_mtime <= row["last_active"]:
                return False
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - ROLLOUT_TAIL))
            tail = fh.read()
    except (OSError, TypeError, ValueError):
        return False
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return b'"type":"event_msg"' in last and b'"type":"turn_aborted"' in last


def binary(client_pid: int | None) -> str:
    """`codex` from PATH, else the very binary of the running client (hooks may not see PATH)."""
    import shutil

    found = shutil.which("codex")
    if found:
        return found
    exe = table().exe(client_pid) if client_pid else None
    return exe or "codex"


def queue(client_pid: int | None, thread: str, text: str, env: Mapping[str, str]) -> str | None:
    """Queue `text` as the thread's next turn; the reason when that cannot be done."""
    if client_pid and not table().alive(client_pid):
        return "no running Codex client for this thread (its process has exited)"
    import shlex  # here: a hook loads this module, and only a wake queues a turn
    import subprocess

    command = shlex.split(env.get("NEXUS_CODEX_COMMAND") or "") or [binary(client_pid)]
    try:
        # `--message=TEXT`: one word, so a text that starts with - is never read as an option
        done = subprocess.run([*command, "queue", "--thread", thread, f"--message={text}"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`{os.path.basename(command[0])} queue` could not run: {exc}"
    if done.returncode:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"`{os.path.basename(command[0])} queue` refused (exit {done.returncode}): {tail[0]}"
    return None
