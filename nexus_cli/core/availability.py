"""Whether a session can answer now: its status, judged where it is read (never by a daemon) from
its hooks' record, corrected by what its client process says of itself, by whether its
processes still run, and by what keeps it from being woken. What listings, `peers`, `send`'s
outlook and the board show. Stdlib only."""

from __future__ import annotations

import os
import sqlite3

from . import identity, sessions
from .errors import NexusError
from .proctable import Proc, table
from .record import Record
from .settings import IDLE_WAIT, LISTEN_WAIT, WAITER_GRACE, WOKEN_TURN

STATUS_HELP = ("working: in a turn (it sees a message after its next tool call); waiting: its "
               "client waits for a person (a permission prompt) and it cannot answer until that "
               "is answered; listening: something waits to wake it (listen mode, or its "
               "background waiter): it can answer right away; idle: its turn ended and nothing "
               "wakes it now (see status_reason): a message waits for its next prompt; offline: "
               "its session ended or its client process is gone: mail waits for it to resume.")


class Presence(Record):
    """What a sender needs to know of a session, judged where it is read (never by a daemon):

    - `status`: working (in a turn), waiting (its client waits for a person: a permission
      prompt), listening (something waits to wake it: listen mode or its background waiter),
      idle (its turn ended and nothing wakes it now) or offline (ended, or its client is gone);
    - `reason`: why, in words, where the status alone does not say it;
    - `waiting_for`: what a waiting session waits for, as its client says it;
    - `wakeable`: for idle and listening agents, whether a message now wakes it."""

    __slots__ = ()
    _fields = ("status", "reason", "waiting_for", "wakeable")
    _defaults = (None, None, None)
    status: str
    reason: str | None
    waiting_for: str | None
    wakeable: bool | None


def effective_status(row: sqlite3.Row | dict, now: float) -> str:
    return presence(row, now).status


def presence(row: sqlite3.Row | dict, now: float) -> Presence:
    """The session's presence (see Presence): its hooks' record, corrected by what its client
    process says of itself where it says it (Claude Code's live registry file), by whether its
    processes still run, and by what keeps it from being woken."""
    why = sessions.gone(row, now)
    if why:
        return Presence("offline", why)
    status, local = row["status"], sessions.here(row)
    if not local:  # another machine's session: as it recorded itself
        return Presence(status, waiting_for=row["waiting_for"] if status == "waiting" else None)
    if row["client"] not in identity.CLIENTS:  # a person: `watch` listens while it runs
        dead = status == "listening" and not table().alive(row["waiter_pid"])
        return Presence("idle" if dead else status)
    live = _live(row)
    if live is not None and live[0] == "waiting":
        said = row["waiting_for"] if row["last_event"] == "PermissionRequest" else None
        return Presence("waiting", WAITING_TEXT, said or live[1] or "a person")
    if live is not None and live[2] > row["last_active"] and status != "listening":
        status = {"busy": "working", "idle": "idle"}.get(live[0], status)  # newer than hooks
    elif status == "waiting" and live is None and _moved_on(row):
        status = "working"  # its transcript grew since the prompt: it was answered
    elif status == "working" and live is None and _interrupted(row):
        status = "idle"  # its transcript says the person interrupted the turn (no Stop ran)
    if status == "waiting":
        return Presence("waiting", WAITING_TEXT, row["waiting_for"] or "a person")
    if status not in ("idle", "listening"):
        return Presence(status)
    return waking(row, status, now)


WAITING_TEXT = "its client waits for a person: it cannot answer until that is answered"


def not_mid_turn(conn: sqlite3.Connection, sid: str, client: str, proc: Proc, now: float) -> None:
    """A new conversation starts in a running client process (`/clear`, `/resume`) only between
    the turns of the one it runs: a SessionStart fed by hand from an agent's shell into its own
    client comes in the middle of the agent's turn, and would take over its name and mail.
    Raises `hook_refused`. (Its client's own word for its state, where it says it, decides: a
    turn cut short without a Stop hook is over when the client says it is idle.)"""
    rows = sessions.of_process(conn, proc)
    if not rows:
        return
    current = sessions.current_of(rows, now)
    if presence(current, now).status in ("working", "waiting"):
        raise NexusError("hook_refused", sid,
                         f"{client} process {proc.pid} is in a turn of {current['id']}: a new "
                         "conversation starts in a running client only between turns (`/clear`, "
                         "`/resume`); a start fed by hand from an agent's shell is refused",
                         "start it again once the turn has ended; nothing was recorded")


def _live(row: sqlite3.Row | dict) -> tuple[str, str | None, float] | None:
    from .. import clients  # only where a status is read

    adapter = clients.ADAPTERS.get(row["client"])
    return adapter.live(row) if adapter is not None and row["client_pid"] else None


def _interrupted(row: sqlite3.Row | dict) -> bool:
    """Whether the session's turn ended without its Stop hook, as its client's transcript says
    (Codex: a `turn_aborted` event after Esc)."""
    from .. import clients  # only where a status is read

    adapter = clients.ADAPTERS.get(row["client"])
    return adapter is not None and adapter.turn_interrupted(row)


def _moved_on(row: sqlite3.Row | dict) -> bool:
    """Whether the session's transcript was written after its last hook event (a permission
    prompt it recorded was answered: the conversation went on)."""
    try:
        return os.stat(row["transcript_path"]).st_mtime > row["last_active"]
    except (OSError, TypeError, ValueError):
        return False


def waking(row: sqlite3.Row | dict, status: str, now: float) -> Presence:
    """An idle or listening agent on this machine: whether a message wakes it now, and if not,
    why not."""
    held = held_back(row)
    if status == "listening":
        if not table().alive(row["waiter_pid"]):
            return Presence("idle", "its waiter was stopped (killed, or Esc during its Stop "
                            "hook) before a message woke it: it waits again when its next turn "
                            "ends", wakeable=False)
        if held:
            return Presence("idle", held, wakeable=False)
        return Presence("listening", "listen mode: its Stop hook waits for a message"
                        if row["listening"] else "its background waiter wakes it",
                        wakeable=True)
    if held:
        return Presence("idle", held, wakeable=False)
    end, woke = row["last_turn_end"], row["last_wake_at"]
    if woke and now - woke < WOKEN_TURN and not row["last_wake_error"]:
        return Presence("idle", "it has just been woken: its next turn is starting",
                        wakeable=True)
    if row["last_event"] == "Stop" and end and now - end < WAITER_GRACE:
        return Presence("idle", "its turn has just ended: its waiter is starting", wakeable=True)
    return Presence("idle", no_waiter(row, now), wakeable=False)


def held_back(row: sqlite3.Row | dict) -> str | None:
    """What keeps any message from waking the session, whatever waits: it asked not to be woken,
    or its automatic turns are used up."""
    from .settings import cached
    from .store import paths

    config = cached(paths.home())
    if not row["listening"] and not sessions.wants_waking(row, config):
        return ("it asked not to be woken (`nexus profile --wake off`)" if row["wake"] == 0
                else "waking is off for every session (`nexus config set wake 0`)")
    limit = int(config["maxAutoTurns"])  # type: ignore[call-overload]
    if row["auto_turns"] >= limit:
        return (f"its automatic turns are used up ({row['auto_turns']} of {limit} since its "
                "last prompt)")
    return None


HOOKLESS = ("no hook of its client has reached nexus (hooks not installed, or not trusted): it "
            "sees messages only when it runs `nexus read`")


def no_waiter(row: sqlite3.Row | dict, now: float) -> str:
    """Why nothing waits to wake an idle agent."""
    end = row["last_turn_end"]
    if row["last_event"] is None:
        return HOOKLESS
    if row["last_wake_error"]:
        return f"its last wake failed ({row['last_wake_error']})"
    if row["status"] in ("working", "waiting"):  # its client says idle; no Stop hook ran
        return ("its turn ended without its Stop hook (interrupted), so nothing waits to wake it "
                "until its next turn ends")
    if end is None:
        return "it has not ended a turn yet (nothing waits before its first prompt)"
    if now - end >= IDLE_WAIT:
        return "its waiter gave up an hour after its turn ended"
    if row["listening"] and now - end >= LISTEN_WAIT:
        return f"its listen wait ended {LISTEN_WAIT} s after its turn"
    return ("no waiter runs since its turn ended (its background Stop hook did not start: not "
            "installed, not trusted, or an unattended run; `nexus doctor` checks)")
