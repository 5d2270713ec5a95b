"""The tools `nexus mcp` serves as `tools/list` shows them, read from contract/tools.json alone:
listing needs no feature, no pydantic and no store. Stdlib only."""

from __future__ import annotations

from typing import Any

LISTED = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def entry(found: dict[str, Any]) -> dict:
    """A tool's `tools/list` entry: its contract entry, without the CLI-only fields, and with an
    input schema the model reads cheaply (every request of every session carries it)."""
    return {**{k: found[k] for k in LISTED}, "inputSchema": lean_input(found["inputSchema"])}


def lean_input(schema: Any) -> Any:
    """The input schema as listed: without string length bounds, a `default` of false or 0 and
    nexus's own `x-` hints (for its error messages). All still hold (the contract's schema is
    enforced, and a call past a bound gets an error naming it); a model needs them far less than
    it pays for them on every request."""
    if isinstance(schema, list):
        return [lean_input(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: lean_input(v) for k, v in schema.items()
            if not (k in ("minLength", "maxLength") and isinstance(v, int))
            and not (k == "default" and v in (False, 0))
            and not k.startswith("x-")}
