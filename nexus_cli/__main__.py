"""Entry point. `nexus hook ...` and `nexus mcp` are dispatched here, before click, pydantic or
rich are imported: hooks run on every tool call of every agent, and an MCP server must answer
`initialize` as fast as the interpreter starts. `--version` needs nothing at all."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:  # Ctrl-C while nexus was still loading: no traceback
        sys.stderr.write("\nnexus: interrupted\n")
        return 130


def _main(args: list[str]) -> int:
    if args[:1] == ["hook"]:
        import gc
        import os

        # A hook lives for milliseconds and ends with os._exit: the cyclic collector's passes
        # over every object its imports create (a third of what nexus adds to the interpreter's
        # start) would free nothing it needs. Reference counting still frees what it drops; a
        # hook that goes on to wait (hook/entry.py: `waiting`) turns the collector back on.
        gc.disable()

        raw = None
        if len(args) == 2 and args[1] in ("claude", "codex"):
            raw = sys.stdin.buffer.read()
            if b"PostToolUse" in raw:  # team mode, nothing new: one round trip, no more
                from .core.store import team

                url = team.url()
                if url:
                    from .hook.quick import settled

                    if settled(args[1:], raw, url):
                        os._exit(0)
        from .hook.entry import main as hook_main

        code = hook_main(args[1:], linger=True, raw=raw)
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
    from . import cli

    cli.OWN_PROCESS = True
    return cli.main(args)


if __name__ == "__main__":
    sys.exit(main())
