"""`nexus install` / `nexus uninstall`: wire a client's hooks and MCP server to this nexus."""

from __future__ import annotations

import os
from typing import Any

from ..clients import configfile, hookdefs
from ..clients.claude import config as claude
from ..clients.codex import config as codex
from ..core import identity, registry, shellcmd
from ..core.context import Ctx
from ..core.settings import DEFAULT_GROUPS
from ..core.store import paths

CLIENTS = {"claude": claude, "codex": codex}


def notes(client: str, scope: str, project: str, install: bool, changes: list,
          trusted: bool = False) -> list[str]:
    """What to do next, as things stand once `changes` are written (nothing to restart when
    nothing changed; no review to ask for when Codex already trusts every nexus hook)."""
    out = []
    if any(c.changed for c in changes):
        out.append("restart the client so it stops calling nexus" if not install else
                   "restart the client (new sessions pick the hooks up; `/hooks` in a running "
                   "Claude Code session reloads them)" if client == "claude" else
                   "restart Codex so it loads the hooks and the MCP server")
    if client != "codex" or not install:
        return out
    reviewed, project_trusted = codex.once_written(changes, project)
    if trusted:
        out.append(f"nexus's hooks are recorded as trusted in {codex.trust.state_path()} (as "
                   "Codex's /hooks review records them); `nexus doctor` shows their state")
    elif not reviewed:
        out.append("Codex skips hooks you have not reviewed: start `codex` and choose to trust the "
                   "new hooks when it asks (or review them with /hooks), or run `nexus install "
                   "codex --trust` at your terminal; `nexus doctor` shows which are trusted "
                   "(automation: `codex exec --dangerously-bypass-hook-trust`)")
    if scope == "project" and not project_trusted:
        out.append(f"Codex reads {project}/.codex only in trusted projects: add "
                   f"[projects.\"{project}\"] trust_level = \"trusted\" to "
                   f"{codex.config_path('user', project)}")
    return out


def _git_hook(a: Any, install: bool) -> dict:
    """The commit guard: this repository's pre-commit hook runs `nexus guard --staged`."""
    from ..core.errors import NexusError
    from ..reservations import githook

    if a.scope != "user" or getattr(a, "tools", "default") != "default" or \
            getattr(a, "trust", False):
        raise NexusError("invalid_argument", "--scope" if a.scope != "user" else "--tools"
                         if getattr(a, "tools", "default") != "default" else "--trust",
                         "git-hook is installed into the repository you are in",
                         "leave out --scope, --tools and --trust (they are for claude and codex)")
    if install:
        command = hookdefs.fills(paths.explicit_home())["{nexus}"]
        files = githook.install(command, a.dry_run)
    else:
        files = githook.uninstall(a.dry_run)
    notes = []
    if install and not a.dry_run:
        notes.append("before each commit in this repository, `nexus guard --staged` refuses one "
                     "that touches a file another session holds exclusively (`git commit "
                     "--no-verify` skips it)")
    elif not install and not files:
        notes.append("no nexus commit guard in this repository: nothing to remove")
    return {"client": a.client, "scope": "repository", "dry_run": a.dry_run,
            "installed": install, "files": files, "notes": notes}


def _trust_allowed(a: Any) -> None:
    """Trusting hooks is the person's review: an agent may not trust the hooks it runs under,
    and a script or detached process may not either (it needs the person's terminal)."""
    from ..core import caller
    from ..core.errors import NexusError

    if a.client != "codex":
        raise NexusError("invalid_argument", "--trust", "only Codex asks for hooks to be trusted",
                         f"run `nexus install {a.client}` without --trust")
    if a.dry_run:
        return  # shows the edit, writes nothing
    caller.person_here("--trust", "trusting hooks", "an agent may not trust hooks for itself: "
                       "Codex's review of them is the person's",
                       "ask the person to run `nexus install codex --trust` in their terminal",
                       "run `nexus install codex --trust` yourself at a terminal, or review the "
                       "hooks in Codex (/hooks)")


def _run(ctx: Ctx, a: Any, install: bool) -> dict:
    if a.client == "git-hook":
        return _git_hook(a, install)
    project = identity.project_root(os.getcwd())
    home = paths.explicit_home()
    tools = None
    if install:
        chosen = registry.chosen_groups(a.tools)
        tools = None if chosen == DEFAULT_GROUPS else ",".join(chosen)
    trusted = install and bool(getattr(a, "trust", False))
    if trusted:
        _trust_allowed(a)
    extra: list[str] = []
    changes = (codex.changes(a.scope, project, install, home, tools, trusted=trusted, told=extra)
               if a.client == "codex" else
               CLIENTS[a.client].changes(a.scope, project, install, home, tools))
    backups = [None] * len(changes) if a.dry_run else configfile.apply_all(changes)
    if install and not a.dry_run:
        command, why = shellcmd.probe()
        with ctx.store.write() as conn:  # what the greeting tells agents to run
            shellcmd.remember(conn, command)
        if command != "nexus":
            extra.append(f"agents will be told to run {command}: {'; '.join(why)}. To tell "
                         "them `nexus`, " + shellcmd.path_fix(command))
    if install and a.scope == "project" and not a.dry_run:
        extra.append("these project files name this machine's nexus "
                     f"({hookdefs.nexus_command()}){' and NEXUS_HOME' if home else ''}: a "
                     "teammate who commits and shares them needs nexus at the same path, or runs "
                     f"`nexus install {a.client} --scope project` on their machine")
    files = []
    for change, backup in zip(changes, backups, strict=True):
        action = ("unchanged" if not change.changed else "created" if change.before is None
                  else "removed" if change.after is None else "updated")
        files.append({"path": change.path, "action": action, "backup": backup,
                      "diff": change.diff() if change.changed else ""})
    return {"client": a.client, "scope": a.scope, "dry_run": a.dry_run,
            "installed": install, "files": files,
            "notes": [*notes(a.client, a.scope, project, install, changes, trusted), *extra]
            if not a.dry_run
            else extra}


def install(ctx: Ctx, a: Any) -> dict:
    return _run(ctx, a, True)


def uninstall(ctx: Ctx, a: Any) -> dict:
    return _run(ctx, a, False)
