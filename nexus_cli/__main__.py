"""Entry point. `nexus hook ...` and `nexus mcp` are dispatched here, before click, pydantic or
rich are imported: hooks run on every tool call of every agent, and an MCP server must answer
`initialize` as fast as the interpreter starts. `--version` needs nothing at all."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"]:
        import os

        from .hook.entry import main as hook_main

        code = hook_main(args[1:], linger=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # skip interpreter teardown; the store's connections need no close
    if args[:1] == ["mcp"]:
        from .mcp.server import main as mcp_main

        return mcp_main(args[1:])
    if args in (["-V"], ["--version"]):
        from . import __version__

        print(f"nexus {__version__}")
        return 0
    from .cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
