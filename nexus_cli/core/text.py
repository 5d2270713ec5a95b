"""Text from peers is data. Before it reaches a terminal or an agent's context, every control
character (C0, DEL, C1, the Unicode line and paragraph separators, bidi overrides) and every
invisible format character (Unicode's Cf: zero-width spaces, tag characters that spell hidden
ASCII, and the like) is shown as a visible escape, so a name, note or message can never move the
cursor, retitle a window, clear a screen, start a line of an announcement, or say to a model
what a person cannot see. A message body is shown as a quoted block (`block`), so none of its
lines passes for a line of nexus's own. `--json` output keeps text exact. Stdlib only."""

from __future__ import annotations

import re
from functools import cache

# C0 but tab/newline, DEL, C1, line/paragraph separators, and Unicode's format characters (Cf:
# bidi controls, zero-width characters, tags, ...) but the zero-width (non-)joiner that emoji and
# several scripts are written with; also the variation selectors of the supplement, which can
# carry bytes after any character (tests check this against unicodedata)
CONTROL = ("[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
           "\u08e2\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
           "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
           "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]")
LINE_BREAK = "\r\n|[\n\r\x0b\x0c\x85\u2028\u2029]"


@cache
def _pattern(source: str) -> re.Pattern[str]:
    """Compiled on first use (CONTROL takes a millisecond): a hook with nothing to show never
    pays for it, nor does ASCII text, whose controls are exactly what is not printable."""
    return re.compile(source)


def prepare() -> None:
    """Compile the patterns now: a waiter does it before it waits, not after the poke."""
    _pattern(CONTROL)
    _pattern(LINE_BREAK)


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


def visible(text: str, keep_lines: bool = True) -> str:
    """`text` for a terminal: controls escaped; with `keep_lines`, newlines and tabs stay (a
    message body), else they are escaped too (a cell, a name, a one-line field)."""
    if not keep_lines:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    if text.isascii() and (text if not keep_lines else
                           text.replace("\n", "").replace("\t", "")).isprintable():
        return text  # (ASCII: nothing to escape; the pattern's ASCII part is the unprintable)
    return _pattern(CONTROL).sub(_escape, text)


def width(text: str) -> int:
    """The columns `text` takes on a terminal: East Asian wide and full-width characters two,
    combining marks none (so that plain columns line up under 日本語 as under ASCII)."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def cut_columns(text: str, columns: int, mark: str = "…") -> str:
    """`text` within `columns` terminal columns, ending in `mark` when it had to be cut."""
    if width(text) <= columns:
        return text
    room, used = columns - width(mark), 0
    for end, ch in enumerate(text):
        used += width(ch)
        if used > room:
            return text[:end] + mark
    return text


def pad(text: str, columns: int) -> str:
    """`text` followed by spaces up to `columns` terminal columns (str.ljust counts characters)."""
    return text + " " * max(0, columns - width(text))


def labelled(label: str, text: str) -> str:
    """`label: text` on one line, or, when the text has lines of its own, the label above them
    as a quoted block: no line of a peer's text stands unlabelled."""
    shown = visible(text)
    return f"{label}: {shown}" if "\n" not in shown else f"{label}:\n{block(text)}"


def block(text: str) -> str:
    """A message body for a terminal: controls escaped, every line quoted (`> `), so that no
    line of it reads as a line nexus printed (a message header, a notice)."""
    return "\n".join("> " + line if line else ">" for line in visible(text).split("\n"))


def first_line(text: str) -> str:
    """`text` up to its first line break (any of LINE_BREAK)."""
    if text.isascii():  # (ASCII: the breaks are \r, \n, \v and \f)
        cuts = [i for i in map(text.find, "\r\n\x0b\x0c") if i >= 0]
        return text[:min(cuts)] if cuts else text
    return _pattern(LINE_BREAK).split(text, 1)[0]


def one_line(text: str, limit: int | None = None) -> str:
    """The first line of `text`, controls escaped, cut with an ellipsis at `limit` characters."""
    line = first_line(text.strip())
    line = visible(line, keep_lines=False)
    if limit is not None and len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def quoted(text: str, limit: int | None = None) -> str:
    """A one-line, quoted rendering for announcements: the quotes mark where peer text begins
    and ends, and nothing inside can end them (backslashes and quotes are escaped first)."""
    line = first_line(text.strip())
    line = visible(line.replace("\\", "\\\\").replace('"', '\\"'), keep_lines=False)
    if limit is not None and len(line) > limit:
        line = line[: limit - 1] + "…"
    return f'"{line}"'


# what an id or a handle nexus wrote is made of (core/store): shown as it is
_TOKEN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@#+-")


def token(value: object) -> str:
    """A stored id or handle as it reaches a terminal, a model's context or a command nexus
    suggests (`nexus ask <handle>`, `nexus report <id>`): itself when it is made of what nexus
    writes, else its visible form in single quotes (one shell word that names nothing), so that
    no stored value can end a line, start a fake one, or add a word to a command."""
    text = value if isinstance(value, str) else str(value)
    if text and _TOKEN.issuperset(text):
        return text
    return "'" + visible(text, keep_lines=False).replace("'", "'\\''") + "'"


def party(name: object, handle: object) -> str:
    """A session as announcements and listings name it: `name (handle)`, both rendered."""
    return f"{one_line(str(name))} ({token(handle)})"
