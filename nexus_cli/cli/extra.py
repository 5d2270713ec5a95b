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
@click.option("--tools", "groups", default="sessions,messages", metavar="GROUPS",
              help="Comma-separated tool groups to serve, or `all` [default: sessions,messages].")
def mcp(groups: str) -> None:
    """Serve every nexus tool over MCP on stdio (JSON-RPC, protocol 2024-11-05 to 2025-11-25).
    The caller is the conversation named by the call's `_meta`, checked against the client
    process that started the server. Registered by `nexus install`."""
    from ..mcp.server import main

    sys.exit(main(["--tools", groups]))


def attach(root: click.Group) -> None:
    root.add_command(hook)
    root.add_command(mcp)
