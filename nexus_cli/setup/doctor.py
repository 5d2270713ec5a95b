"""`nexus doctor`: read-only checks, one line each with a fix. Never writes the store or a
config."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from typing import Any

from ..clients import hookdefs
from ..clients.claude import config as claude
from ..clients.codex import config as codex
from ..core import identity, interp, registry, sessions, settings, shellcmd
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.proctable import table
from ..core.store.db import Store, damaged
from . import manuals

BUDGET = 1.3  # hook hot path vs `python -c "import json, sqlite3"`
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")


def check(name: str, status: str, detail: str, fix: str = "") -> dict:
    return {"name": name, "status": status, "detail": detail, "fix": fix}


def _tls(info: dict, socket: bool) -> dict:
    """Encryption, and whether the server it talks to was verified (else anyone on the way
    could pose as it, and read every message). A Unix socket needs neither."""
    how = info.get("tls_verification", "")
    if how == "full":
        return check("tls", "ok", "encrypted; the server verified (its certificate and name)")
    if how == "ca":
        return check("tls", "ok", "encrypted; the server's certificate verified, not its name",
                     "sslmode=verify-full checks the name too")
    return check("tls", "ok" if socket else "warn",
                 "encrypted, but the server not verified: anyone on the way could pose as it"
                 if info["tls"] else "not encrypted",
                 "" if socket else "add sslmode=verify-full and sslrootcert=<the server's CA "
                 "certificate> (or sslrootcert=system) to the URL")


def team_checks(store: Any) -> list[dict]:
    """The team database: reachable, server version, schema, latency, TLS, the role's rights,
    row-level security; hooks that could not reach it lately."""
    from ..core.store import pg

    try:
        info = pg.ping(store.url)
    except NexusError as exc:
        return [check("team database", "fail", exc.message, exc.action)]
    out = [check("team database", "ok", f"{store.path}: PostgreSQL {info['server_version']}, "
                 f"role {info['role']}, schema {info['schema']}")]
    current = info["schema_version"] == info["schema_current"]
    out.append(check("schema", "ok" if current else "fail",
                     f"schema {info['schema_version']} (this nexus: {info['schema_current']})",
                     "" if current else "run `nexus team join URL` again (it migrates), or ask "
                     "the administrator to run `nexus team init --apply`"))
    slow = info["latency_ms"] > 20
    out.append(check("latency", "warn" if slow else "ok",
                     f"{info['latency_ms']:.2f} ms a round trip, {info['connect_ms']:.1f} ms to "
                     "connect", "hooks connect on every call: a server this far slows every "
                     "agent; prefer one near (same site)" if slow else ""))
    out.append(_tls(info, "host=/" in store.url))
    out.append(check("role rights", "ok" if info["schema_usage"] else "fail",
                     "row-level security on: each role sees only its own sessions' mail"
                     if info["row_security"] else "row-level security off: every role that can "
                     "connect reads every inbox",
                     "" if info["schema_usage"] and info["row_security"] else
                     "the administrator runs `nexus team init ROLE... --apply`"))
    if not info["row_security"]:
        out[-1]["status"] = "warn" if info["schema_usage"] else "fail"
    if current and info["schema_usage"]:
        try:
            with store.read() as conn:
                out.append(row_check(conn))
        except NexusError as exc:
            out.append(check("rows", "fail", exc.message, exc.action))
    log = os.path.join(store.root, "team-offline.log")
    try:
        with open(log, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        lines = []
    recent = [line for line in lines[-50:] if line.split(" ", 1)[0].replace(".", "").isdigit()
              and time.time() - float(line.split(" ", 1)[0]) < 86400]
    if recent:
        out.append(check("hooks offline", "warn", f"{len(recent)} hook calls in the last 24 h "
                         f"could not reach the team database ({log})",
                         "check the server and the network; those events were not recorded"))
    return out


def store_checks(store: Store) -> list[dict]:
    if getattr(store, "backend", "sqlite") == "postgresql":
        return team_checks(store)
    out = []
    try:
        if not (store.check_dir() and store.check_file()):
            return [check("store", "ok", f"{store.root}: not created yet (the first write creates "
                          "it, private)")]
        out.append(check("store", "ok", f"{store.path} is private (0700/0600) and a nexus store"))
    except NexusError as exc:
        return [check("store", "fail", exc.message, exc.action)]
    try:
        with store.read() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            ok = conn.execute("PRAGMA quick_check").fetchone()[0]
            out.append(check("schema", "ok", f"schema {version} is current"))
            out.append(check("integrity", "ok" if ok == "ok" else "fail", f"quick_check: {ok}",
                             "" if ok == "ok" else damaged(store.path, "").action))
            out += session_checks(conn, time.time())
            out.append(row_check(conn))
    except NexusError as exc:
        out.append(check("schema", "fail", exc.message, exc.action))
    for file in (settings.legacy_path(store.root), settings.path(store.root)):
        if not os.path.exists(file):
            continue
        try:
            settings.read_file(file)
            out.append(check("settings", "ok", f"{file}: maxAutoTurns "
                             f"{settings.load(store.root)['maxAutoTurns']}"))
        except (OSError, ValueError) as exc:
            out.append(check("settings", "fail", f"{file} cannot be read: {exc}",
                             f"fix {file} by hand (the defaults are used meanwhile)"))
    return out


def process_check() -> dict:
    """Identity rests on the process table: which backend reads it, and whether it gave this
    shell's ancestry (without one, a command cannot tell which client it runs under)."""
    procs = table()
    how = {"proc": "/proc", "ps": "ps (macOS, BSD; or NEXUS_PROCESS_TABLE=ps)"}.get(
        procs.backend, procs.backend)
    if procs.get(os.getpid()) is None:
        return check("process table", "fail", f"{how}: this process cannot be read",
                     "nexus cannot tell which client a command runs under; report your "
                     "platform (`uname -a`) as a bug")
    chain = procs.ancestors()
    names = " < ".join(p.name for p in chain[:4]) + (" ..." if len(chain) > 4 else "")
    return check("process table", "ok", f"{how}: " + (f"this shell runs under {names}" if chain
                                                      else "this process runs directly under init"))


def row_check(conn: Any) -> dict:
    """Rows nexus would not have written (by hand, or a member's plain SQL): each is read past
    wherever nexus reads (core/store); here they are named."""
    from ..core import store
    from ..core.text import visible

    bad, found = store.scan_rows(conn)
    if not bad:
        return check("rows", "ok", "every row has the shape nexus writes")
    named = "; ".join(visible(f"{t} {key} ({col})", keep_lines=False) for t, key, col in found)
    more = f" and {bad - len(found)} more" if bad > len(found) else ""
    return check("rows", "warn", f"{bad} row{'s' if bad != 1 else ''} nexus reads past: "
                 f"{named}{more}", "fix or delete them in the database (nexus never wrote them)")


def session_checks(conn: Any, now: float) -> list[dict]:
    rows = sessions.troubled(conn)
    stuck = [r["name"] for r in rows if r["status"] == "listening" and sessions.here(r)
             and not table().alive(r["waiter_pid"])]
    failed = [f"{r['name']}: {r['last_wake_error']}" for r in rows if r["last_wake_error"]]
    live = sessions.live_count(conn, now)
    out = [check("sessions", "warn" if stuck else "ok",
                 f"{live} live; stuck listening (waiter gone): {', '.join(stuck)}" if stuck
                 else f"{live} live, none stuck", "run `nexus maintenance`" if stuck else "")]
    if failed:
        out.append(check("wakes", "warn", "last wake failed for " + "; ".join(failed[:5]),
                         "check that the client is running; the messages stay unread and "
                         "announced at the next prompt"))
    return out


def client_version(binary: str) -> str | None:
    path = shutil.which(binary)
    if not path:
        return None
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return f"{path} (version unknown)"
    return (f"{path} "
            f"{done.stdout.strip().splitlines()[0] if done.stdout.strip() else '(no version)'}")


def executable_of(command: str) -> str:
    words = [w for w in shlex.split(hookdefs.unguarded(command))
             if "=" not in w.split("/")[0]]
    return words[0] if words else ""


def install_checks(name: str, module: Any, project: str) -> list[dict]:
    out = []
    version = client_version(name)
    out.append(check(f"{name}", "ok" if version else "warn",
                     version or f"`{name}` not found on PATH",
                     "" if version else "install it (npm i -g "
                     f"{'@anthropic-ai/claude-code' if name == 'claude' else '@openai/codex'}"
                     ") if you use it"))
    found, broken = None, False
    for scope in ("user", "project"):
        try:
            info = module.inspect(scope, project)
        except NexusError as exc:
            out.append(check(f"{name} config ({scope})", "fail", f"{exc.key}: {exc.reason}",
                             exc.action))
            broken = True
            continue
        except Exception as exc:  # whatever is in a client's file, doctor reports, never crashes
            out.append(check(f"{name} config ({scope})", "fail",
                             f"could not be read: {type(exc).__name__}: {exc}",
                             "look at the file by hand"))
            broken = True
            continue
        if info["hooks"] or info["mcp"]:
            found = (scope, info)
            break
    if found is None:
        if not broken:
            out.append(check(f"{name} hooks", "warn", "not installed",
                             f"run `nexus install {name}`"))
        return out
    scope, info = found
    missing = [e for e in EVENTS if e not in info["hooks"]]
    commands = {c for cs in info["hooks"].values() for c in cs}
    unrunnable = sorted({executable_of(c) for c in commands
                         if not os.access(executable_of(c), os.X_OK)})
    if missing or unrunnable:
        out.append(check(f"{name} hooks", "fail",
                         f"{info['hooks_file']}: "
                         + (f"missing {', '.join(missing)}" if missing else "")
                         + (f" not executable: {', '.join(unrunnable)}" if unrunnable else ""),
                         f"run `nexus install {name} --scope {scope}`"))
    elif info.get("outdated"):
        out.append(check(f"{name} hooks", "warn", f"{info['hooks_file']}: the hook table of an "
                         "older nexus (it may start Python on every tool call)",
                         f"run `nexus install {name} --scope {scope}`"))
    else:
        out.append(check(f"{name} hooks", "ok", f"{info['hooks_file']} ({scope}): "
                         f"{len(EVENTS)} events, {executable_of(sorted(commands)[0])}"))
    mcp = info["mcp"]
    if not mcp:
        out.append(check(f"{name} mcp", "fail", f"{info['mcp_file']}: no nexus server",
                         f"run `nexus install {name} --scope {scope}`"))
    elif not os.access(str(mcp.get("command", "")), os.X_OK):
        out.append(check(f"{name} mcp", "fail", f"{info['mcp_file']}: {mcp.get('command')} "
                         "is not executable", f"run `nexus install {name} --scope {scope}`"))
    else:
        args = [str(a) for a in mcp.get("args") or []]
        chosen = args[args.index("--tools") + 1] if "--tools" in args[:-1] else "default"
        try:
            served = ", ".join(registry.chosen_groups(chosen))
        except NexusError as exc:
            out.append(check(f"{name} mcp", "fail", f"{info['mcp_file']}: {exc.reason}",
                             f"run `nexus install {name} --scope {scope} --tools default`"))
        else:
            out.append(check(f"{name} mcp", "ok", f"{info['mcp_file']}: {mcp['command']} mcp, "
                             f"tool groups {served}"))
    if name == "codex":
        out.append(codex_trust(info, scope))
    return out


def codex_trust(info: dict, scope: str) -> dict:
    """How Codex treats each of nexus's hooks: trusted (the hash it recorded at review matches the
    handler), changed since review, not reviewed, or turned off; Codex skips all but the first."""
    from ..clients.codex import trust

    if info.get("trust_unread"):
        return check("codex hook trust", "fail", info["trust_unread"],
                     "fix that file (Codex cannot read it either)")
    judged = info["trust"]
    count = {s: [j["event"] for j in judged if j["status"] == s]
             for s in (trust.CHANGED, trust.UNREVIEWED, trust.DISABLED)}
    if not any(count.values()):
        return check("codex hook trust", "ok", f"all {len(judged)} nexus hooks trusted")
    parts = [f"{len(events)} {what} ({', '.join(dict.fromkeys(events))})"
             for what, events in (("changed since review", count[trust.CHANGED]),
                                  ("not reviewed", count[trust.UNREVIEWED]),
                                  ("turned off", count[trust.DISABLED])) if events]
    fix = (f"run `nexus install codex --scope {scope} --trust` at your terminal, or review "
           "them in Codex (start `codex`, run /hooks)")
    if count[trust.DISABLED]:
        fix += "; turn the ones that are off back on in /hooks"
    return check("codex hook trust", "warn", f"of {len(judged)} nexus hooks, {'; '.join(parts)}: "
                 "Codex skips them", fix)


def timed_hook(runs: int = 7) -> dict:
    """A no-op hook call (an event nexus ignores) against the interpreter floor."""
    nexus = os.path.join(os.path.dirname(sys.executable), "nexus")
    if not os.path.exists(nexus):
        return check("hook speed", "warn", "no console script beside this interpreter", "")
    event = json.dumps({"hook_event_name": "Notification", "session_id": "doctor"}).encode()

    def once(cmd: list[str], data: bytes | None) -> float:
        start = time.perf_counter()
        subprocess.run(cmd, input=data, capture_output=True, cwd=interp.SAFE_CWD)
        return time.perf_counter() - start

    import statistics

    floor, hook = [], []
    for _ in range(runs):
        floor.append(once(interp.argv("-c", "import json, sqlite3"), None))
        hook.append(once([nexus, "hook", "claude"], event))
    ratio = statistics.median(hook) / statistics.median(floor)
    return check("hook speed", "ok" if ratio <= BUDGET else "warn",
                 f"no-op hook {statistics.median(hook) * 1000:.1f} ms = {ratio:.2f}x the "
                 f"interpreter floor (budget {BUDGET}x)",
                 "" if ratio <= BUDGET else "run `python -m compileall` on the nexus package; "
                 "avoid editable installs with import hooks")


def path_check() -> dict:
    """Whether an agent's login shell finds this nexus as `nexus`."""
    command, why = shellcmd.probe()
    if command == "nexus":
        return check("nexus on PATH", "ok", "a login shell finds this nexus as `nexus`")
    return check("nexus on PATH", "warn", "; ".join(why) + f" (agents are told {command})",
                 shellcmd.path_fix(command))


def doctor(ctx: Ctx, a: Any) -> dict:
    project = identity.project_root(os.getcwd())
    checks = store_checks(ctx.store)
    checks.append(process_check())
    checks.append(path_check())
    checks += install_checks("claude", claude, project)
    checks += install_checks("codex", codex, project)
    checks.append(check("manual pages", *manuals.check()))
    if not a.quick:
        checks.append(timed_hook())
    failed = sum(c["status"] == "fail" for c in checks)
    return {"ok": failed == 0, "failed": failed,
            "warnings": sum(c["status"] == "warn" for c in checks), "checks": checks}
