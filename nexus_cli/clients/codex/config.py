"""Codex: where its config lives and nexus's edits to it. In config.toml only nexus's own table
is rendered (with tomli-w); every other byte, comments included, stays as it was."""

from __future__ import annotations

import re
import tomllib

from ...core.errors import NexusError
from .. import hookdefs
from ..configfile import Change, config_error, finish, load_json, plan, shape_error
from . import trust
from .trust import config_path, home_dir, hooks_path  # noqa: F401  (they live there)

TABLE = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*nexus\s*(\]|\.)")
HEADER = re.compile(r"^\s*\[")


def server_table(command: str, home: str | None, tools: str | None = None) -> dict:
    table: dict = {"command": command, "args": ["mcp", *(["--tools", tools] if tools else [])],
                   # without it Codex refuses MCP calls under approval_policy = "never"
                   "default_tools_approval_mode": "approve"}
    if home:
        table["env"] = {"NEXUS_HOME": home}
    return table


def parse(path: str, text: str) -> dict:
    """config.toml as data, refused when it does not parse or nexus's part has an odd shape."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise config_error(path, f"not valid TOML ({exc})") from None
    servers = data.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise shape_error(path, f"`mcp_servers` is a {hookdefs.kind(servers)}, not a table")
    ours = servers.get("nexus") if isinstance(servers, dict) else None
    if ours is not None and not isinstance(ours, dict):
        raise shape_error(path, f"`mcp_servers.nexus` is a {hookdefs.kind(ours)}, not a table")
    return data


def without_nexus_table(text: str) -> str:
    """The text with every `[mcp_servers.nexus...]` table cut out, nothing else touched. When
    nexus's table ends the file, the one blank line install put before it goes too."""
    out: list[str] = []
    skipping, cut_at = False, None
    for line in text.splitlines(keepends=True):
        if HEADER.match(line):
            skipping = bool(TABLE.match(line))
            if skipping:
                cut_at = len(out)
        if not skipping:
            out.append(line)
    if skipping and cut_at and cut_at == len(out) and out[-1].strip() == "":
        out.pop()
    return "".join(out)


def _others(data: dict) -> dict:
    """Everything but nexus's own table."""
    out = dict(data)
    servers = dict(out.get("mcp_servers") or {})
    servers.pop("nexus", None)
    if servers:
        out["mcp_servers"] = servers
    else:
        out.pop("mcp_servers", None)
    return out


def edit_config(path: str, text: str | None, install: bool, command: str,
                home: str | None, tools: str | None = None) -> str | None:
    import tomli_w

    original = parse(path, text or "")
    servers = original.get("mcp_servers") or {}
    ours = server_table(command, home, tools) if install else None
    if servers.get("nexus") == ours:
        return text  # already so: every byte stays
    rest = without_nexus_table(text or "")
    if install:
        if rest and not rest.endswith("\n"):
            rest += "\n"
        rest += ("\n" if rest else "") + tomli_w.dumps({"mcp_servers": {"nexus": ours}})
    try:
        result: dict | None = tomllib.loads(rest)
    except tomllib.TOMLDecodeError:
        result = None
    if result is None or _others(result) != _others(original) or (
            result.get("mcp_servers") or {}).get("nexus") != ours:
        raise NexusError(
            "config_conflict", path,
            "nexus's MCP server is defined there in a form nexus cannot edit without touching "
            "other settings (an inline table or dotted keys)",
            "remove `mcp_servers.nexus` by hand, then run the command again")
    return rest if rest.strip() else None


def edit_hooks(path: str, text: str | None, install: bool, filled: dict[str, str]) -> str | None:
    old = load_json(path, text)
    hookdefs.check_shape(path, old)
    return finish(text, old, hookdefs.edited(old, "codex", install, filled))


def changes(scope: str, project: str, install: bool, home: str | None,
            tools: str | None = None) -> list[Change]:
    command = hookdefs.nexus_command()
    filled = hookdefs.fills(home)
    hooks = hooks_path(scope, project)
    config = config_path(scope, project)
    return [plan(hooks, lambda t: edit_hooks(hooks, t, install, filled)),
            plan(config, lambda t: edit_config(config, t, install, command, home, tools))]


def inspect(scope: str, project: str) -> dict:
    from ..configfile import read_text

    hooks = hooks_path(scope, project)
    config = config_path(scope, project)
    conf_text = read_text(config)
    conf = parse(config, conf_text) if conf_text else {}
    servers = conf["mcp_servers"] if isinstance(conf.get("mcp_servers"), dict) else {}
    hook_conf = load_json(hooks, read_text(hooks))
    hookdefs.check_shape(hooks, hook_conf)
    return {"hooks_file": hooks, "hooks": hookdefs.installed(hook_conf),
            "outdated": hookdefs.outdated(hook_conf, "codex"),
            "mcp_file": config, "mcp": servers.get("nexus"),
            "untrusted": trust.untrusted(hooks, hook_conf, conf),
            "handlers": len(trust.keys(hooks, hook_conf))}
