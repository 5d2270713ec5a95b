"""The store tools: where it lives, and maintenance on demand."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import config, render, upkeep

register(Tool(
    name="path", group="store", title="Where the store lives",
    description="Print the store directory (set NEXUS_HOME to move it); --json adds the database "
    "file and its schema.",
    args="NoArgs", result="PathResult", run=upkeep.store_path, render=render.path,
    read_only=True, idempotent=True, mcp=False, needs_caller=False,
    example="nexus path",
))
register(Tool(
    name="version", group="store", title="Versions",
    description="Print nexus's version and the version of its JSON shapes (contract_version): "
    "what a program reading `--json` output checks first.",
    details="The MCP server says the same in its `initialize` result: serverInfo.version and "
    "_meta[\"nexus/contract_version\"].",
    args="NoArgs", result="VersionResult", run=upkeep.version, render=render.version,
    read_only=True, idempotent=True, mcp=False, needs_caller=False,
    example="nexus version --json",
))
register(Tool(
    name="maintenance", group="store", title="Run maintenance now",
    description="Expire unread messages older than 24 h (notifying their senders), record "
    "sessions whose client process exited as offline, clear sessions stuck listening after their "
    "waiter exited, purge old tool-use bindings. Normal "
    "commands do this lazily; this does it now. Also migrates an older store.",
    args="NoArgs", result="MaintenanceResult", run=upkeep.maintenance, render=render.maintenance,
    destructive=True, idempotent=True, mcp=False, needs_caller=False,
    example="nexus maintenance",
))
register(Tool(
    name="config_list", group="store", title="List the settings",
    description="Every setting with its value, where it comes from (the file or the default), "
    "its range and what it does.",
    args="NoArgs", result="ConfigResult", run=config.config_list, render=render.config,
    command=("config", "list"), read_only=True, idempotent=True, mcp=False, needs_caller=False,
    example="nexus config list",
))
register(Tool(
    name="config_get", group="store", title="Show a setting",
    description="One setting's value (with --json: its source, default and range).",
    args="ConfigGetArgs", result="Setting", run=config.config_get, render=render.setting,
    command=("config", "get"), positional=("key",), read_only=True, idempotent=True, mcp=False,
    needs_caller=False,
    example="nexus config get runWait",
))
register(Tool(
    name="config_set", group="store", title="Change a setting",
    description="Set one setting in config.toml (checked against its range); without a value, "
    "back to its default. Other lines of the file, comments included, stay as they are.",
    args="ConfigSetArgs", result="Setting", run=config.config_set, render=render.changed,
    command=("config", "set"), positional=("key", "value"), destructive=True, idempotent=True,
    mcp=False, needs_caller=False,
    example="nexus config set runWait 30",
))
