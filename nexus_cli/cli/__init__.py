"""The click face: one subcommand per registry tool, built on demand from its compiled schema in
contract/tools.json (so `nexus send` loads click and the messages feature, nothing more), plus
the commands that are not tools (`hook`, `mcp`, `watch`)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from ..core import events, registry, store
from ..core.context import Ctx, cli_resolver
from ..core.errors import CODES, Exit, NexusError, exits
from ..core.store.db import Store
from . import output, params

EXIT_MEANINGS = {
    Exit.OK: "ok", Exit.FAILURE: "a check failed", Exit.USAGE: "bad usage or input",
    Exit.NOT_FOUND: "not found", Exit.CONFLICT: "conflict", Exit.FORBIDDEN: "forbidden",
    Exit.STORE: "store unusable", Exit.TIMEOUT: "timed out", Exit.CONFIG: "client config unusable",
    Exit.INTERNAL: "internal error", Exit.OUTPUT: "output could not be written",
}
HELP = ("Coordinate Claude Code and Codex sessions (and you, at a shell) on one machine: find "
        "each other, message, hand off work, wake idle sessions. No daemon: every command works "
        "directly on a locked per-user SQLite store ($NEXUS_HOME).\n\nExit codes: "
        + ", ".join(f"{code} {EXIT_MEANINGS[code]}" for code in exits())
        + ", 130 interrupted (Ctrl-C).")
# commands that are not registry tools: name -> attribute of cli.extra, or `module:attribute`
# of another module of cli/
EXTRA = {"hook": "hook", "mcp": "mcp", "watch": "watch", "help": "help_", "man": "man",
         "completion": "completion", "board": "board:board"}


GROUP_HELP = {
    "chat": "The workspace chat: send, read, and prune or clear it.",
    "config": "Your settings (config.toml): list, get, set.",
    "doc": "The workspace's shared docs and its strategy: list, get, sync, set.",
    "fs": "Read, list, probe and write files in your project.",
    "meeting": "Workspace meetings: start, list, end, archive, reopen.",
    "message": "A message you sent or received: its receipt, or the whole message.",
    "policy": "The sandbox tier of runs: get, set.",
    "preset": "Presets for runs: list, get, set the default.",
    "project": "Workspace projects: their manifests, assets, docs and topology.",
    "task": "One task: create, get, update, cancel (the whole ledger: `nexus tasks`).",
    "team": "A store shared across machines: init, join, status, migrate, leave.",
}


def tool_paths() -> dict[tuple[str, ...], dict[str, Any]]:
    return {tuple(s["cli"]["path"]): s for s in registry.specs().values() if s["cli"]}


class Group(click.Group):
    """A command group whose subcommands are built only when asked for."""

    def __init__(self, name: str, prefix: tuple[str, ...], **kw: Any) -> None:
        super().__init__(name, **kw)
        self.prefix = prefix

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """`nexus --help`: the commands by group, as the man pages and docs/commands.md group
        them, in the order of GROUP_TITLES (the clients' entry points last)."""
        if self.prefix:
            return super().format_commands(ctx, formatter)
        by_group: dict[str, list[tuple[str, str]]] = {}
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                by_group.setdefault(group_of(name, cmd), []).append(
                    (name, cmd.get_short_help_str(formatter.width)))
        for group in sorted(by_group, key=list(registry.GROUP_TITLES).index):
            title = registry.GROUP_TITLES[group]
            with formatter.section(title[:1].upper() + title[1:]):
                formatter.write_dl(by_group[group])

    def list_commands(self, ctx: click.Context) -> list[str]:
        depth = len(self.prefix)
        names = {p[depth] for p in tool_paths() if p[:depth] == self.prefix and len(p) > depth}
        if not self.prefix:
            names |= set(EXTRA)
        return sorted(names)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple:
        """A name that is no command: an error that names the nearest ones."""
        name = args[0]
        if self.get_command(ctx, name) is None and not ctx.resilient_parsing:
            raise no_command(ctx.command_path, name, self.list_commands(ctx))
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        path = (*self.prefix, name)
        paths = tool_paths()
        if path in paths and any(len(p) > len(path) and p[: len(path)] == path for p in paths):
            return ToolGroup(name, path, paths[path])  # `nexus run CLIENT TASK`, `nexus run list`
        if path in paths:
            return tool_command(paths[path])
        if any(p[: len(path)] == path for p in paths):
            subs = sorted({p[len(path)] for p in paths if p[: len(path)] == path and p != path})
            return Group(name, path, help=GROUP_HELP.get(name) or f"{', '.join(subs)}.")
        if not self.prefix and name in EXTRA:
            import importlib

            module, _, attr = EXTRA[name].rpartition(":")
            return getattr(importlib.import_module(f".{module or 'extra'}", __package__), attr)
        return None


def no_command(where: str, name: str, names: list[str]) -> NexusError:
    from ..core.suggest import did_you_mean

    hint = did_you_mean(name, names, lambda c: f"`{where} {c}`")
    return NexusError("usage_error", where, f"no command `{name}`",
                      (hint + " " if hint else "") + f"`{where} --help` lists them")


class ToolGroup(Group):
    """A tool that is also a group: its subcommands by name, anything else the tool itself."""

    def __init__(self, name: str, prefix: tuple[str, ...], spec: dict[str, Any]) -> None:
        self.tool = tool_command(spec)
        super().__init__(name, prefix, help=self.tool.help, short_help=self.tool.short_help)

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        if args and args[0] in self.list_commands(click.Context(self)):
            return super().make_context(info_name, args, parent=parent, **extra)
        return self.tool.make_context(info_name, args, parent=parent, **extra)


def group_of(path: str, cmd: click.Command) -> str:
    """The group a command is listed under: a tool's own; a command group's (`nexus fs`), that
    of its tools; another command says its own (`man_group`), else integration."""
    words = tuple(path.split())
    found = [s["group"] for p, s in tool_paths().items() if p[: len(words)] == words]
    return found[0] if found else str(getattr(cmd, "man_group", "integration"))


OWN_PROCESS = False  # `nexus` itself runs (__main__), not a test: its signals are ours to set


def run_tool(spec: dict[str, Any], values: dict[str, Any], as_json: bool,
             as_: str | None) -> None:
    from ..catalog import tool as find

    tool = find(spec["name"], spec["module"])
    names = params.schema_names(spec)
    raw = {names.get(k, k): list(v) if isinstance(v, tuple) else v for k, v in values.items()
           if v is not None and v != ()}  # a list argument given no value is not given
    for key in tool.stdin:
        if raw.get(key) == "-":
            raw[key] = sys.stdin.read()
    store.SKIPPED.clear()  # (what this command reads past, said after its output)
    later: list = []  # a pager for what was delivered, run once the transaction is over
    ctx = Ctx(Store(), cli_resolver(as_), upkeep=upkeep(),
              deliver=lambda result: later.append(output.emit(tool, result, as_json, True)),
              progress=output.spinner())
    try:
        try:
            result = registry.invoke(tool, ctx, raw, params.namer(spec))
        finally:
            if ctx.progress is not None:  # a wait's spinner line goes before anything is said
                ctx.progress("", -1)
        if OWN_PROCESS:  # done and committed: a Ctrl-C from here on would call a write that
            # happened interrupted (exit 130), and a script retrying on that sends it twice
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if not ctx.delivered:
            output.emit(tool, result, as_json)
        for show in later:
            if show is not None:
                show()
        read_past()
    except NexusError as exc:
        events.refused(ctx.store, exc, "cli", command=" ".join(tool.path))
        if exc.code != "row_invalid":
            read_past()
        output.emit_error(exc, as_json)
        sys.exit(int(exc.exit_code))
    except OSError as exc:  # stdout closed or full: nothing was consumed (see Ctx.hand_over)
        sys.exit(output.failed(exc))
    if tool.exit_if and result.get(tool.exit_if[0]) == tool.exit_if[1]:
        sys.exit(tool.exit_if[2])


def read_past(most: int = 3) -> None:
    """The rows this command read past (core/store), said on stderr: never silently."""
    seen = list(dict.fromkeys(store.SKIPPED))
    for entry in seen[:most]:
        sys.stderr.write(f"nexus: warning: {store.row_error(entry).shown}\n")
    if len(seen) > most:
        sys.stderr.write(f"nexus: warning: and {len(seen) - most} more rows read past "
                         "(`nexus doctor` names them)\n")


def upkeep():
    from ..maintenance import expiry

    return expiry.LAZY


def tool_command(spec: dict[str, Any]) -> click.Command:
    def callback(as_json: bool, as_: str | None = None, **values: Any) -> None:
        run_tool(spec, values, as_json, as_)

    doc = spec["description"] + (f"\n\n{spec['details']}" if spec.get("details") else "")
    if spec["cli"]["stdin"]:
        shown = [params.dest(n).upper() if n in spec["cli"]["positional"] else params.flag(n)
                 for n in spec["cli"]["stdin"]]
        doc += "\n\nPass - as " + " or ".join(shown) + " to read it from standard input."
    command = click.Command(spec["cli"]["path"][-1], callback=callback,
                            params=params.params(spec), help=params.cli_words(doc),
                            short_help=spec["title"])
    return example(command, spec.get("example") or "")


def example(command: click.Command, text: str) -> click.Command:
    """A command's example: the last lines of its --help, and its man page's and docs'."""
    if text:
        command.epilog = f"\b\nExample:\n  {text}"
    command.example = text  # type: ignore[attr-defined]
    return command


def build() -> click.Group:
    return Group("nexus", (), help=HELP, context_settings={"help_option_names": ["-h", "--help"]},
                 invoke_without_command=True, callback=_bare,
                 params=[click.Option(["-V", "--version"], is_flag=True, expose_value=False,
                                      is_eager=True, help="Show the version and exit.",
                                      callback=_version)])


def _bare() -> None:
    """`nexus` alone: the help, as `nexus --help` shows it."""
    ctx = click.get_current_context()
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        from .. import __version__

        click.echo(f"nexus {__version__}")
        ctx.exit()


def main(argv: list[str] | None = None) -> int:
    app = build()
    try:
        app.main(args=argv, prog_name="nexus", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        sys.stderr.write("\nnexus: interrupted\n")
        return 130
    except click.exceptions.NoArgsIsHelpError as exc:  # `nexus team`: what it offers
        click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
        return int(Exit.USAGE)
    except click.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else _where(app, argv or sys.argv[1:])
        reason = " ".join(exc.format_message().split())  # one line: click lays out lists
        action = f"see `{where} --help`"
        if isinstance(exc, click.NoSuchOption) and exc.option_name[1:2].isdigit():
            action = (f"a value that starts with - goes after `--`, as in `{where} ... -- "
                      f"{exc.option_name}`")  # a negative number is not an option
        err = NexusError("usage_error", where, reason.rstrip("."), action)
        output.emit_error(err, "--json" in (argv or []))
        return int(Exit.USAGE)
    except SystemExit as exc:
        return int(exc.code or 0)
    except NexusError as exc:  # raised while parsing (a command that does not exist)
        output.emit_error(exc, "--json" in (sys.argv[1:] if argv is None else argv))
        return int(exc.exit_code)
    except Exception as exc:  # a bug: say so plainly, no traceback unless asked
        if os.environ.get("NEXUS_DEBUG"):
            raise
        err = NexusError("internal_error", type(exc).__name__, str(exc) or "no detail",
                         "rerun with NEXUS_DEBUG=1 and report the traceback")
        output.emit_error(err, False)
        return int(Exit.INTERNAL)
    return 0


def _where(app: click.Group, argv: list[str]) -> str:
    """The command an argument list names (an error in its options comes without one)."""
    path: list[str] = ["nexus"]
    command: click.Command = app
    for word in argv:
        found = command.get_command(click.Context(command), word) \
            if isinstance(command, click.Group) else None
        if found is None:
            break
        path.append(word)
        command = found
    return " ".join(path)


__all__ = ["CODES", "build", "main"]
