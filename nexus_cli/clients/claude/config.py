"""Claude Code: where its settings live and nexus's edits to them."""

from __future__ import annotations

import os

from .. import hookdefs
from ..configfile import Change, finish, load_json, plan, shape_error

ALLOW = "mcp__nexus"  # lets the agent call every nexus tool without a permission prompt


def config_dir() -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")


def settings_path(scope: str, project: str) -> str:
    if scope == "project":
        return os.path.join(project, ".claude", "settings.json")
    return os.path.join(config_dir(), "settings.json")


def mcp_path(scope: str, project: str) -> str:
    if scope == "project":
        return os.path.join(project, ".mcp.json")
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    return (os.path.join(explicit, ".claude.json") if explicit
            else os.path.expanduser("~/.claude.json"))


def server_entry(command: str, home: str | None, tools: str | None = None) -> dict:
    """The shape `claude mcp add-json` writes."""
    return {"type": "stdio", "command": command,
            "args": ["mcp", *(["--tools", tools] if tools else [])],
            "env": {"NEXUS_HOME": home} if home else {}}


def check_settings(path: str, config: dict) -> None:
    hookdefs.check_shape(path, config)
    perms = config.get("permissions")
    if perms is not None and not isinstance(perms, dict):
        raise shape_error(path, f"`permissions` is a {hookdefs.kind(perms)}, not an object")
    allow = perms.get("allow") if isinstance(perms, dict) else None
    if allow is not None and not (isinstance(allow, list)
                                  and all(isinstance(r, str) for r in allow)):
        raise shape_error(path, "`permissions.allow` is not a list of rules")


def check_servers(path: str, config: dict) -> None:
    servers = config.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise shape_error(path, f"`mcpServers` is a {hookdefs.kind(servers)}, not an object")
    ours = servers.get("nexus") if isinstance(servers, dict) else None
    if ours is not None and not isinstance(ours, dict):
        raise shape_error(path, f"`mcpServers.nexus` is a {hookdefs.kind(ours)}, not an object")


def with_allow(config: dict, install: bool) -> dict:
    out = dict(config)
    perms = out.get("permissions")
    if not isinstance(perms, dict):
        if not install:
            return out
        perms = {}
    allow = perms.get("allow") or []
    allow = [r for r in allow if r != ALLOW] + ([ALLOW] if install else [])
    perms = {**perms, "allow": allow}
    if not allow:
        del perms["allow"]
    if perms:
        out["permissions"] = perms
    else:
        out.pop("permissions", None)
    return out


def edit_settings(path: str, text: str | None, install: bool, filled: dict[str, str]) -> str | None:
    old = load_json(path, text)
    check_settings(path, old)
    return finish(text, old, with_allow(hookdefs.edited(old, "claude", install, filled), install))


def edit_mcp(path: str, text: str | None, install: bool, command: str, home: str | None,
             tools: str | None = None) -> str | None:
    old = load_json(path, text)
    check_servers(path, old)
    new = dict(old)
    servers = dict(old.get("mcpServers") or {})
    if install:
        servers["nexus"] = server_entry(command, home, tools)
    else:
        servers.pop("nexus", None)
    if servers:
        new["mcpServers"] = servers
    else:
        new.pop("mcpServers", None)
    return finish(text, old, new)


def changes(scope: str, project: str, install: bool, home: str | None,
            tools: str | None = None) -> list[Change]:
    command = hookdefs.nexus_command()
    filled = hookdefs.fills(home)
    settings = settings_path(scope, project)
    mcp = mcp_path(scope, project)
    return [plan(settings, lambda t: edit_settings(settings, t, install, filled)),
            plan(mcp, lambda t: edit_mcp(mcp, t, install, command, home, tools))]


def inspect(scope: str, project: str) -> dict:
    """What nexus finds of itself in Claude Code's config (for doctor)."""
    from ..configfile import read_text

    settings = settings_path(scope, project)
    mcp = mcp_path(scope, project)
    conf = load_json(settings, read_text(settings))
    check_settings(settings, conf)
    servers_conf = load_json(mcp, read_text(mcp))
    check_servers(mcp, servers_conf)
    servers = servers_conf.get("mcpServers") or {}
    return {"hooks_file": settings, "hooks": hookdefs.installed(conf),
            "outdated": hookdefs.outdated(conf, "claude"), "mcp_file": mcp,
            "mcp": servers.get("nexus") if isinstance(servers, dict) else None,
            "allowed": ALLOW in ((conf.get("permissions") or {}).get("allow") or [])}
