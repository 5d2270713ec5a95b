"""Text from peers is data. Before it reaches a terminal or an agent's context, every control
character (C0, DEL, C1, the Unicode line and paragraph separators, bidi overrides) is shown as a
visible escape, so a name, note or message can never move the cursor, retitle a window, clear a
screen, or start a line of an announcement. `--json` output keeps text exact. Stdlib only."""

from __future__ import annotations

import re
from functools import cache

# C0 but tab/newline, DEL, C1, line/paragraph separators, bidi embeddings/overrides/isolates
CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
LINE_BREAK = "\r\n|[\n\r\x0b\x0c\x85\u2028\u2029]"


@cache
def _pattern(source: str) -> re.Pattern[str]:
    """Compiled on first use: a hook with nothing to show never pays for it."""
    return re.compile(source)


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, keep_lines: bool = True) -> str:
    """`text` for a terminal: controls escaped; with `keep_lines`, newlines and tabs stay (a
    message body), else they are escaped too (a cell, a name, a one-line field)."""
    if not keep_lines:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    return _pattern(CONTROL).sub(_escape, text)


def one_line(text: str, limit: int | None = None) -> str:
    """The first line of `text`, controls escaped, cut with an ellipsis at `limit` characters."""
    stripped = text.strip()
    line = _pattern(LINE_BREAK).split(stripped, 1)[0] if stripped else ""
    line = visible(line, keep_lines=False)
    if limit is not None and len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def quoted(text: str, limit: int | None = None) -> str:
    """A one-line, quoted rendering for announcements: the quotes mark where peer text begins
    and ends, and nothing inside can end them (backslashes and quotes are escaped first)."""
    stripped = text.strip()
    line = _pattern(LINE_BREAK).split(stripped, 1)[0] if stripped else ""
    line = visible(line.replace("\\", "\\\\").replace('"', '\\"'), keep_lines=False)
    if limit is not None and len(line) > limit:
        line = line[: limit - 1] + "…"
    return f'"{line}"'


def clip(text: str, limit: int) -> str:
    """Cut at `limit` characters on a word boundary where one is near, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit * 0.6:
        cut = cut[:space]
    return cut.rstrip() + "…"
