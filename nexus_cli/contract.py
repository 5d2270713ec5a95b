"""contract/: what programs may rely on, generated from the registry, the error table and the hook
specification. `nexus contract` writes it; `nexus contract --check` (and a test) fails on drift."""

from __future__ import annotations

import json
from typing import Any

from . import generated, hookspec
from .errors import CODES, Exit
from .registry import load

CONTRACT_VERSION = 1
MESSAGE_SHAPE = "<code>: <key> (<reason>; <next action>)"


def tools_doc() -> dict[str, Any]:
    from .mcp.tools import entry

    tools = []
    for tool in load().values():
        tools.append({
            "group": tool.group,
            "command": "nexus " + " ".join(tool.path),
            "mcp": tool.mcp,
            **entry(tool),
        })
    return {"contract_version": CONTRACT_VERSION, "tools": tools}


def errors_doc() -> dict[str, Any]:
    return {
        "contract_version": CONTRACT_VERSION,
        "message_shape": MESSAGE_SHAPE,
        "json_shape": {"error": {"code": "str", "key": "str", "reason": "str", "action": "str",
                                 "message": "str", "exit_code": "int", "details": "object?"}},
        "exit_codes": {str(int(e)): e.name.lower() for e in Exit},
        "errors": [{"code": code, "exit_code": int(exit_), "meaning": meaning}
                   for code, (exit_, meaning) in CODES.items()],
    }


def hook_doc() -> dict[str, Any]:
    return {"contract_version": CONTRACT_VERSION, **hookspec.SPEC}


def render() -> dict[str, str]:
    docs = {"tools.json": tools_doc(), "errors.json": errors_doc(), "hook.json": hook_doc()}
    return {name: json.dumps(doc, indent=2, ensure_ascii=False) + "\n" for name, doc in docs.items()}


def drift(directory: str) -> list[str]:
    """The generated files that are missing or differ in `directory`."""
    return generated.drift(directory, render(), ".json")


def write(directory: str) -> list[str]:
    return generated.write(directory, render(), ".json")
