"""Output for people, as data the CLI face prints: plain text, or a `Table` (rendered by rich on
a terminal, as aligned plain columns otherwise). Feature renderers build these; every string
that came from a peer passes through `core.text` first. Stdlib only."""

from __future__ import annotations

import time
from typing import Any

from .text import pad, party, visible, width
from .timefmt import human_duration

# colours that carry meaning (rich only; NO_COLOR, TERM=dumb and pipes get none)
STYLES = {"listening": "green", "working": "yellow", "waiting": "bold yellow", "idle": "",
          "offline": "dim",
          "OK": "green", "WARN": "yellow", "FAIL": "bold red", "completed": "green",
          "failed": "red", "blocked": "red", "cancelled": "dim", "delivery_uncertain": "yellow",
          "read": "green", "expired": "dim"}


KEEP = ("id", "name", "handle")  # columns a reader types next: never cut (unless told otherwise)
GAP = 2  # columns between two columns
WIDE_MIN = 8  # a `wide` or `wrap` column keeps at least this much (or its own width)


class Table:
    """Rows for people: headers, rows of cells. `keep` columns (ids, handles, names: what a
    reader must type next) are never cut; when the table is too wide for the terminal the
    `wide` columns give up room first (cut with an ellipsis: paths, notes, task text), then the
    `wrap` ones (their words wrap inside the column), then columns are left out (`fit`); a
    column empty in every row takes no room. `styled` columns colour their values by STYLES."""

    def __init__(self, headers: list[str], rows: list[list[str]], wide: tuple[str, ...] = (),
                 wrap: tuple[str, ...] = (), styled: tuple[str, ...] = ("status",),
                 keep: tuple[str, ...] = KEEP) -> None:
        cells = [[visible(str(c), keep_lines=False) for c in r] for r in rows]
        shown = [i for i in range(len(headers)) if any(r[i] for r in cells)] if cells else \
            list(range(len(headers)))
        self.headers = [headers[i] for i in shown]
        self.rows = [[r[i] for i in shown] for r in cells]
        self.wide, self.wrap, self.styled, self.keep = wide, wrap, styled, keep

    def natural(self) -> list[int]:
        return [max(width(r[i]) for r in [self.headers, *self.rows])
                for i in range(len(self.headers))]

    def fit(self, limit: int) -> list[int] | None:
        """Column widths within `limit` terminal columns (0: the column is left out), or None
        when the kept columns alone do not fit (then nothing is cut: the table is shown whole).
        The `wide` columns shrink first, then the `wrap` ones (to WIDE_MIN); if that is not
        enough, columns are left out, in the same order and then the others, right to left:
        a column is cut or left out, never shown as a stump."""
        widths = self.natural()

        def excess() -> int:
            shown = [w for w in widths if w]
            return sum(shown) + GAP * max(0, len(shown) - 1) - limit

        stages = [[i for i, h in enumerate(self.headers) if h in names and h not in self.keep]
                  for names in (self.wide, self.wrap)]
        stages.append([i for i, h in enumerate(self.headers) if h not in self.keep
                       and i not in stages[0] + stages[1]])
        for stage in stages[:2]:
            floor = {i: min(widths[i], max(WIDE_MIN, width(self.headers[i]))) for i in stage}
            while excess() > 0:
                give = [i for i in stage if widths[i] > floor[i]]
                if not give:
                    break
                widths[max(give, key=lambda i: widths[i])] -= 1
        for stage in stages:
            for i in reversed(stage):
                if excess() > 0:
                    widths[i] = 0
        return widths if excess() <= 0 else None

    def plain(self) -> str:
        widths = self.natural()
        return "\n".join("  ".join(pad(c, w) for c, w in zip(r, widths, strict=True)).rstrip()
                         for r in [self.headers, *self.rows])


Part = str | Table


def ago(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    elapsed = time.time() - epoch
    return "just now" if elapsed < 1 else human_duration(elapsed) + " ago"


def home_short(path: str) -> str:
    """A path with the home directory shown as ~."""
    import os

    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home != "/" and (path == home or path.startswith(home + "/")) \
        else path


def who(ref: dict[str, Any]) -> str:
    return party(ref["name"], ref["handle"])


def page_footer(r: dict[str, Any]) -> str:
    return f"{r['count']} of {r['total']}" + (f"; next page: {r['next']}" if r["truncated"] else "")


def fields(pairs: list[tuple[str, object]]) -> str:
    """Aligned `label  value` lines, skipping empty values."""
    shown = [(k, v) for k, v in pairs if v not in (None, "")]
    width = max((len(k) for k, _ in shown), default=0)
    return "\n".join(f"{k.ljust(width)}  {visible(str(v), keep_lines=False)}" for k, v in shown)


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 hit`, `2 hits` (`many`: an irregular plural): counts in human output agree."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
