"""contract/: what programs may rely on, generated from the registry (each tool's pydantic
models compiled to JSON Schema), the error table and the hook specification. The CLI and the MCP
server run from contract/tools.json, so a tool exists for them once it is generated here."""

from __future__ import annotations

import importlib
import json
from typing import Any

from .. import CONTRACT_VERSION
from ..catalog import load
from ..core.errors import CODES, exits
from ..core.registry import Tool
from . import generated, hookspec

MESSAGE_SHAPE = "<code>: <key> (<reason>; <next action>)"
VERSIONING = {
    "read_it": ["nexus version --json: contract_version",
                "MCP initialize result: _meta[\"nexus/contract_version\"]"],
    "rule": "Within one contract_version shapes only gain (tools, optional arguments, result "
            "fields, error codes, enumerated values): ignore unknown fields, treat an unknown "
            "value as other. Anything else is a new contract_version (contract/README.md).",
}


def model(tool: Tool, name: str) -> Any:
    feature = importlib.import_module(tool.models)
    found = getattr(feature, name, None)
    if found is None:
        found = getattr(importlib.import_module("nexus_cli.core.models"), name)
    return found


def lean(schema: Any, inputs: bool) -> Any:
    """A schema without what only costs bytes: titles, `default: null`, and `anyOf [T, null]`:
    for an optional argument it goes (null is accepted as "not given" anyway); in a result it
    becomes `type: [T, "null"]` where T is a plain type. (mcp.listing.lean_input trims the input
    schemas further as they are listed.)"""
    if isinstance(schema, list):
        return [lean(s, inputs) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: lean(v, inputs) for k, v in schema.items()
           if not (k == "title" and isinstance(v, str)) and not (k == "default" and v is None)}
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        kept = next(o for o in options if o != {"type": "null"})
        if inputs:
            del out["anyOf"]
            out = {**kept, **out}
        elif isinstance(kept.get("type"), str):
            del out["anyOf"]
            out = {**kept, **out, "type": [kept["type"], "null"]}
            if "enum" in kept:
                out["enum"] = [*kept["enum"], None]
    return out


def tool_entry(tool: Tool) -> dict[str, Any]:
    args, result = model(tool, tool.args), model(tool, tool.result)
    input_schema = lean(args.model_json_schema(by_alias=True, mode="validation"), inputs=True)
    input_schema.setdefault("properties", {})
    return {
        "name": tool.name,
        "group": tool.group,
        "command": "nexus " + " ".join(tool.path),
        "mcp": tool.mcp,
        "module": tool.module,  # the feature module that registers it: a face imports just that
        "title": tool.title,
        "description": tool.description,
        "details": tool.details,
        "example": tool.example,
        "inputSchema": input_schema,
        "outputSchema": lean(result.model_json_schema(by_alias=True, mode="serialization"),
                             inputs=False),
        "annotations": tool.annotations,
        "cli": None if not tool.cli else {"path": list(tool.path),
                "positional": list(tool.positional), "stdin": list(tool.stdin),
                "caller": tool.needs_caller,
                "exit_if": list(tool.exit_if) if tool.exit_if else None},
    }


def mcp_doc() -> dict[str, Any]:
    """How `nexus mcp` speaks: the two eras of the protocol, and the shape of a failed call."""
    from ..mcp import server, tools

    return {
        "transport": "stdio, one JSON-RPC 2.0 message a line",
        "legacy": {"versions": list(server.LEGACY), "opened_by": "initialize",
                   "methods": ["initialize", "ping", "tools/list", "tools/call"]},
        "stateless": {"versions": list(server.MODERN),
                      "request_meta": [server.META_VERSION, server.META_CAPABILITIES],
                      "methods": ["server/discover", "tools/list", "tools/call"],
                      "result_fields": ["resultType", f"_meta.{server.META_SERVER}"],
                      "cacheable": {"methods": ["server/discover", "tools/list"],
                                    "ttlMs": server.LIST_TTL_MS, "cacheScope": "public"},
                      "errors": {"missing _meta field": server.INVALID_PARAMS,
                                 "unsupported version": server.UNSUPPORTED_VERSION,
                                 "removed or unknown method": server.METHOD_NOT_FOUND}},
        "supported_versions": list(server.SUPPORTED),
        "capabilities": server.CAPABILITIES,
        "caller_from": ["_meta (claudecode/toolUseId, sessionId)", "the process that started "
                        "the server"],
        "default_request_id_from_meta": list(tools.CALL_IDS),
        "tool_error": {"isError": True, "text": MESSAGE_SHAPE,
                       "_meta": {tools.ERROR_META: "the error object of errors.json's "
                                                   "json_shape"},
                       "structuredContent": "never (it must match the tool's outputSchema)"},
    }


def tools_doc() -> dict[str, Any]:
    return {"contract_version": CONTRACT_VERSION, "versioning": VERSIONING, "mcp": mcp_doc(),
            "tools": [tool_entry(t) for t in load().values()]}


def errors_doc() -> dict[str, Any]:
    return {
        "contract_version": CONTRACT_VERSION,
        "message_shape": MESSAGE_SHAPE,
        "json_shape": {"error": {"code": "str", "key": "str", "reason": "str", "action": "str",
                                 "message": "str", "exit_code": "int", "details": "object?"}},
        "exit_codes": {str(code): name for code, name in exits().items()},
        "errors": [{"code": code, "exit_code": exit_, "meaning": meaning}
                   for code, (exit_, meaning) in CODES.items()],
    }


def hook_doc() -> dict[str, Any]:
    return {"contract_version": CONTRACT_VERSION, **hookspec.SPEC}


def render() -> dict[str, str]:
    docs = {"tools.json": tools_doc(), "errors.json": errors_doc(), "hook.json": hook_doc()}
    return {name: json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
            for name, doc in docs.items()}


def drift(directory: str) -> list[str]:
    """The generated files that are missing or differ in `directory`."""
    return generated.drift(directory, render(), ".json")


def write(directory: str) -> list[str]:
    return generated.write(directory, render(), ".json")
