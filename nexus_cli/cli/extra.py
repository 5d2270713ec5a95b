"""Commands that are not registry tools: the hook entry point and the MCP server (documented
here; `__main__` dispatches them before click loads), and `watch`."""

from __future__ import annotations

import sys

import click

from .. import clients
from ..core.settings import DEFAULT_GROUPS, WATCH_MAX
from . import example


@click.command("hook", context_settings={"ignore_unknown_options": True},
               short_help="Entry point for client hooks")
@click.argument("client", type=click.Choice(clients.NAMES))
@click.option("--wait", is_flag=True, help="Idle wait: block until something arrives, then wake.")
def hook(client: str, wait: bool) -> None:
    """Entry point for client hooks: reads the hook's JSON on stdin, keeps the session current,
    and prints the client's JSON reply. Installed by `nexus install`; not for typing by hand."""
    from ..hook.entry import main

    sys.exit(main([client, *(["--wait"] if wait else [])]))


@click.command("mcp", short_help="Serve nexus tools over MCP on stdio")
@click.option("--tools", "groups", default="default", metavar="GROUPS",
              help="Tool groups to serve: comma-separated names, `default` "
              f"({','.join(DEFAULT_GROUPS)}) or `all`.")
def mcp(groups: str) -> None:
    """Serve every nexus tool over MCP on stdio (JSON-RPC). Both protocol eras, request by
    request: 2024-11-05 to 2025-11-25 after `initialize`, and the stateless 2026-07-28 (the
    version and client capabilities in each request's `_meta`; `server/discover`). The caller
    is the conversation named by the call's `_meta`, checked against the client process that
    started the server. A failed call is a tool result with `isError`, its coded message as
    text and the structured error in `_meta` (`nexus/error`). Registered by `nexus install`."""
    from ..mcp.server import main

    sys.exit(main(["--tools", groups]))


# read as every tool's durations are (core.validate, from the compiled schemas): one validation
WATCH_TIMEOUT = {"type": "number", "minimum": 0, "maximum": WATCH_MAX}


@click.command("watch", short_help="Follow your inbox as messages arrive")
@click.option("--timeout", "timeout_text", default=None, metavar="SECONDS",
              help="Stop after this long without a message (default: until Ctrl-C); exit 7 "
              f"when none came at all (0 to {WATCH_MAX:,}).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per message (JSON lines).")
@click.option("--as", "as_", default=None, metavar="SESSION",
              help="Watch as this session (the person at the shell may name any).")
def watch(timeout_text: str | None, as_json: bool, as_: str | None) -> None:
    """Follow your inbox: print each message as it arrives (marking it read), and show as
    `listening` meanwhile, so others see you can answer right away. For people at a shell."""
    import time

    from ..catalog import load
    from ..core import discovery, jsonstrict, validate
    from ..core.context import Ctx, cli_resolver
    from ..core.errors import Exit, NexusError
    from ..core.human import who
    from ..core.registry import invoke
    from ..core.store.db import Store
    from ..delivery import waiting
    from . import output
    from . import upkeep as _upkeep

    read = load()["read"]
    render = read.render
    assert render is not None  # `read` has human output

    shown = 0

    def show(result: dict) -> None:
        nonlocal shown
        shown += len(result["messages"])
        out = output._stdout()
        for message in result["messages"]:
            if as_json:
                out.write(jsonstrict.dumps(message, ensure_ascii=False) + "\n")
            else:
                out.write(render({"messages": [message], "remaining": 0}) + "\n\n")
        out.flush()

    store = Store()
    told = False
    try:
        try:
            timeout = None if timeout_text is None else \
                float(validate.check(WATCH_TIMEOUT, timeout_text))  # type: ignore[arg-type]
        except validate.Problem as exc:
            raise NexusError("invalid_argument", "--timeout", exc.reason,
                             "see `nexus watch --help`") from None
        while True:
            ctx = Ctx(store, cli_resolver(as_), upkeep=_upkeep(), deliver=show)
            got = invoke(read, ctx, {"count": 50})
            if not told:
                told = True
                with store.read() as conn:
                    me = who(discovery.ref(conn, ctx.me_id))
                limit = f"until {timeout:g} s pass without one" if timeout is not None else \
                    "until Ctrl-C"
                sys.stderr.write(f"watching messages to {me}, {limit}; others see you as "
                                 "listening\n")
            if got["remaining"]:
                continue
            started = time.monotonic()
            state, _ = waiting.wait_for_news(store, ctx.me_id, timeout if timeout is not None
                                             else 24 * 3600)
            if state != "news" and (timeout is not None or state == "gone"):
                break
            if timeout is not None and time.monotonic() - started >= timeout:
                break
        if timeout is not None and not shown:
            sys.exit(int(Exit.TIMEOUT))  # nothing came before the time-out (docs/output.md: 7)
    except NexusError as exc:
        output.emit_error(exc, as_json)
        sys.exit(int(exc.exit_code))
    except OSError as exc:
        sys.exit(output.failed(exc))
    except KeyboardInterrupt:
        sys.exit(130)


watch.man_group = "messages"  # type: ignore[attr-defined]
example(watch, "nexus watch --timeout 600")


def _find(words: tuple[str, ...]) -> tuple[click.Command, list[str]]:
    """The command `nexus WORDS` names, and its path; else the error naming the nearest."""
    from . import build, no_command

    cmd: click.Command = build()
    path = ["nexus"]
    for name in words:
        ctx = click.Context(cmd, info_name=" ".join(path))
        sub = cmd.get_command(ctx, name) if isinstance(cmd, click.Group) else None
        if sub is None:
            names = cmd.list_commands(ctx) if isinstance(cmd, click.Group) else []
            raise no_command(" ".join(path), name, names)
        cmd, path = sub, [*path, name]
    return cmd, path


@click.command("help", context_settings={"ignore_unknown_options": True},
               short_help="Show the help of nexus or of a command")
@click.argument("command", nargs=-1)
@click.pass_context
def help_(ctx: click.Context, command: tuple[str, ...]) -> None:
    """Show the help of nexus or of one command (`nexus help task create`)."""
    group, info = _find(command)
    with click.Context(group, info_name=" ".join(info), parent=None) as sub_ctx:
        click.echo(group.get_help(sub_ctx))


help_.man_group = "integration"  # type: ignore[attr-defined]
example(help_, "nexus help task create")


@click.command("completion", short_help="Print the shell completion script")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script: commands, options, choices, and session names and
    handles for targets. bash: `eval "$(nexus completion bash)"` in ~/.bashrc; zsh: the same in
    ~/.zshrc; fish: `nexus completion fish > ~/.config/fish/completions/nexus.fish`."""
    from click.shell_completion import get_completion_class

    from . import build

    cls = get_completion_class(shell)
    assert cls is not None
    click.echo(cls(build(), {}, "nexus", "_NEXUS_COMPLETE").source())


completion.man_group = "integration"  # type: ignore[attr-defined]
example(completion, "nexus completion fish > ~/.config/fish/completions/nexus.fish")


@click.command("man", short_help="Show a manual page, or install them")
@click.argument("command", nargs=-1)
@click.option("--install", "install", is_flag=True,
              help="Copy the pages where man(1) looks (~/.local/share/man/man1, as pipx does), "
              "so that `man nexus` and `man nexus-messages` work; again after an upgrade.")
def man(command: tuple[str, ...], install: bool) -> None:
    """Show the manual page of nexus, or of the group a command belongs to (`nexus man send`).
    The pages ship inside the package; this needs man(1), else it shows the command's help."""
    import os
    import shutil
    import subprocess

    from ..core import data

    if install:
        return _install_man()

    page = "nexus.1"
    if command:
        from . import group_of

        cmd, _ = _find(command)
        page = f"nexus-{group_of(' '.join(command), cmd)}.1"
    path = data.path("man", page)
    if shutil.which("man") and os.path.exists(path):
        sys.exit(subprocess.call(["man", "-l", path]))
    from . import main as cli_main

    sys.exit(cli_main([*command, "--help"]))


man.man_group = "integration"  # type: ignore[attr-defined]
example(man, "nexus man --install && man nexus-messages")


def _install_man() -> None:
    from ..core.errors import NexusError
    from ..setup import manuals
    from . import output

    try:
        done = manuals.install()
    except NexusError as exc:
        output.emit_error(exc, False)
        sys.exit(int(exc.exit_code))
    click.echo(f"{done['pages']} manual pages in {done['folder']}")
    status, detail, fix = manuals.check()
    click.echo(detail if status == "ok" else f"{detail}: {fix}")
