"""`nexus delegate --spawn claude|codex TASK`: a new run whose session the task is delegated to.
The run starts detached with the task in its prompt; the task record and its message go to the
run's session as soon as its id is known (before the client starts for Claude Code, whose session
id nexus chooses; from the first event of `codex exec`). Stdlib only."""

from __future__ import annotations

from types import SimpleNamespace

from ..core import sessions
from ..core.context import Ctx
from ..core.errors import NexusError, invalid
from ..core.store import wake
from . import ledger, runs
from .runner import HEADLESS, channel

SESSION_WAIT = 60.0


def prompt(task: str, dispatcher: str) -> str:
    return (f"{dispatcher} started you through nexus for one task, delegated to you as a "
            "nexus task (it is also in your inbox). Do it; when it is done, or cannot be "
            "done, report it: `nexus tasks --open` shows its id, then `nexus report <id> "
            "--status completed|blocked|failed --result \"<what you produced, where, what you "
            f"verified, what is still open>\"`.\n\nThe task:\n{task}")


def start(ctx: Ctx, client: str, task: str) -> str:
    """Start the worker run; returns its session id (registered, so the task can target it)."""
    if client not in HEADLESS:
        raise invalid("TARGET", f"with --spawn, TARGET is the client to start: "
                      f"{' or '.join(HEADLESS)}, not {client!r}", "nexus delegate --spawn "
                      "claude|codex TASK")
    with ctx.read() as conn:
        me = ctx.me(conn)
        name = (sessions.get(conn, me.id) or {"name": me.id})["name"]
    args = SimpleNamespace(client=client, task=prompt(task, name), context=None, cwd=None,
                           resume=None, title="delegated task", preset=None, sandbox=None,
                           approvals=None, detach=True)
    started = runs.start(ctx, args)  # type: ignore[arg-type]
    run_id, sid = started["id"], started["session_id"]
    if sid is None:
        row = runs.wait_for(ctx, run_id, SESSION_WAIT, until="session")
        sid = row["session_id"] if row is not None else None
    if sid is None:
        raise NexusError("timeout", run_id, f"the {client} run did not start a session within "
                         f"{SESSION_WAIT:.0f} s", f"see `nexus run result {run_id}`")
    with ctx.write() as conn:
        sessions.ensure(conn, sid, started["cwd"], ctx.now, touch=False)
        ledger.change(conn, run_id, title="delegated task")
    wake.poke(ctx.store.root, [channel(run_id)])
    return sid
