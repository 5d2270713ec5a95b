"""Every `--json` output a test produces through `nx` is checked against its tool's published
schema (contract/tools.json), and the tools so checked are counted: a whole run of the suite
fails when a tool's output was never checked (tests/conftest.py). So a new tool's schema is
proved by its own tests, or for a tool served over MCP by the call tests/every_tool.py makes of
it, with no list of tools to keep anywhere."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

CONTRACT = Path(__file__).resolve().parents[1] / "contract" / "tools.json"
CHECKED: set[str] = set()  # tools whose output this process checked


@cache
def _tools() -> dict[tuple[str, ...], dict[str, Any]]:
    return {tuple(t["cli"]["path"]): t for t in json.loads(CONTRACT.read_text())["tools"]
            if t["cli"]}


ERROR = {"type": "object", "additionalProperties": False, "required": ["error"], "properties": {
    "error": {"type": "object", "required": ["code", "key", "reason", "action", "message",
                                              "exit_code"],
              "properties": {**{k: {"type": "string"} for k in (
                  "code", "key", "reason", "action", "message")},
                  "exit_code": {"type": "integer"}, "details": {"type": "object"}}}}}


def tool_of(args: tuple[str, ...]) -> dict[str, Any] | None:
    """The tool a command line runs: the longest command path its words start with."""
    words = [a for a in args if not a.startswith("-")]
    for n in range(len(words), 0, -1):
        found = _tools().get(tuple(words[:n]))
        if found is not None and tuple(args[:n]) == tuple(words[:n]):
            return found
    return None


def check(args: tuple[str, ...], out: str) -> None:
    """Validate what `nexus ARGS` printed, when it is a tool's --json output."""
    if "--json" not in args or not out.strip():
        return
    tool = tool_of(args)
    if tool is None:
        return
    data = json.loads(out)  # --json prints exactly one document
    if isinstance(data, dict) and set(data) == {"error"}:
        jsonschema.validate(data, ERROR)  # contract/errors.json's json_shape
        return
    jsonschema.validate(data, tool["outputSchema"])
    CHECKED.add(tool["name"])


def validate(name: str, data: Any) -> None:
    """Check a result of the tool `name` obtained another way (in-process, over MCP)."""
    tool = next(t for t in json.loads(CONTRACT.read_text())["tools"] if t["name"] == name)
    jsonschema.validate(data, tool["outputSchema"])
    CHECKED.add(name)


def unchecked(seen: set[str]) -> list[str]:
    return sorted({t["name"] for t in _tools().values()} - seen)
