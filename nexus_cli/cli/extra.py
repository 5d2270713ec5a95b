"""Commands that are not registry tools: the hook entry point and the MCP server (documented
here; `__main__` dispatches them before click loads), and `watch`."""

from __future__ import annotations

import sys

import click

from .. import clients
from ..mcp.server import DEFAULT_GROUPS


@click.command("hook", context_settings={"ignore_unknown_options": True})
@click.argument("client", type=click.Choice(clients.NAMES))
@click.option("--wait", is_flag=True, help="Idle wait: block until something arrives, then wake.")
def hook(client: str, wait: bool) -> None:
    """Entry point for client hooks: reads the hook's JSON on stdin, keeps the session current,
    and prints the client's JSON reply. Installed by `nexus install`; not for typing by hand."""
    from ..hook.entry import main

    sys.exit(main([client, *(["--wait"] if wait else [])]))


@click.command("mcp")
@click.option("--tools", "groups", default=",".join(DEFAULT_GROUPS), metavar="GROUPS",
              help="Comma-separated tool groups to serve, or `all` "
              f"[default: {','.join(DEFAULT_GROUPS)}].")
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
    import json
    import time

    from ..catalog import load
    from ..core.context import Ctx, cli_resolver
    from ..core.errors import NexusError
    from ..core.registry import invoke
    from ..core.store.db import Store
    from ..delivery import waiting
    from . import output
    from . import upkeep as _upkeep

    read = load()["read"]

    def show(result: dict) -> None:
        out = output._stdout()
        for message in result["messages"]:
            if as_json:
                out.write(json.dumps(message, ensure_ascii=False) + "\n")
            else:
                out.write(read.render({"messages": [message], "remaining": 0}) + "\n\n")
        out.flush()

    store = Store()
    try:
        while True:
            ctx = Ctx(store, cli_resolver(as_), upkeep=_upkeep(), deliver=show)
            got = invoke(read, ctx, {"count": 50})
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
        output.emit_error(exc, as_json)
        sys.exit(int(exc.exit_code))
    except OSError as exc:
        sys.exit(output.failed(exc))
    except KeyboardInterrupt:
        sys.exit(130)


watch.man_group = "messages"  # type: ignore[attr-defined]
