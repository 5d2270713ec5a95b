"""The one definition of every tool, and the one way any face runs it.

Each feature package declares its tools in its `tools.py` with `register(Tool(...))`: name,
group, title, the names of its argument and result models (pydantic, in the feature's
`models.py`), the domain function and the human renderer. `python -m nexus_cli.gen` compiles the
models into `contract/tools.json`; the CLI and the MCP server validate arguments against those
schemas (`core.validate`), so running a tool never imports pydantic. Stdlib only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

from . import refs, validate
from . import specs as specs_
from .context import Ctx
from .errors import NexusError
from .specs import chosen_groups, groups, specs  # noqa: F401 (the faces import them here)
from .timefmt import stamp


@dataclass(frozen=True)
class Tool:
    name: str  # MCP name (snake_case); the CLI path is `command`
    group: str  # sessions | messages | tasks | store | clients ...
    title: str
    description: str  # one or two sentences: what it does and when to use it (MCP, --help)
    args: str  # the argument model's name in the feature's models.py
    result: str  # the result model's name there
    run: Callable[[Ctx, Any], dict]
    render: Callable[[dict], Any] | None = None  # human output (plain text or core.human parts)
    command: tuple[str, ...] = ()
    positional: tuple[str, ...] = ()
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False  # it may reach beyond nexus and this machine (an agent it starts)
    mcp: bool = True  # served over MCP (install, doctor, ... are CLI only)
    cli: bool = True  # a CLI command (a few MCP tools are another tool's flag there)
    needs_caller: bool = True  # the tool acts as (or for) the caller
    exit_if: tuple[str, object, int] | None = None  # (result field, value, CLI exit code)
    details: str = ""  # more for --help and the man page, beyond what MCP clients are sent
    example: str = ""  # one command line, as typed at a shell (--help, the man page, docs)
    stdin: tuple[str, ...] = field(default=())  # arguments that may be `-` (read from stdin)
    module: str = ""  # the feature's tools module that registered it (set by `register`)

    @property
    def path(self) -> tuple[str, ...]:
        return self.command or (self.name,)

    @property
    def models(self) -> str:
        """The module holding this tool's models: `models` beside its domain function."""
        return self.run.__module__.rsplit(".", 1)[0] + ".models"

    @property
    def annotations(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


# the tool groups in the order `nexus --help` lists them, with the title of their man page and
# docs section
GROUP_TITLES = {
    "clients": "wiring Claude Code and Codex to nexus",
    "sessions": "finding sessions and presenting yourself",
    "messages": "direct messages between sessions",
    "tasks": "delegated tasks and their reports",
    "lifecycle": "a conversation's successor after /clear",
    "reservations": "file reservations, enforced at the edit and at the commit",
    "insight": "what sessions did: transcripts, stats, search, titles, the wait graph, the board",
    "runs": "headless runs of Claude Code and Codex, presets, policy and status",
    "approvals": "permission requests of runs, answered by a peer or a person",
    "workspace": "the shared workspace: projects, docs, meetings, chat, tasks, the activity log",
    "files": "files in your project, for agents whose sandbox cannot see them",
    "team": "team mode: the store on a PostgreSQL server shared across machines",
    "store": "the per-user store and your settings",
    "integration": "help, manuals, shell completion, and the entry points the clients call",
}


TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    """Called by each feature's tools.py (its module is recorded, so a face can import just the
    feature a command needs)."""
    import sys

    if tool.name in TOOLS:
        raise ValueError(f"tool {tool.name!r} defined twice")
    module = sys._getframe(1).f_globals.get("__name__", "")
    TOOLS[tool.name] = tool = replace(tool, module=module)
    return tool


def spec(tool: Tool) -> dict[str, Any]:
    return specs_.find(tool.name)


Namer = Callable[[tuple], str]


def parse_args(tool: Tool, raw: dict[str, Any], namer: Namer | None = None) -> SimpleNamespace:
    """The arguments, checked and completed, or `invalid_argument` naming the one at fault the way
    the caller wrote it (`namer`: `--count` on the CLI, `read.count` over MCP)."""
    try:
        clean = validate.check(spec(tool)["inputSchema"], raw)
    except validate.Problem as exc:
        name = (namer or (lambda p: ".".join(map(str, (tool.name, *p)))))(exc.path)
        action = (f"see `nexus {' '.join(tool.path)} --help`" if exc.kind != "unknown"
                  else f"the arguments are listed by `nexus {' '.join(tool.path)} --help`")
        raise NexusError("invalid_argument", name, exc.reason, action) from None
    assert isinstance(clean, dict)
    return SimpleNamespace(**clean)


def invoke(tool: Tool, ctx: Ctx, raw: dict[str, Any], namer: Namer | None = None) -> dict[str, Any]:
    """Validate the arguments before any work, run the domain function, and return its result in
    the stable JSON shape (ISO times beside every `_epoch`)."""
    args = parse_args(tool, raw, namer)
    ctx.store.command()  # one budget for the command's waits for a team server
    refs.expand(spec(tool)["inputSchema"], args, ctx)  # `t-820b` for the one task it begins
    result = stamp(tool.run(ctx, args))
    if tool.read_only and isinstance(result, dict) and result.get("total") == 0 and \
            getattr(ctx.store, "backend", "") == "sqlite":
        ctx.store.vouch()  # "no sessions" only from a store that is not damaged
    return result  # type: ignore[return-value]
