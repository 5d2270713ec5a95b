"""Output for people (rich on a terminal, plain text otherwise) and for programs (`--json`).
stdout carries results only; errors and progress go to stderr. rich is imported only when a
terminal will show the output."""

from __future__ import annotations

import errno
import json
import os
import sys
from typing import Any

from ..core.errors import NexusError
from ..core.human import Table
from ..core.registry import Tool


def _stdout() -> Any:
    if sys.stdout is None:  # the command ran with stdout closed (`>&-`)
        raise OSError(errno.EBADF, "standard output is closed")
    return sys.stdout


def to_rich(table: Table) -> Any:
    from rich.table import Table as RichTable

    out = RichTable(box=None, pad_edge=False, show_edge=False)
    for h in table.headers:
        wide = h in table.wide
        out.add_column(h, overflow="ellipsis" if wide else "fold", no_wrap=not wide,
                       ratio=1 if wide else None)
    for r in table.rows:
        out.add_row(*r)
    return out


def human(tool: Tool, result: dict[str, Any]) -> str | list:
    if tool.render is None:
        return json.dumps(result, indent=2, ensure_ascii=False)
    return tool.render(result)


def emit(tool: Tool, result: dict[str, Any], as_json: bool) -> None:
    """Print a result and flush: a failure to write raises (OSError), before anything that
    depends on the output having arrived."""
    out = _stdout()
    if as_json:
        out.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        shown = human(tool, result)
        parts = shown if isinstance(shown, list) else [shown]
        if out.isatty():
            from rich.console import Console

            con = Console(file=out, highlight=False, markup=False, emoji=False)
            for part in parts:
                con.print(to_rich(part) if isinstance(part, Table) else part)
        else:  # scripts and pipes: plain text, and no rich import
            for part in parts:
                out.write((part.plain() if isinstance(part, Table) else part) + "\n")
    out.flush()


def failed(exc: OSError) -> int:
    """The result could not be written (stdout closed, full, a broken pipe): say so on stderr,
    point stdout at /dev/null so nothing is retried at exit, and give the exit code. The write
    happened inside the transaction (Ctx.hand_over), so nothing was consumed."""
    err = NexusError("output_failed", "stdout", exc.strerror or str(exc),
                     "nothing was consumed; rerun with a working standard output")
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
    emit_error(err, False)
    return int(err.exit_code)


def emit_error(exc: NexusError, as_json: bool) -> None:
    if as_json:
        try:
            _stdout().write(json.dumps({"error": exc.to_dict()}, indent=2, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        except OSError:
            pass
    if sys.stderr is not None:
        sys.stderr.write(f"nexus: {exc.message}\n")
