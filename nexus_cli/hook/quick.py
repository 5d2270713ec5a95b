"""A tool call's hook when nothing is new: one question, then done.

Locally a sender raises the recipient's news marker and the installed PostToolUse guard starts
Python only while it exists (core/store/news.py). A sender on another machine cannot touch that
file, so in team mode the guard also lets the call through when a team database is configured
(`team.url`, or NEXUS_DATABASE_URL: tested by the shell, hooks/*.json), and this module asks the
team database, before the hook's modules load: is anything waiting that a tool call's hook
would announce to this session? Mail not yet announced (what `messages.announceable` means), or
workspace chat past what the session was told (a superset of what the full hook announces: it
decides precisely, and moves the session's cursor). Nothing: the hook ends here, as a local one
without a marker never started. Something, or any doubt (another driver, an error): the full
hook runs as before, with the event already read (TLS included: pgwire speaks it, importing
`ssl` only then). A URL only psycopg serves (a CRL, a service file ...) gets no round trip: the
import alone would cost more than the check saves, so such a call runs the full hook only while
a news marker of this machine is raised (mail from another machine then waits for the next
prompt or Stop, as before). A server not reached within the budget is logged as the
full hook logs it (`team-offline.log`) and the client goes on at once, instead of waiting for
the full hook to fail the same way.

Locally (and in a team hook that went on) the same question, asked inside the hook's write
(`messages.news`), lets a tool call with nothing to say skip the mailbox and the chat feed.
Stdlib only."""

from __future__ import annotations

import json
import os

from .. import messages

# a session without a chat cursor is settled here (its next prompt or Stop sets it)
NEWS = messages.NEWS.replace("{unset}", "9223372036854775807")

TIMEOUT = 2  # seconds to reach the server (pg.HOOK_CONNECT_TIMEOUT), and for all (HOOK_BUDGET)
SETTINGS = "-c statement_timeout=2000"


def settled(argv: list[str], raw: bytes, url: str) -> bool:
    """Whether this hook is done already: a PostToolUse on the team database at `url` with
    nothing to announce."""
    if len(argv) != 1 or argv[0] not in ("claude", "codex") or b"PostToolUse" not in raw:
        return False
    if os.environ.get("NEXUS_PG_DRIVER") == "psycopg":
        return False
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    if not isinstance(data, dict) or data.get("hook_event_name") != "PostToolUse":
        return False
    sid = data.get("session_id")
    if not isinstance(sid, str) or not 0 < len(sid) <= 200 or "\0" in sid:
        return False
    from ..core.store import pgwire

    p = pgwire.params(url)
    if p is None:  # what only libpq does: psycopg, whose import alone costs a hook ~200 ms, so
        return not marked()  # as before: mail from this machine only (its marker), else at Stop
    budget = pgwire.process_deadline(TIMEOUT)  # the hook's 2 s in all, the full hook's too
    try:
        wire = pgwire.Wire({**p, "options": f"{p.get('options', '')} {SETTINGS}".strip()},
                           TIMEOUT, limit=budget)
    except pgwire.WireError as exc:
        if exc.sqlstate is None:  # not reached within the budget: the full hook would not be
            down(argv[0], url, exc)  # either, and would make the client wait as long again
            return True
        return False  # refused (a role, a password ...): the full hook says why
    except (OSError, ValueError):
        return False
    try:
        rows = wire.query(NEWS, [f"{argv[0]}:{sid}"]).rows
    except pgwire.WireError as exc:
        if exc.sqlstate == "57014":  # the budget is spent: nothing is left for the full hook
            down(argv[0], url, exc)
            return True
        return False  # the full hook finds the way, or reports it
    except (OSError, ValueError):
        return False
    finally:
        wire.close()
    return bool(rows) and rows[0][0] is False


def down(client: str, url: str, exc: BaseException) -> None:
    """The server could not be reached: the line a hook writes to the local offline log."""
    from ..core.store import paths, pg
    from .entry import offline

    offline(paths.home(), client, pg.unreachable(url, exc))


def marked() -> bool:
    """Whether any client process of this machine has a news marker raised."""
    from ..core.store import news, paths

    try:
        return bool(os.listdir(news.folder(paths.home())))
    except OSError:
        return False

