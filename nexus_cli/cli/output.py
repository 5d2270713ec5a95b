"""Output for people (rich on a terminal, plain text otherwise) and for programs (`--json`).
stdout carries results only; errors and progress go to stderr. rich is imported only when a
terminal will show the output."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import Any

from ..core import jsonstrict
from ..core.errors import NexusError
from ..core.human import Table
from ..core.registry import Tool
from ..core.text import one_line


def _stdout() -> Any:
    if sys.stdout is None:  # the command ran with stdout closed (`>&-`)
        raise OSError(errno.EBADF, "standard output is closed")
    return sys.stdout


def to_rich(table: Table, limit: int) -> Any:
    """The table for rich within `limit` columns (Table.fit); a table whose kept columns alone
    do not fit is printed whole, as plain text, rather than with an id cut."""
    from rich.table import Table as RichTable
    from rich.text import Text

    from ..core.human import GAP, STYLES

    widths = table.fit(limit)
    if widths is None:
        return table.plain()
    out = RichTable(box=None, pad_edge=False, show_edge=False, header_style="bold",
                    padding=(0, GAP // 2), collapse_padding=False)
    shown = [i for i, w in enumerate(widths) if w]  # 0: left out for want of room
    for i in shown:
        h = table.headers[i]
        out.add_column(h, width=widths[i], no_wrap=h not in table.wrap, overflow="ellipsis")
    for r in table.rows:
        out.add_row(*(Text(r[i], style=STYLES.get(r[i], "") if table.headers[i] in table.styled
                           else "") for i in shown))
    return out


def human(tool: Tool, result: dict[str, Any]) -> str | list:
    if tool.render is None:
        return jsonstrict.dumps(result, indent=2, ensure_ascii=False)
    return tool.render(result)


def styled(out: Any) -> bool:
    """rich for a terminal (or FORCE_COLOR); plain text for pipes, files and TERM=dumb. rich
    itself honours NO_COLOR (tables stay, colour goes)."""
    if os.environ.get("TERM") == "dumb":
        return False
    return bool(os.environ.get("FORCE_COLOR")) or out.isatty()


def emit(tool: Tool, result: dict[str, Any], as_json: bool,
         defer: bool = False) -> Callable[[], None] | None:
    """Print a result and flush: a failure to write raises (OSError), before anything that
    depends on the output having arrived. With `defer` (a consuming tool's output, written
    inside its transaction), text for a pager is not paged now but returned as what to run
    once the transaction is over: a person reading in `less` must not hold the store's write
    lock meanwhile (a terminal takes the text; only a pager waits for the person)."""
    out = _stdout()
    if as_json:
        out.write(jsonstrict.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        shown = human(tool, result)
        parts = shown if isinstance(shown, list) else [shown]
        if styled(out):
            from rich.console import Console

            con = Console(file=out, highlight=False, markup=False, emoji=False)
            with con.capture() as cap:
                for part in parts:
                    shown = to_rich(part, con.width) if isinstance(part, Table) else part
                    whole = isinstance(part, Table) and isinstance(shown, str)
                    con.print(shown, soft_wrap=whole, crop=not whole)
            text, height = cap.get(), con.height
            if defer and pager(out, text, height):
                def later() -> None:
                    page(out, text, height)
                    out.flush()

                return later
            page(out, text, height)
        else:  # scripts and pipes: plain text, and no rich import
            for part in parts:
                out.write((part.plain() if isinstance(part, Table) else part) + "\n")
    out.flush()
    return None


def pager(out: Any, text: str, height: int) -> str | None:
    """The pager `page` hands `text` to, if any: text taller than the terminal goes through
    $PAGER (default `less -FRX`; PAGER=cat turns it off), the way git and gh do."""
    command = os.environ.get("PAGER", "less -FRX")
    tall = text.count("\n") >= height and out.isatty()
    return command if tall and command.strip() and command != "cat" else None


def page(out: Any, text: str, height: int) -> None:
    """`text` through its pager (see `pager`), else written as it is."""
    command = pager(out, text, height)
    if command is None:
        out.write(text)
        return
    import subprocess

    out.flush()
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=out)
        proc.communicate(text.encode(out.encoding or "utf-8", "replace"))
        if proc.returncode != 127:  # 127: the shell found no such pager
            return
    except OSError:
        pass
    out.write(text)


def spinner() -> Callable[[str, float], None] | None:
    """For waits on a terminal: a spinner with the elapsed time on stderr (seconds < 0 clears
    it, if shown: run_tool does once the tool returns). None when stderr is not a terminal:
    scripts see nothing."""
    err = sys.stderr
    if err is None or not err.isatty() or os.environ.get("TERM") == "dumb":
        return None
    frames = "|/-\\"
    state = {"n": 0, "shown": False}

    def show(what: str, seconds: float) -> None:
        if seconds < 0:
            if state["shown"]:
                err.write("\r\x1b[K")
            state["shown"] = False
        else:
            state["n"] += 1
            state["shown"] = True
            err.write(f"\r\x1b[K{frames[state['n'] % 4]} {one_line(what)} ({seconds:.0f} s, "
                      "Ctrl-C to stop)")
        err.flush()

    return show


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
    if exc.errno != errno.EPIPE:  # a reader that stopped early (`| head`) wants no complaint
        emit_error(err, False)
    return int(err.exit_code)


def emit_error(exc: NexusError, as_json: bool) -> None:
    if as_json:
        try:
            _stdout().write(jsonstrict.dumps({"error": exc.to_dict()}, indent=2,
                                             ensure_ascii=False)
                            + "\n")
            sys.stdout.flush()
        except OSError:
            pass
    if sys.stderr is not None:
        sys.stderr.write(f"nexus: {exc.shown}\n")
