"""The hook definitions installed into each client (data in hooks/, shipped in the package), and
how nexus recognises its own entries in a client's hook configuration."""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import sys

from ..core import data

# a handler nexus installed: `<anything>/nexus hook <client>` (optionally with NEXUS_HOME=...)
OURS = re.compile(r"(^|[\s/])nexus hook (claude|codex)\b")


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


def command_prefix(home: str | None) -> str:
    prefix = shlex.quote(nexus_command())
    return f"NEXUS_HOME={shlex.quote(home)} {prefix}" if home else prefix


def hooks(client: str, prefix: str) -> dict:
    """The client's hook table with the command filled in."""
    table = copy.deepcopy(definition(client)["hooks"])
    for groups in table.values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = handler["command"].replace("{nexus}", prefix)
    return table


def is_ours(handler: object) -> bool:
    return isinstance(handler, dict) and isinstance(handler.get("command"), str) and bool(
        OURS.search(handler["command"]))


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


def edited(config: dict, client: str, install: bool, prefix: str) -> dict:
    """The config with nexus's handlers for `client` (re)installed, or removed."""
    out = dict(config)
    table = strip(config.get("hooks"))
    if install:
        for event, groups in hooks(client, prefix).items():
            table[event] = [*table.get(event, []), *groups]
    if table or install:
        out["hooks"] = table
    else:
        out.pop("hooks", None)
    return out


def positions(config: dict) -> list[tuple[str, int, int]]:
    """(event, group index, handler index) of every nexus handler in a hook table."""
    found = []
    table = config.get("hooks") if isinstance(config.get("hooks"), dict) else {}
    for event, groups in table.items():
        for gi, group in enumerate(groups if isinstance(groups, list) else []):
            for hi, handler in enumerate(group.get("hooks", []) if isinstance(group, dict) else []):
                if is_ours(handler):
                    found.append((event, gi, hi))
    return found


def installed(config: dict) -> dict[str, list[str]]:
    """event -> nexus commands found in a config's hook table."""
    found: dict[str, list[str]] = {}
    for event, gi, hi in positions(config):
        found.setdefault(event, []).append(config["hooks"][event][gi]["hooks"][hi]["command"])
    return found
