"""Entry point. `nexus hook ...` and `nexus mcp` are dispatched here, before click, pydantic or
rich are imported: hooks run on every tool call of every agent, and an MCP server must answer
`initialize` as fast as the interpreter starts."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"]:
        from .hookrun import main as hook_main

        return hook_main(args[1:])
    if args[:1] == ["mcp"]:
        from .mcp.server import main as mcp_main

        return mcp_main(args[1:])
    from .cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
