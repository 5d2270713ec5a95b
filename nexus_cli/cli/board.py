"""`nexus board`: a live view for people of every session in scope (what each does now, its
inbox, its tasks, its last answer) and the wait graph below, deadlocks flagged. Not a registry
tool: the data comes from the insight feature (`insight.board`), agents get the same facts
from `status`, `waits` and `log`.

It redraws when the store changes, without polling it hard: a wake channel for every session
shown (messages, tasks and reports poke them after COMMIT) and a `PRAGMA data_version` look
once a second (what hooks record). `--once` prints one frame, and so does a board without a
terminal: plain text that fits `--width` (default: the terminal's, else $COLUMNS, else 80)."""

from __future__ import annotations

import os
import sys
import time

import click

from . import example

REFETCH_EVERY = 10.0  # seconds: transcripts change without a store write (a long tool call)
TICK = 1.0  # seconds between data_version looks and clock updates


def _width(explicit: int | None) -> int:
    if explicit:
        return explicit
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except OSError:
        pass
    try:
        return max(20, int(os.environ.get("COLUMNS", "80")))
    except ValueError:
        return 80


@click.command("board", short_help="A live board of every session in scope")
@click.option("--once", is_flag=True, help="Print one frame and exit (also without a terminal).")
@click.option("--all-workspaces", is_flag=True, help="All projects, not only yours.")
@click.option("--include-offline", is_flag=True, help="Also sessions that ended in the last 24 h.")
@click.option("--focus", "focus", default=None, metavar="TARGET",
              help="Show this session's latest log below the board.")
@click.option("--width", type=click.IntRange(20, 1000), default=None, metavar="N",
              help="Columns to fit (default: the terminal's, else $COLUMNS, else 80).")
@click.option("--web", is_flag=True, help="Serve the board as a web page on 127.0.0.1 while the "
              "command runs (the person only); prints its address.")
@click.option("--port", type=click.IntRange(0, 65535), default=None, metavar="PORT",
              help="With --web: the port to serve on (default 0: a free one).")
@click.option("--open", "open_", is_flag=True, help="With --web: open the page in your browser.")
def board(once: bool, all_workspaces: bool, include_offline: bool, focus: str | None,
          width: int | None, web: bool, port: int | None, open_: bool) -> None:
    """A live board of every session in scope: name, client, status, what it is doing now (its
    running tool and for how long), inbox depth, tasks it owns and waits on, the first line of
    its last answer; below it who waits on whom, with deadlocks, the permission requests you may
    answer and the file reservations in scope. It redraws as the store
    changes. Keys: 1-9 show that session's log, 0 hides it, q quits. --once prints one frame
    (for scripts); without a terminal the board prints one frame in plain text.

    --web serves the same board as a page, for as long as the command runs (Ctrl-C stops it; no
    daemon): it prints one line with the address, http://127.0.0.1:PORT/?token=SECRET, and
    answers only requests that carry that token, on loopback, at that address. The page draws
    the wait graph, updates itself within a second of any change, and lets you answer a
    permission request (allow once or reject), send a message, and release a reservation (for
    its holder, as `nexus release --as HOLDER` does: the activity log records it). Only the
    person at an interactive terminal may serve it. The page loads nothing from any other
    origin."""
    if not web and (port is not None or open_):
        raise click.UsageError("--port and --open go with --web")
    if web and (once or focus or width):
        raise click.UsageError("--web serves a page: --once, --focus and --width are for the "
                               "terminal board")
    if web:
        _web(port or 0, open_, all_workspaces, include_offline)
        return
    from ..core.context import Ctx, cli_resolver
    from ..core.errors import NexusError
    from ..core.store.db import Store
    from ..insight import board as data
    from ..insight import render
    from . import output

    store = Store()
    cache = data.Transcripts()

    def fetch(focus_on: str | None) -> tuple[dict, list[str]]:
        """The board's data, and the focus pane's lines (fitted when drawn)."""
        ctx = Ctx(store, cli_resolver(None))
        snap = data.snapshot(ctx, all_workspaces, include_offline, cache)
        extras = data.extras(ctx, all_workspaces, [s["id"] for s in snap["sessions"]])
        pane: list[str] = []
        if focus_on:
            try:
                pane = render.focus_lines(data.focus_log(ctx, focus_on, all_workspaces), 10_000)
            except NexusError as exc:
                pane = ["", exc.shown]
        return snap, waiting(extras) + reserved(extras, ctx.now) + pane

    try:
        interactive = not once and sys.stdout.isatty() and sys.stdin.isatty() and \
            os.environ.get("TERM") != "dumb"
        if not interactive:
            cols = _width(width)
            snap, pane = fetch(focus)
            lines = render.board_lines(snap, cols) + render.cut(pane, cols)
            out = output._stdout()
            out.write("\n".join(lines) + "\n")
            out.flush()
            return
        _live(store, fetch, focus, width)
    except NexusError as exc:
        output.emit_error(exc, False)
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        sys.exit(output.failed(exc))


board.man_group = "insight"  # type: ignore[attr-defined]
example(board, "nexus board --include-offline")


def waiting(extras: dict, most: int = 5) -> list[str]:
    """The permission requests the viewer may answer, oldest first (none pending: no lines)."""
    from ..approvals import answer
    from ..core.text import one_line

    items, total = extras["approvals"][:most], extras["approvals_total"]
    if not total:
        return []
    lines = ["", f"{answer.summary_line(total)} (`nexus approvals`; "
                 "`nexus approve ID --session S allow-once|reject`):"]
    for item in items:
        ref = item.get("session")
        who = ref.get("name") if isinstance(ref, dict) and ref.get("name") else item["session_id"]
        lines.append(f"  {item['id']}  {one_line(str(who), 40)}  "
                     f"{one_line(item['tool_name'], 30)}: {one_line(item['summary'], 80)}  "
                     f"(waiting {item['waited']})")
    if total > len(items):
        lines.append(f"  ... and {total - len(items)} more")
    return lines


def reserved(extras: dict, now: float, most: int = 5) -> list[str]:
    """The live file reservations in scope, oldest first (none: no lines)."""
    from ..core.text import one_line
    from ..reservations import leases

    rows = extras["reservations"]
    if not rows:
        return []
    lines = ["", f"{len(rows)} file reservation{'s' if len(rows) != 1 else ''} "
                 "(`nexus reservations`):"]
    for r in rows[:most]:
        why = f"  {leases.said(r['reason'], 60)}" if r["reason"] else ""
        lines.append(f"  {leases.shown(r['pattern'])}  "
                     f"{'exclusive' if r['exclusive'] else 'shared'}  "
                     f"{one_line(r['holder']['name'], 40)}  until "
                     f"{leases.until(r['expires_at_epoch'], now)}{why}")
    if len(rows) > most:
        lines.append(f"  ... and {len(rows) - most} more")
    return lines


def _web(port: int, open_: bool, all_workspaces: bool, include_offline: bool) -> None:
    """Serve the web board until Ctrl-C (or SIGTERM): exit 0, no traceback; if its server stops
    by itself, `internal_error` (exit 70) after what it said."""
    import signal

    from ..core.errors import NexusError
    from ..web import server
    from . import output

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        site = server.Board(port, all_workspaces, include_offline).start()
    except NexusError as exc:
        output.emit_error(exc, False)
        sys.exit(int(exc.exit_code))
    died = None
    try:
        previous = signal.signal(signal.SIGTERM, stop)
        try:
            out = output._stdout()
            out.write(f"nexus board: {site.url}  (Ctrl-C stops it)\n")
            out.flush()
            if open_:
                site.browse()  # (never the address itself: `ps` would show its secret)
            while site.thread.is_alive():  # asleep, not in join(): a join that Ctrl-C
                time.sleep(0.5)  # interrupts marks the thread dead before 3.13 (CPython #90882)
            died = NexusError("internal_error", "nexus board --web", "its web server stopped by "
                              "itself (what it said is above)", "report it, then start the "
                              "board again")
        finally:
            signal.signal(signal.SIGTERM, previous)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        sys.exit(output.failed(exc))
    finally:
        try:
            site.stop()
        except KeyboardInterrupt:
            pass
        sys.stderr.write("nexus board: stopped\n")
    if died is not None:
        output.emit_error(died, False)
        sys.exit(int(died.exit_code))


def _live(store, fetch, focus: str | None, width: int | None) -> None:
    import termios
    import tty

    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from ..core.store import wake
    from ..insight import render

    console = Console(highlight=False, markup=False, emoji=False)
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    channels: dict[str, wake.Channel] = {}
    conn = None
    seen = None
    focus_on = focus
    try:
        tty.setcbreak(fd)
        with Live(console=console, auto_refresh=False, screen=True) as live:
            dirty, fetched = True, 0.0
            snap: dict = {}
            pane: list[str] = []
            while True:
                if conn is None and store.check_dir() and store.check_file():
                    conn = store.open_read()  # before the look: no change slips between
                    seen = store.data_version(conn)
                if dirty or time.monotonic() - fetched > REFETCH_EVERY:
                    snap, pane = fetch(focus_on)
                    fetched, dirty = time.monotonic(), False
                    _watch(store, channels, [s["id"] for s in snap["sessions"]], wake)
                cols = width or console.width
                lines = render.board_lines(snap, cols, numbered=True) + render.cut(pane, cols)
                lines.append("keys: 1-9 a session's log, 0 hide it, q quit"[:cols])
                text = Text("\n".join(lines))
                text.stylize("bold", 0, len(lines[0]))
                live.update(text, refresh=True)
                ready = wake.ready([fd, *(c.fd for c in channels.values())], TICK)
                for c in channels.values():
                    if c.fd in ready:
                        c.wait(0)
                        dirty = True
                if fd in ready:
                    key = os.read(fd, 8).decode(errors="replace")[:1]
                    if key in ("q", "Q", "\x03"):
                        return
                    if key.isdigit():
                        n = int(key)
                        items = snap.get("sessions", [])
                        focus_on = items[n - 1]["id"] if 0 < n <= len(items) else None
                        dirty = True
                    elif key == "r":
                        dirty = True
                if conn is not None:
                    version = store.data_version(conn)
                    if version != seen:
                        seen, dirty = version, True
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        for c in channels.values():
            c.close()
        if conn is not None:
            conn.close()


def _watch(store, channels: dict, ids: list[str], wake) -> None:
    """A wake channel for each session on the board (created before its next look)."""
    if not store.check_dir():
        return
    for sid in list(channels):
        if sid not in ids:
            channels.pop(sid).close()
    for sid in ids:
        if sid not in channels:
            try:
                channels[sid] = wake.Channel(store.root, sid)
            except OSError:
                pass
