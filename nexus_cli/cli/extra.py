"""Commands that are not registry tools: the hook entry point (documented here, dispatched in
`__main__` before click loads) and the MCP server."""

from __future__ import annotations

import sys

import click


@click.command("hook", context_settings={"ignore_unknown_options": True})
@click.argument("client", type=click.Choice(["claude", "codex"]))
@click.option("--wait", is_flag=True, help="Idle wait: block until something arrives, then wake.")
def hook(client: str, wait: bool) -> None:
    """Entry point for client hooks: reads the hook's JSON on stdin, keeps the session current,
    and prints the client's JSON reply. Installed by `nexus install`; not for typing by hand."""
    from ..hookrun import main

    sys.exit(main([client, *(["--wait"] if wait else [])]))


@click.command("mcp")
@click.option("--tools", "groups", default="sessions,messages,tasks", metavar="GROUPS",
              help="Comma-separated tool groups to serve, or `all` "
              "[default: sessions,messages,tasks].")
def mcp(groups: str) -> None:
    """Serve every nexus tool over MCP on stdio (JSON-RPC, protocol 2024-11-05 to 2025-11-25).
    The caller is the conversation named by the call's `_meta`, checked against the client
    process that started the server. Registered by `nexus install`."""
    from ..mcp.server import main

    sys.exit(main(["--tools", groups]))


@click.command("watch")
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="Stop after this long without a message (default: until Ctrl-C).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per message (JSON lines).")
@click.option("--as", "as_", default=None, metavar="SESSION",
              help="Watch as this session (the person at the shell may name any).")
def watch(timeout: float | None, as_json: bool, as_: str | None) -> None:
    """Follow your inbox: print each message as it arrives (marking it read), and show as
    `listening` meanwhile, so others see you can answer right away. For people at a shell."""
    import json as _json
    import time

    from .. import waiting
    from ..context import Ctx, cli_resolver
    from ..errors import NexusError
    from ..registry import TOOLS, invoke, load
    from ..store.db import Store
    from . import render

    load()
    store = Store()
    try:
        while True:
            ctx = Ctx(store, cli_resolver(as_))
            got = invoke(TOOLS["read"], ctx, {"count": 50})
            for message in got["messages"]:
                if as_json:
                    click.echo(_json.dumps(message, ensure_ascii=False))
                else:
                    render.emit("read", {**got, "messages": [message], "remaining": 0}, False)
            sys.stdout.flush()
            if got["remaining"]:
                continue
            started = time.monotonic()
            state = waiting.wait_for_news(store, ctx.me_id, timeout if timeout is not None
                                          else 24 * 3600)
            if state != "news" and (timeout is not None or state == "gone"):
                break
            if timeout is not None and time.monotonic() - started >= timeout:
                break
    except NexusError as exc:
        render.emit_error(exc, as_json)
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        pass


watch.man_group = "messages"  # type: ignore[attr-defined]


def _generator(name: str, default_dir: str, what: str):
    @click.command(name)
    @click.option("--check", is_flag=True, help="Fail (exit 1) when the files are out of date.")
    @click.option("--dir", "directory", default=default_dir, show_default=True,
                  help="Where the files live.")
    @click.pass_context
    def command(ctx: click.Context, check: bool, directory: str) -> None:
        from .. import contract, manpages

        root = ctx.find_root().command
        if name == "contract":
            changed = contract.drift(directory) if check else contract.write(directory)
        else:
            changed = manpages.drift(root, directory) if check else manpages.write(root, directory)
        if check and changed:
            click.echo(f"nexus: out of date in {directory}: {', '.join(changed)} "
                       f"(run `nexus {name}` and commit the result)", err=True)
            sys.exit(1)
        click.echo(f"{directory}: " + (f"{'checked' if check else 'wrote'} "
                                       f"{', '.join(changed) or 'nothing (up to date)'}"
                                       if not check else "up to date"))

    command.help = what
    return command


contract_cmd = _generator(
    "contract", "contract",
    "Write contract/ (tools.json, errors.json, hook.json) from the registry, the error table "
    "and the hook specification; with --check, fail when they drift.")
man_cmd = _generator(
    "man", "man", "Write the man pages (nexus(1) and one per command group) from the CLI; with "
    "--check, fail when they drift.")


def attach(root: click.Group) -> None:
    for command in (hook, mcp, watch, contract_cmd, man_cmd):
        root.add_command(command)
