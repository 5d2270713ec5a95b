"""`nexus run` and its results: every run is a record before its process starts and a detached
process that survives the CLI, the MCP server and the calling agent. Synchronous up to a window
(`runWait`; over MCP at most RUN_MCP_WAIT), then the answer says how to collect it; `--detach`
returns at once. Stdlib only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from typing import TYPE_CHECKING

from .. import __version__
from ..approvals import ledger as approvals
from ..core import identity, interp, sessions, settings, suggest
from ..core.context import Ctx
from ..core.errors import NexusError, invalid
from ..core.listing import envelope
from ..core.settings import RUN_MCP_WAIT
from ..core.store import wake
from ..core.timefmt import human_duration
from . import ledger, presets, procs
from .runner import BOOT, HEADLESS, channel

if TYPE_CHECKING:
    from .models import (
        EchoArgs,
        PolicyGetArgs,
        PolicySetArgs,
        PresetGetArgs,
        PresetSetArgs,
        RunArgs,
        RunIdArgs,
        RunListArgs,
    )


def _not_found(run_id: str, retention: object) -> NexusError:
    return NexusError("run_not_found", run_id,
                      f"no run with that id is yours to see (finished runs are kept "
                      f"{human_duration(float(retention))})",  # type: ignore[arg-type]
                      "list the runs with `nexus run list`; start it again with `nexus run`")


def _visible(me: sessions.Caller, row: object) -> bool:
    return row is not None and (row["dispatcher"] == me.id or not me.is_agent)  # type: ignore[index]


def _find(conn, me, run_id: str, root: str):
    row = ledger.get(conn, run_id)
    if not _visible(me, row):
        raise _not_found(run_id, settings.load(root)["runRetention"])
    return row


def resolve_session(conn, client: str, value: str) -> str:
    """--resume: a session id, handle or the client's own id, of that client."""
    row = conn.execute("SELECT id FROM sessions WHERE id = ?1 OR handle = ?1 OR id = ?2",
                       (value, f"{client}:{value}")).fetchone()
    sid = row[0] if row else None
    if sid is None:
        try:
            sid = identity.check_id(value) if ":" in value else identity.session_id(client, value)
        except NexusError:
            raise invalid("--resume", f"{value!r} is not a {client} session id or handle",
                          "pass the session id a run returned (`nexus run list`)") from None
    if identity.split_id(sid)[0] != client:
        raise invalid("--resume", f"{sid} is not a {client} session",
                      f"resume it with `nexus run {identity.split_id(sid)[0]} ...`")
    return sessions.follow_successors(conn, sid)


def _policy_value(conn, scope: str | None, field: str) -> str | None:
    row = ledger.policy(conn, scope) if scope else None
    return row[field] if row is not None and row[field] else None


def _default(conn, field: str) -> tuple[str | None, str]:
    """The default of `field` and whose it is: the member's own (team mode), else the default."""
    mine = _policy_value(conn, ledger.member_scope(conn), field)
    if mine:
        return mine, "member"
    return _policy_value(conn, ledger.DEFAULT_SCOPE, field), "default"


def choose(conn, root: str, preset_id: str | None, sandbox: str | None,
           session: str | None) -> tuple[str, dict, str | None, str]:
    """The preset and tier a run gets, and where the tier came from. The preset: explicit, else
    the session's own (on resume), else the default one (in team mode the member's own default
    first, then the team's). The tier: `--sandbox`, then the tier of a preset passed with the
    run, then the session's policy (`policy set --session`), then the tier of the session's or
    the default preset, then the default policy; none: the client's."""
    table, _ = presets.load(root)
    wanted = preset_id or (session and _policy_value(conn, session, "preset")) or \
        _default(conn, "preset")[0] or presets.DEFAULT
    preset = table.get(wanted)
    if preset is None or preset.get("broken"):
        raise unknown_preset(wanted, preset, table)
    for tier, source in ((sandbox, "run"),
                         (preset_id and preset.get("sandbox"), "preset"),
                         (session and _policy_value(conn, session, "sandbox"), "override"),
                         (preset.get("sandbox"), "preset"),
                         _default(conn, "sandbox")):
        if tier:
            return wanted, preset, tier, source
    return wanted, preset, None, "client"


def rank(tier: str | None) -> int:
    """How much a tier allows; no tier (the client's own settings) counts as the least, so a
    session that has none may not give itself one."""
    return presets.TIERS.index(tier) if tier in presets.TIERS else 0


def _not_wider_for_itself(conn, root: str, me, sid: str, tier: str | None, what: str) -> None:
    """A session may narrow its own tier, never widen it."""
    if me.id != sid or not me.is_agent:
        return
    _, _, now_tier, _ = choose(conn, root, None, None, sid)
    if rank(tier) > rank(now_tier):
        was = now_tier or "the client's own settings"
        raise NexusError("impersonation_refused", sid,
                         f"a session may not widen its own sandbox tier ({was} -> {tier}) "
                         f"with {what}",
                         "ask the person or the session's dispatcher")


def own_tier(conn, me) -> tuple[str | None, str] | None:
    """An agent's own sandbox tier, the narrowest of what is known (and where it is known from):
    the tier of its run (a run's session), the tier its client states for this call (over MCP,
    to a server the client started: Codex's turn sandbox, Claude Code's permission mode at the
    call's PreToolUse). What is not known (a command from the agent's shell, Claude Code's
    `default` mode, which asks per call) is the narrowest, read-only: an agent's own word for its
    tier is never taken. None for the person."""
    if not me.is_agent:
        return None
    run = ledger.of_session(conn, me.id)
    known = [(run["sandbox"], "its run's")] if run is not None else []
    known.append((me.tier, "its client's for this call") if me.tier is not None
                 else (presets.TIERS[0], "no tier its client states that nexus can believe"))
    return min(known, key=lambda k: rank(k[0]))


def no_wider_than_mine(conn, me, tier: str | None, root: str) -> str | None:
    """The tier of a run an agent starts or resumes: never wider than its own (`own_tier`), and
    its own when none was chosen (the client's own settings could be wider), unless the person
    allows wider runs (`nexus config set widerRuns 1`)."""
    own = own_tier(conn, me)
    if own is None or settings.load(root)["widerRuns"]:
        return tier
    mine, where = own
    if rank(tier) > rank(mine):
        shown = mine or "the client's own settings"
        raise NexusError("impersonation_refused", me.id,
                         f"a session may not start a run with a wider sandbox tier than its own "
                         f"({shown}, {where} -> {tier})",
                         f"pass --sandbox {mine or 'read-only'}, use the MCP `run` tool (your "
                         "client states its own tier there), or ask your dispatcher or the "
                         "person (who may start it, or allow wider runs: `nexus config set "
                         "widerRuns 1`)")
    return tier or mine


def may_resume(conn, me, sid: str) -> None:
    """`--resume` continues a conversation (its context is read, its run's dispatcher becomes the
    caller): the person, the session itself, or the dispatcher of a run of it."""
    if not me.is_agent or me.id == sid or ledger.dispatched_by(conn, sid, me.id):
        return
    raise NexusError("impersonation_refused", sid,
                     "an agent may resume only itself or the sessions of runs it started",
                     "start a new run without --resume, or ask the person")


def own_flags(adapter, env: dict) -> None:
    """The user's own flags (NEXUS_CLAUDE_FLAGS, NEXUS_CODEX_FLAGS) may add to a run's command
    line, never set what nexus sets: a tier comes from --sandbox, a preset or the policy, and an
    agent's environment is its own to change, so flags from it would widen any tier and make
    the run's record untrue."""
    import shlex

    var = adapter.FLAGS_VAR
    try:
        words = shlex.split(env.get(var, ""))
    except ValueError as exc:
        raise invalid(var, f"cannot be read as shell words ({exc})",
                      f"fix or unset {var}") from None
    bad = adapter.refused_flag(words)
    if bad is not None:
        raise NexusError("invalid_argument", var,
                         f"{bad!r} would set what nexus sets for a run (its sandbox tier, "
                         "permissions, tools, directories or conversation): flags from the "
                         "environment never widen a run's tier",
                         f"choose the tier with --sandbox, a preset or `nexus policy set`, and "
                         f"remove it from {var}")


def prompt(task: str, context: str | None) -> str:
    return task if not context else f"Context:\n{context}\n\nTask:\n{task}"


def start(ctx: Ctx, a: RunArgs) -> dict:
    """Queue the run, start its runner, and wait for it up to the window (none with --detach)."""
    root = ctx.store.root
    conf = settings.load(root)
    for key, value in (("TASK", a.task), ("--context", a.context), ("--cwd", a.cwd),
                       ("--title", a.title), ("--resume", a.resume)):
        if value is not None and "\x00" in value:
            raise invalid(key, "it holds a NUL byte, which no program argument or prompt "
                          "can carry", "remove the NUL byte")
    adapter = HEADLESS[a.client]
    own_flags(adapter, dict(os.environ))
    exe = adapter.binary(dict(os.environ))
    if exe is None:
        raise NexusError("client_unavailable", a.client, f"`{a.client}` is not on PATH",
                         f"install {a.client}, or run nexus where it is on PATH")
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        cwd = os.path.realpath(os.path.expanduser(a.cwd)) if a.cwd else me.cwd
        if not os.path.isdir(cwd):
            raise invalid("--cwd", f"{cwd} is not a directory", "pass an existing folder")
        ledger.reap(conn, ctx.now)
        active, most = ledger.active_count(conn), conf["maxRuns"]
        if active >= most:  # type: ignore[operator]
            raise NexusError("run_queue_full", f"{active}/{most}",
                             "as many runs as maxRuns allows are queued or running",
                             "wait, or cancel one (`nexus run list`, `nexus run cancel ID`)")
        resume = resolve_session(conn, a.client, a.resume) if a.resume else None
        if resume:
            may_resume(conn, me, resume)
        preset_id, preset, sandbox, _ = choose(conn, root, a.preset, a.sandbox, resume)
        sandbox = no_wider_than_mine(conn, me, sandbox, root)
        approvals_to = a.approvals or ("nexus" if conf["runApprovals"] else "client")
        blocked = adapter.approvals_blocker(dict(os.environ), identity.project_root(cwd)) \
            if approvals_to == "nexus" else None
        if blocked is not None:
            raise NexusError("approvals_unavailable", a.client, blocked[0], blocked[1])
        raw_new = str(uuid.uuid4()) if a.client == "claude" and not resume else None
        session = resume or (f"claude:{raw_new}" if raw_new else None)
        text = prompt(a.task, a.context)
        argv = adapter.command(
            exe, text, session=raw_new,
            resume=identity.split_id(resume)[1] if resume else None, sandbox=sandbox,
            approvals=approvals_to, model=preset.get("model"), system=preset.get("system"),
            allowed_tools=preset.get("allowed_tools") or [], env=dict(os.environ))
        run_id = ledger.new_id()
        ledger.insert(conn, id=run_id, client=a.client, task=a.task, context=a.context, cwd=cwd,
                      project=identity.project_root(cwd), title=a.title, preset=preset_id,
                      sandbox=sandbox, approvals=approvals_to, resume=resume,
                      launch=json.dumps({"argv": argv, "stdin": text}), dispatcher=me.id,
                      session_id=session,
                      task_id=getattr(a, "task_id", None), status="queued", created_at=ctx.now)
    spawn(root, run_id)
    window = 0.0 if a.detach else float(conf["runWait"])  # type: ignore[arg-type]
    if ctx.face == "mcp":
        window = min(window, RUN_MCP_WAIT)
    row = wait_for(ctx, run_id, window) if window > 0 else None
    with ctx.read() as conn:
        row = ledger.get(conn, run_id)
        return answer(conn, row, ctx.now, root, sync=not a.detach)


def spawn(root: str, run_id: str) -> None:
    """Start the runner in a session of its own; it forks at once, so this wait is short."""
    child = subprocess.Popen(interp.argv("-c", BOOT, root, run_id), cwd=interp.SAFE_CWD,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    child.wait()


def wait_for(ctx: Ctx, run_id: str, window: float, until: str = "final"):
    """Wait on the run's wake channel until it is final (or, `until` "session", until its
    session id is known), the window passes or the caller gives up. A runner that died is found
    out meanwhile."""
    begun = time.monotonic()
    deadline = begun + window
    with wake.Channel(ctx.store.root, channel(run_id)) as ch:
        while True:
            with ctx.store.read() as conn:
                row = ledger.get(conn, run_id)
            if row is None or row["status"] in ledger.FINAL or \
                    (until == "session" and row["session_id"]):
                return row
            if row["runner_pid"] and sessions.here(row) and \
                    not procs.alive(row["runner_pid"], row["runner_start"]):
                with ctx.store.write() as conn:
                    ledger.reap(conn, time.time())
                continue
            left = deadline - time.monotonic()
            if left <= 0 or ctx.cancelled.is_set():
                return row
            if ctx.progress is not None:
                ctx.progress(f"run {run_id} ({row['status']})", time.monotonic() - begun)
            ch.wait(min(left, 2.0))


NEXT = {
    "queued": "it starts in a moment: `nexus run result {id}` (or run_result) shows it",
    "running": "still running: collect it with `nexus run result {id}` (or run_result) later; "
               "`nexus run cancel {id}` stops it",
    "done": "continue this conversation with `nexus run {client} TASK --resume {session}`",
    "error": "see `error`; the full stream is in {output}; resume with `nexus run {client} TASK "
             "--resume {session}` when a session was started",
    "cancelled": "the result was discarded; the session is kept: `nexus run {client} TASK "
                 "--resume {session}`",
}


def answer(conn, row, now: float, root: str, sync: bool = True) -> dict:
    """A run as `run`/`run result` return it (seed: task_result plus the structured result)."""
    conf = settings.load(root)
    out = ledger.summary(conn, row)
    result = ledger.result_of(row) if row["status"] == "done" else None
    out["result"] = result
    out["landing"] = result.pop("landing", None) if result else None
    out["waited"] = human_duration(out["waited_ms"] / 1000) if out["waited_ms"] is not None \
        else None
    out["retain_ms"] = int(float(conf["runRetention"]) * 1000)  # type: ignore[arg-type]
    out["retain"] = human_duration(float(conf["runRetention"]))  # type: ignore[arg-type]
    out["output_file"] = row["output"]
    out["next"] = NEXT[row["status"]].format(id=row["id"], client=row["client"],
                                             session=row["session_id"] or "SESSION",
                                             output=row["output"] or "the run's output file")
    if row["status"] in ledger.ACTIVE and sync:
        out["next"] = ("the wait ended before the run did; it goes on detached: " + out["next"])
    return out


def result(ctx: Ctx, a: RunIdArgs) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn)
        ledger.reap(conn, ctx.now)
        row = _find(conn, me, a.run_id, ctx.store.root)
        return answer(conn, row, ctx.now, ctx.store.root, sync=False)


def listing(ctx: Ctx, a: RunListArgs) -> dict:
    root = ctx.store.root
    conf = settings.load(root)
    with ctx.write() as conn:
        me = ctx.me(conn)
        ledger.reap(conn, ctx.now)
        ledger.purge(conn, ctx.now, float(conf["runRetention"]))  # type: ignore[arg-type]
        where, params = [], []
        if me.is_agent:
            where.append("dispatcher = ?")
            params.append(me.id)
        elif not a.all_workspaces:
            where.append("project = ?")
            params.append(me.project)
        if a.status:
            where.append("status = ?")
            params.append(a.status)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        total = conn.execute(f"SELECT count(*) FROM runs {clause}", params).fetchone()[0]
        active = conn.execute(f"SELECT count(*) FROM runs {clause}"
                              f"{' AND' if where else ' WHERE'} status IN ('queued', 'running')",
                              params).fetchone()[0]
        rows = conn.execute(f"SELECT * FROM runs {clause} ORDER BY seq DESC LIMIT ? OFFSET ?",
                            (*params, a.limit, a.offset)).fetchall()
        items = [ledger.summary(conn, r) for r in rows]
    for item in items:
        item["waited"] = human_duration(item["waited_ms"] / 1000) \
            if item["waited_ms"] is not None else None
    return envelope(items, total, a.offset, a.limit, active=active)


def cancel(ctx: Ctx, a: RunIdArgs) -> dict:
    """Answers per state as the seed does: a queued run is dropped, a running one has its whole
    process group ended (its session is kept for --resume), a finished one is not cancellable."""
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        ledger.reap(conn, ctx.now)
        row = _find(conn, me, a.run_id, ctx.store.root)
        was = row["status"]
        if was == "running" and not sessions.here(row):
            raise NexusError("run_elsewhere", row["id"],
                             f"it runs on {row['machine']}: nexus ends a process only on its own "
                             "machine", f"cancel it there (`nexus run cancel {row['id']}` on "
                             f"{row['machine']}); it was left as it is")
        if was in ledger.FINAL:
            return {"ok": False, "status": was, "was": was, "run_id": row["id"],
                    "session_id": row["session_id"], "note": None,
                    "error": f"run {row['id']} not cancellable (status={was})",
                    "next": "a finished run stays as it is: `nexus run result "
                            f"{row['id']}` shows it"}
        ledger.change(conn, row["id"], status="cancelled", finished_at=ctx.now,
                      error=f"cancelled by {me.id}")
        approvals.unroute(conn, row["id"])
    ended = procs.end_group(row["client_pid"], row["client_start"], row["id"]) \
        if was == "running" else False
    wake.poke(ctx.store.root, [channel(row["id"])])
    note = ("its client's whole process group was ended" if ended else
            "its client had not started yet; the runner stops before starting it")
    return {"ok": True, "status": "cancelled", "was": was, "run_id": row["id"],
            "session_id": row["session_id"], "note": note if was == "running" else None,
            "error": None,
            "next": (f"resume the session with `nexus run {row['client']} TASK --resume "
                     f"{row['session_id']}`" if row["session_id"] else
                     "start it again with `nexus run`")}


# -- presets and policy ------------------------------------------------------------------------


def _may_steer(conn, me, sid: str) -> None:
    """The person, the session itself, or the dispatcher of a run of it."""
    if not me.is_agent or me.id == sid or ledger.dispatched_by(conn, sid, me.id):
        return
    raise NexusError("impersonation_refused", sid,
                     "an agent may set this only for itself or for sessions of runs it started",
                     "ask the person, or the session itself")


def _session(conn, value: str) -> str:
    row = conn.execute("SELECT id FROM sessions WHERE id = ?1 OR handle = ?1",
                       (value,)).fetchone() \
        or conn.execute("SELECT session_id FROM runs WHERE session_id = ?", (value,)).fetchone()
    if row is None:
        raise NexusError("target_not_found", value, "no session has that id or handle",
                         "list them with `nexus peers --include-offline` or `nexus run list`")
    return row[0]


def preset_list(ctx: Ctx, a: object) -> dict:
    table, source = presets.load(ctx.store.root)
    with ctx.read() as conn:
        default = _default(conn, "preset")[0] or presets.DEFAULT
    items = [{"id": pid, "name": p.get("name", pid), "description": p.get("description", ""),
              "model": p.get("model"), "sandbox": p.get("sandbox"), "system": p.get("system"),
              "allowed_tools": p.get("allowed_tools", []), "broken": p.get("broken"),
              "builtin": pid in presets.BUILTIN} for pid, p in table.items()]
    return {"source": source, "file": presets.file(ctx.store.root), "default": default,
            "presets": items}


def preset_get(ctx: Ctx, a: PresetGetArgs) -> dict:
    with ctx.read() as conn:
        default = _default(conn, "preset")[0]
        if not a.session:
            return {"session_id": None, "preset": default or presets.DEFAULT,
                    "source": "store" if default else "builtin", "note": None, "next": None}
        sid = _session(conn, a.session)
        own = _policy_value(conn, sid, "preset")
        run = ledger.of_session(conn, sid)
        if own:
            return {"session_id": sid, "preset": own, "source": "session", "note": None,
                    "next": None}
        if run is not None and run["preset"]:
            return {"session_id": sid, "preset": run["preset"], "source": "run", "note": None,
                    "next": None}
        return {"session_id": sid, "preset": default or presets.DEFAULT, "source": "default",
                "note": "the session has no preset of its own",
                "next": f"`nexus preset set ID --scope session --session {sid}` while it is blank"}


def unknown_preset(wanted: str, preset: dict | None, table: dict) -> NexusError:
    """A preset that is not there (the nearest ids named), or one whose definition is broken."""
    if preset is not None:
        return NexusError("unknown_preset", wanted, preset["broken"],
                          "list them with `nexus preset list`")
    hint = suggest.did_you_mean(wanted, [p for p, v in table.items() if not v.get("broken")])
    return NexusError("unknown_preset", wanted, "no preset has that id",
                      (hint + " " if hint else "") + "list them with `nexus preset list`")


def preset_set(ctx: Ctx, a: PresetSetArgs) -> dict:
    table, _ = presets.load(ctx.store.root)
    preset = table.get(a.preset_id)
    if preset is None or preset.get("broken"):
        raise unknown_preset(a.preset_id, preset, table)
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        if a.scope == "new-default":
            if me.is_agent:
                raise NexusError("impersonation_refused", "the default preset",
                                 "only the person sets the default preset (its tier applies "
                                 "to every new run)",
                                 "pass --preset to `nexus run`, or --scope session --session "
                                 "for a session of a run you started")
            scope = ledger.default_scope(conn)
            previous: str | None = _policy_value(conn, scope, "preset") or presets.DEFAULT
            ledger.set_policy(conn, scope, ctx.now, preset=a.preset_id)
            return {"ok": True, "scope": a.scope, "preset": a.preset_id, "previous": previous,
                    "session_id": None,
                    "next": "new runs without --preset use it (`nexus preset get`)" + (
                        "" if scope == ledger.DEFAULT_SCOPE else ": yours, not the team's (the "
                        "team's default is its administrator's)")}
        if not a.session:
            raise NexusError("invalid_argument", "--session", "missing required parameter: "
                             "scope session needs the session", "pass --session SESSION")
        sid = _session(conn, a.session)
        _may_steer(conn, me, sid)
        row = sessions.get(conn, sid)
        if (row is not None and row["last_prompt_at"] is not None) or \
                ledger.of_session(conn, sid) is not None:
            raise NexusError("session_started", sid,
                             "the session already ran a turn; its preset is fixed, only a blank "
                             "session switches", "pass --preset to `nexus run`, or use "
                             "--scope new-default")
        _not_wider_for_itself(conn, ctx.store.root, me, sid, preset.get("sandbox"),
                              f"preset {a.preset_id}")
        previous = _policy_value(conn, sid, "preset")
        ledger.set_policy(conn, sid, ctx.now, preset=a.preset_id)
        return {"ok": True, "scope": a.scope, "preset": a.preset_id, "previous": previous,
                "session_id": sid,
                "next": f"it applies when the session is run: `nexus run "
                        f"{identity.split_id(sid)[0]} TASK --resume {sid}`"}


def flags(tier: str | None, approvals_to: str) -> dict:
    return {name: h.flags(tier, approvals_to) for name, h in HEADLESS.items()}


def policy_get(ctx: Ctx, a: PolicyGetArgs) -> dict:
    conf = settings.load(ctx.store.root)
    approvals_to = "nexus" if conf["runApprovals"] else "client"
    with ctx.read() as conn:
        sid = _session(conn, a.session) if a.session else None
        _, _, tier, source = choose(conn, ctx.store.root, None, None, sid)
    return {"session_id": sid, "sandbox": tier, "source": source, "approvals": approvals_to,
            "flags": flags(tier, approvals_to), "approval_timeout": conf["approvalTimeout"],
            "next": "change it with `nexus policy set MODE" + (f" --session {sid}`" if sid
                                                             else "`")}


def policy_set(ctx: Ctx, a: PolicySetArgs) -> dict:
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        sid = _session(conn, a.session) if a.session else None
        if sid:
            _may_steer(conn, me, sid)
            _not_wider_for_itself(conn, ctx.store.root, me, sid, a.mode, "policy set")
        elif me.is_agent:
            raise NexusError("impersonation_refused", "the default policy",
                             "only the person sets the default sandbox tier",
                             "pass --session for a session of a run you started")
        scope = sid or ledger.default_scope(conn)
        ledger.set_policy(conn, scope, ctx.now, sandbox=a.mode)
    conf = settings.load(ctx.store.root)
    approvals_to = "nexus" if conf["runApprovals"] else "client"
    source = "override" if sid else "default" if scope == ledger.DEFAULT_SCOPE else "member"
    return {"ok": True, "session_id": sid, "sandbox": a.mode, "source": source,
            "flags": flags(a.mode, approvals_to),
            "next": ("applied on its next run: `nexus run "
                     f"{identity.split_id(sid)[0]} TASK --resume {sid}`" if sid
                     else "applied to every new run without --sandbox or a preset tier"
                     + ("" if source == "default" else " of yours (the team's default is its "
                        "administrator's: `nexus team init --admin`)"))}


# -- status ---------------------------------------------------------------------------------------

CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY")


def info(ctx: Ctx, a: object) -> dict:
    root = ctx.store.root
    conf = settings.load(root)
    with ctx.write() as conn:
        ledger.reap(conn, ctx.now)
        approvals.reap(conn, ctx.now)
        active = ledger.active_count(conn)
        total = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
        pending = approvals.pending_count(conn)
        live = sessions.live_count(conn, ctx.now)
        default_preset = _default(conn, "preset")[0] or presets.DEFAULT
        default_tier = _default(conn, "sandbox")[0]
    env = dict(os.environ)
    return {
        "version": __version__, "store": root, "pid": os.getpid(),
        "python": sys.version.split()[0], "runs_active": active, "runs_total": total,
        "max_runs": conf["maxRuns"], "approvals_pending": pending, "sessions_live": live,
        "clients": {name: h.binary(env) for name, h in HEADLESS.items()},
        "default_preset": default_preset, "default_sandbox": default_tier,
        "approvals": "nexus" if conf["runApprovals"] else "client",
        "settings": {k: conf[k] for k in settings.KEYS},
        "settings_file": settings.path(root),
        "credentials_set": {k: bool(env.get(k)) for k in CREDENTIALS},
    }


def echo(ctx: Ctx, a: EchoArgs) -> dict:
    return {"text": a.text, "at_epoch": time.time()}
