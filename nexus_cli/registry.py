"""The one definition of every tool. The CLI, the MCP server, contract/tools.json and the man
pages are all generated from `TOOLS`; `invoke` is the one way any face runs a tool."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .context import Ctx
from .errors import NexusError
from .timefmt import stamp


@dataclass(frozen=True)
class Tool:
    name: str  # MCP name (snake_case); the CLI path is `command`
    group: str  # sessions | messages | store | clients ...
    title: str
    description: str
    args: type[BaseModel]
    result: type[BaseModel]
    run: Callable[[Ctx, Any], dict]
    command: tuple[str, ...] = ()
    positional: tuple[str, ...] = ()
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    mcp: bool = True  # served over MCP (install, doctor, ... are CLI only)
    needs_caller: bool = True  # the tool acts as (or for) the caller
    exit_false: tuple[str, int] | None = None  # (boolean result field, CLI exit code if False)

    @property
    def path(self) -> tuple[str, ...]:
        return self.command or (self.name,)

    @property
    def annotations(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": False,
        }


TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    if tool.name in TOOLS:
        raise ValueError(f"tool {tool.name!r} defined twice")
    TOOLS[tool.name] = tool
    return tool


def validation_error(exc: ValidationError, tool: Tool) -> NexusError:
    """Every problem pydantic found, in one line: `<field>: <why>, ...`."""

    def describe(err: Any) -> str:
        if err["type"] == "extra_forbidden":
            return "unknown argument"
        if err["type"] == "missing":
            return "required argument is missing"
        return err["msg"]

    errors = exc.errors()
    first = ".".join(str(p) for p in errors[0]["loc"]) or "arguments"
    reason = ", ".join(
        (f"{'.'.join(str(p) for p in e['loc'])}: " if i else "") + describe(e)
        for i, e in enumerate(errors[:5]))
    return NexusError("invalid_argument", f"{tool.name}.{first}", reason,
                      f"see `nexus {' '.join(tool.path)} --help`")


def parse_args(tool: Tool, raw: dict[str, Any]) -> BaseModel:
    try:
        return tool.args.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, tool) from None


def invoke(tool: Tool, ctx: Ctx, raw: dict[str, Any]) -> dict[str, Any]:
    """Validate the arguments before any work, run the domain function, and return the result
    in its stable JSON shape (checked against the result model)."""
    args = parse_args(tool, raw)
    result = stamp(tool.run(ctx, args))
    return tool.result.model_validate(result).model_dump(mode="json", by_alias=True)


def load() -> dict[str, Tool]:
    """Import every tool definition (they register themselves) and return the registry."""
    from . import tools  # noqa: F401  (registers the tools)

    return TOOLS
