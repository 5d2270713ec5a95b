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


class Table:
    """Rows for people: headers, rows of cells; `wide` columns give up room first (cut with an
    ellipsis: paths, notes, task text), `wrap` columns wrap their words inside the column, the
    others never break. `styled` columns colour their values by STYLES."""

    def __init__(self, headers: list[str], rows: list[list[str]], wide: tuple[str, ...] = (),
                 wrap: tuple[str, ...] = (), styled: tuple[str, ...] = ("status",)) -> None:
        self.headers = headers
        self.rows = [[visible(str(c), keep_lines=False)
                      for c in r] for r in rows]
        self.wide, self.wrap, self.styled = wide, wrap, styled

    def plain(self) -> str:
        widths = [max(width(r[i]) for r in [self.headers, *self.rows])
                  for i in range(len(self.headers))]
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
