"""The click face: one subcommand per registry tool (grouped by `Tool.command`), plus the
commands that are not tools (`hook`, `mcp`, ...). Built from the registry, never by hand."""

from __future__ import annotations

import os
import sys
import types
import typing
from typing import Any

import click
from pydantic.fields import FieldInfo

from .. import __version__
from ..context import Ctx, cli_resolver
from ..errors import Exit, NexusError
from ..registry import Tool, invoke, load
from ..store.db import Store
from . import render

HELP = """Coordinate Claude Code and Codex sessions (and you, at a shell) on one machine:
find each other, message, hand off work, wake idle sessions. No daemon: every command works
directly on a locked per-user SQLite store ($NEXUS_HOME).

Exit codes: 0 ok, 1 failure (a check failed), 2 bad usage or input, 3 not found, 4 conflict,
5 forbidden, 6 store unusable, 7 timed out, 70 internal error."""


def _is_bool(info: FieldInfo) -> bool:
    return info.annotation is bool


def _metavar(info: FieldInfo) -> str:
    ann = info.annotation
    args = [a for a in typing.get_args(ann) if a is not type(None)] if isinstance(
        ann, types.UnionType) or typing.get_origin(ann) is typing.Union else [ann]
    base = args[0] if args else ann
    if typing.get_origin(base) is typing.Literal:
        return "[" + "|".join(map(str, typing.get_args(base))) + "]"
    return {int: "INTEGER", float: "NUMBER"}.get(base, "TEXT")  # type: ignore[arg-type]


def _params(tool: Tool) -> list[click.Parameter]:
    params: list[click.Parameter] = []
    for name in tool.positional:
        info = tool.args.model_fields[name]
        params.append(click.Argument([name], required=info.is_required(),
                                     metavar=name.upper()))
    for name, info in tool.args.model_fields.items():
        if name in tool.positional:
            continue
        flag = "--" + name.replace("_", "-")
        default = "" if info.is_required() or info.default in (None, False) else \
            f" [default: {info.default}]"
        helptext = (info.description or "") + default
        if _is_bool(info):
            params.append(click.Option([flag, name], is_flag=True, default=None, help=helptext))
        else:
            params.append(click.Option([flag, name], default=None, metavar=_metavar(info),
                                       required=False, help=helptext))
    params.append(click.Option(["--json", "as_json"], is_flag=True,
                               help="Print the result as JSON (the stable shape in contract/)."))
    if tool.needs_caller:
        params.append(click.Option(["--as", "as_"], default=None, metavar="SESSION",
                                   help="Act as this session (exact id, handle or name). Refused "
                                   "inside an agent session unless it names that session."))
    return params


def _command(tool: Tool) -> click.Command:
    def callback(as_json: bool, as_: str | None = None, **values: Any) -> None:
        raw = {k: v for k, v in values.items() if v is not None}
        for key in ("text",):
            if raw.get(key) == "-":
                raw[key] = sys.stdin.read()
        ctx = Ctx(Store(), cli_resolver(as_))
        try:
            result = invoke(tool, ctx, raw)
        except NexusError as exc:
            render.emit_error(exc, as_json)
            sys.exit(int(exc.exit_code))
        render.emit(tool.name, result, as_json)
        if tool.exit_false and result.get(tool.exit_false[0]) is False:
            sys.exit(tool.exit_false[1])

    doc = tool.description
    if "text" in tool.positional:
        doc += "\n\nPass - as TEXT to read it from stdin."
    return click.Command(tool.path[-1], callback=callback, params=_params(tool), help=doc,
                         short_help=tool.title)


def build() -> click.Group:
    root = click.Group("nexus", help=HELP, context_settings={"help_option_names": ["-h", "--help"]})
    root.params.append(click.Option(["--version"], is_flag=True, expose_value=False,
                                    is_eager=True, help="Show the version and exit.",
                                    callback=_version))
    groups: dict[tuple[str, ...], click.Group] = {(): root}
    for tool in load().values():
        parent = root
        for depth in range(1, len(tool.path)):
            key = tool.path[:depth]
            if key not in groups:
                groups[key] = click.Group(key[-1], help=f"{key[-1].capitalize()} commands.")
                parent.add_command(groups[key])
            parent = groups[key]
        parent.add_command(_command(tool))
    from . import extra

    extra.attach(root)
    return root


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        click.echo(f"nexus {__version__}")
        ctx.exit()


def main(argv: list[str] | None = None) -> int:
    app = build()
    try:
        app.main(args=argv, prog_name="nexus", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        sys.stderr.write("nexus: aborted\n")
        return 130
    except click.ClickException as exc:
        where = getattr(getattr(exc, "ctx", None), "command_path", "nexus")
        reason = exc.format_message()
        if isinstance(exc, click.exceptions.NoArgsIsHelpError):
            sys.stderr.write(reason + "\n\n")
            reason = "a subcommand is needed"
        err = NexusError("usage_error", where, reason.rstrip("."), f"see `{where} --help`")
        render.emit_error(err, "--json" in (argv or []))
        return int(Exit.USAGE)
    except SystemExit as exc:
        return int(exc.code or 0)
    except NexusError as exc:
        render.emit_error(exc, False)
        return int(exc.exit_code)
    except Exception as exc:  # a bug: say so plainly, no traceback unless asked
        if os.environ.get("NEXUS_DEBUG"):
            raise
        err = NexusError("internal_error", type(exc).__name__, str(exc) or "no detail",
                         "rerun with NEXUS_DEBUG=1 and report the traceback")
        render.emit_error(err, False)
        return int(Exit.INTERNAL)
    return 0
