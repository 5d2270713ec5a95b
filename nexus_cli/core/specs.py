"""contract/tools.json as the faces read it: every tool's compiled entry, its groups, and the
groups a `--tools` value names. Stdlib only and free of the registry, so `nexus mcp` can list
its tools without importing a feature."""

from __future__ import annotations

import json

from . import data
from .errors import NexusError
from .settings import DEFAULT_GROUPS, GROUPS

TYPE_CHECKING = False  # typing is not imported by `nexus mcp --tools` before it answers
if TYPE_CHECKING:
    from typing import Any

_SPECS: dict[str, dict[str, Any]] = {}


def specs() -> dict[str, dict[str, Any]]:
    """contract/tools.json by tool name, in its order (read once per process)."""
    if not _SPECS:
        with open(data.path("contract", "tools.json"), encoding="utf-8") as fh:
            _SPECS.update({t["name"]: t for t in json.load(fh)["tools"]})
    return _SPECS


def find(name: str) -> dict[str, Any]:
    found = specs().get(name)
    if found is None:
        raise NexusError("internal_error", name, "the tool is missing from contract/tools.json",
                         "run `python -m nexus_cli.gen` and reinstall")
    return found


def groups() -> list[str]:
    """Every group that has a tool served over MCP (what settings.GROUPS must say)."""
    return sorted({s["group"] for s in specs().values() if s["mcp"]})


def chosen_groups(text: str | None) -> tuple[str, ...]:
    """`a,b`, `default` or `all` as the groups they name; `invalid_argument` for an unknown one."""
    wanted = [g.strip() for g in (text or "default").split(",") if g.strip()]
    if not wanted:
        wanted = ["default"]
    out: list[str] = []
    for g in wanted:
        out += DEFAULT_GROUPS if g == "default" else GROUPS if g == "all" else [g]
    unknown = sorted(set(out) - set(GROUPS))
    if unknown:
        raise NexusError("invalid_argument", "--tools", f"no tool group {', '.join(unknown)}",
                         f"choose from {', '.join(GROUPS)}, default or all")
    return tuple(dict.fromkeys(out))


def served(wanted: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The entries of the tools `nexus mcp` serves for these groups, in the contract's order."""
    chosen = set(chosen_groups(",".join(wanted)))
    return {n: s for n, s in specs().items() if s["mcp"] and s["group"] in chosen}
