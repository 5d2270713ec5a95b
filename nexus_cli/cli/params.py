"""Click parameters from a tool's compiled input schema (contract/tools.json): positional
arguments, flags, choices with completion, help texts with defaults. Values reach the tool as
typed, and `core.validate` checks them, so the CLI and MCP accept exactly the same."""

from __future__ import annotations

from typing import Any

import click

METAVAR = {"integer": "N", "number": "NUMBER", "string": "TEXT", "object": "JSON"}


def _kind(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return kind or "string"


def _help(prop: dict[str, Any]) -> str:
    text = prop.get("description", "")
    default = prop.get("default")
    if default not in (None, False, "", [], {}) and _kind(prop) != "boolean":
        text += f" [default: {default}]"
    return text


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def params(spec: dict[str, Any]) -> list[click.Parameter]:
    schema = spec["inputSchema"]
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    cli = spec["cli"]
    out: list[click.Parameter] = []
    for name in cli["positional"]:
        prop = props[name]
        choice = click.Choice(prop["enum"]) if "enum" in prop else None
        out.append(click.Argument([name], required=name in required, type=choice,
                                  metavar=name.upper()))
    for name, prop in props.items():
        if name in cli["positional"]:
            continue
        if _kind(prop) == "boolean":
            out.append(click.Option([flag(name), name], is_flag=True, default=None,
                                    help=_help(prop)))
        elif "enum" in prop:
            out.append(click.Option([flag(name), name], type=click.Choice(prop["enum"]),
                                    default=None, help=_help(prop)))
        else:
            out.append(click.Option([flag(name), name], default=None,
                                    metavar=prop.get("x-metavar") or METAVAR[_kind(prop)],
                                    help=_help(prop)))
    out.append(click.Option(["--json", "as_json"], is_flag=True,
                            help="Print the result as JSON (the stable shape in contract/)."))
    if cli["caller"]:
        out.append(click.Option(["--as", "as_"], default=None, metavar="SESSION",
                                help="Act as this session (exact id, handle or name). Refused "
                                "inside an agent session unless it names that session."))
    return out


def namer(spec: dict[str, Any]):
    """How to name an argument in an error: as the person typed it (`--count`, `TARGET`)."""
    positional = set(spec["cli"]["positional"])

    def name(path: tuple) -> str:
        if not path:
            return "arguments"
        head = str(path[0])
        shown = head.upper() if head in positional else flag(head)
        return shown + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:])

    return name
