"""The hook definitions installed into each client (data in hooks/, shipped in the package), and
how nexus recognises its own entries in a client's hook configuration."""

from __future__ import annotations

import copy
import json
import os
import shlex
import sys

from ..core import data

# which handlers are nexus's own: client runtime code (a run checks Codex's hook trust) reads them
from .hookshape import ENV_PREFIX, GUARD, PRESENT, is_ours, positions, unguarded  # noqa: F401


def definition(client: str) -> dict:
    with open(data.path("hooks", f"{client}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def nexus_command() -> str:
    """The absolute path of the console script beside this interpreter (never a shell shim)."""
    script = os.path.join(os.path.dirname(sys.executable), "nexus")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return script
    found = os.path.abspath(sys.argv[0]) if os.path.basename(sys.argv[0]) == "nexus" else None
    if found and os.access(found, os.X_OK):
        return found
    from ..core.errors import NexusError

    raise NexusError("config_unwritable", script, "the nexus console script was not found",
                     "install nexus with pip into a virtual environment and run its `nexus`")


def fills(home: str | None) -> dict[str, str]:
    """What the placeholders of hooks/*.json become: {nexus}, the command (with NEXUS_HOME when
    one is set), {script}, the console script alone (each handler tests it is there), {news},
    the store's news folder (the PostToolUse guard tests it), {team}, the
    file `nexus team join` writes (the same guard: in team mode mail from another machine raises
    no marker here), and {reserved}, the store's reservation marker (the guard of the
    file-editing tools' PreToolUse)."""
    from ..core.store import news, paths, team
    from ..reservations import marker

    prefix = shlex.quote(nexus_command())
    root = os.path.abspath(os.path.expanduser(home)) if home else paths.home()
    joined = os.path.join(root, team.FILE) if home else team.url_file()
    return {"{nexus}": f"NEXUS_HOME={shlex.quote(home)} {prefix}" if home else prefix,
            "{script}": prefix,
            "{news}": shlex.quote(news.folder(root)), "{team}": shlex.quote(joined),
            "{reserved}": shlex.quote(marker.path(root))}


def hooks(client: str, filled: dict[str, str]) -> dict:
    """The client's hook table with the placeholders filled in."""
    table = copy.deepcopy(definition(client)["hooks"])
    for groups in table.values():
        for group in groups:
            for handler in group["hooks"]:
                for mark, value in filled.items():
                    handler["command"] = handler["command"].replace(mark, value)
    return table


def check_shape(path: str, config: dict) -> None:
    """Refuse a hook table of a shape nexus does not understand (it would be mangled by an edit):
    `hooks` an object of event -> list of groups, each group an object whose `hooks` is a list."""
    from .configfile import shape_error

    table = config.get("hooks")
    if table is None:
        return
    if not isinstance(table, dict):
        raise shape_error(path, f"`hooks` is a {kind(table)}, not an object")
    for event, groups in table.items():
        if not isinstance(groups, list):
            raise shape_error(path, f"`hooks.{event}` is a {kind(groups)}, not a list")
        for i, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
                raise shape_error(path, f"`hooks.{event}[{i}]` is not an object with a list "
                                  "of handlers")


def kind(value: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "number",
            float: "number", type(None): "null"}.get(type(value), type(value).__name__)


def strip(table: object) -> dict:
    """The hook table without nexus's handlers (empty groups and events dropped)."""
    if not isinstance(table, dict):
        return {}
    out: dict = {}
    for event, groups in table.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [h for h in group["hooks"] if not is_ours(h)]
                if handlers:
                    kept.append({**group, "hooks": handlers})
                elif not group["hooks"]:
                    kept.append(group)
            else:
                kept.append(group)
        if kept:
            out[event] = kept
    return out


def edited(config: dict, client: str, install: bool, filled: dict[str, str]) -> dict:
    """The config with nexus's handlers for `client` (re)installed, or removed."""
    out = dict(config)
    table = strip(config.get("hooks"))
    if install:
        for event, groups in hooks(client, filled).items():
            table[event] = [*table.get(event, []), *groups]
    if table or install:
        out["hooks"] = table
    else:
        out.pop("hooks", None)
    return out


def installed(config: dict) -> dict[str, list[str]]:
    """event -> nexus commands found in a config's hook table."""
    found: dict[str, list[str]] = {}
    for event, gi, hi in positions(config):
        found.setdefault(event, []).append(config["hooks"][event][gi]["hooks"][hi]["command"])
    return found


def guard_kind(command: str) -> str | None:
    """What a handler's guard tests: `news` (the client process's marker; `news, team` with the
    team database's file and variable beside it), `reserved` (the store's reservation marker),
    `run` (a `nexus run` client's variable), or None (no guard)."""
    found = GUARD.match(PRESENT.sub("", command, count=1))
    return None if found is None else ("news, team" if found.group(2) else "news") \
        if found.group(1) else "run" if found.group(3) else "reserved"


def shapes(table: object) -> set[tuple]:
    """nexus's handlers in a hook table, as what matters for how they run: event, matcher, the
    guard, whether it tests that the script is there, the arguments, the timeout, async flags
    and what a rewake shows (not the path of the script)."""
    out = set()
    for event, groups in (table or {}).items() if isinstance(table, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict):
                continue
            for h in group.get("hooks", []) if isinstance(group.get("hooks"), list) else ():
                if is_ours(h):
                    out.add((event, group.get("matcher"), guard_kind(h["command"]),
                             bool(PRESENT.match(h["command"])),
                             tuple(shlex.split(unguarded(h["command"]))[-2:]),
                             h.get("timeout"), h.get("async"), h.get("asyncRewake"),
                             h.get("rewakeSummary"), h.get("rewakeMessage")))
    return out


def outdated(config: dict, client: str) -> bool:
    """Whether the nexus handlers in a config differ from the ones this nexus installs (an
    older table: `nexus install` again brings it up to date)."""
    return shapes(config.get("hooks")) != shapes(hooks(client, {"{nexus}": "nexus",
                                                                "{script}": "nexus",
                                                                "{news}": "news",
                                                                "{team}": "team.url",
                                                                "{reserved}": "reserved"}))
