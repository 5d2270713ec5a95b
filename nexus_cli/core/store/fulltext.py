"""Full-text search in team mode: what PostgreSQL needs to answer as SQLite's FTS5 does.

SQLite indexes with FTS5 (`unicode61 remove_diacritics 2`: words are runs of letters and digits,
case and Latin diacritics folded; `trigram`: case-insensitive substrings). A stock PostgreSQL
(no extension, no superuser) has tsvector/GIN and ILIKE. Here, in one place:

- `nexus_words(text)`, the SQL function migration 14 creates on PostgreSQL: the text folded as
  unicode61 folds it (`FOLD`: punctuation to spaces, Latin/Greek/Cyrillic capitals to small
  letters, Latin diacritics dropped, so the server's parser sees plain words in any locale),
  then `to_tsvector('simple', ...)` (no stemming, no stop words); `ws_words`, the workspace's
  searchable rows with their words stored (GIN), kept by triggers as SQLite's ws_fts is
  (`POSTGRESQL`: migration 14's PostgreSQL-only statements).
- `tsquery(query)`: an FTS5 query (words, "phrases", prefix*, AND/OR/NOT, parentheses) as the
  tsquery that matches the same rows; `BadQuery` where FTS5 would raise a syntax error.
- `snippet(text, query)`: FTS5's `snippet()` for a hit (16 words, `[` `]` around the matches).
- `like(text)`: a LIKE pattern of a literal substring (`%`, `_` and `\\` escaped; `ESCAPE '\\'`).

Stdlib only."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Callable

from . import policy

WORDS = "nexus_words"  # the SQL function (migration 14, PostgreSQL only)
SNIPPET_WORDS = 16  # as find's snippet(ws_fts, 1, '[', ']', '…', 16)
# characters of a text whose words PostgreSQL stores: a tsvector holds at most 1 MB (an error
# past it), which 250,000 characters of distinct short words stay well below (~600 KB); FTS5
# indexes a whole document (up to DOC_MAX, 1,000,000)
INDEXED_MAX = 250_000


class BadQuery(ValueError):
    """Not FTS5 query syntax (where SQLite raises `fts5: syntax error`)."""


def _fold_table() -> tuple[str, str]:
    """(from, to) for SQL translate() and str.maketrans: one character each."""
    src: list[str] = []
    dst: list[str] = []
    spaces = [*string.punctuation, *map(chr, range(0xA0, 0xC0)), "\u00d7", "\u00f7",
              *map(chr, range(0x2000, 0x2070)), *map(chr, range(0x3000, 0x3004)),
              *map(chr, range(0x3008, 0x3012))]
    for ch in spaces:
        src.append(ch)
        dst.append(" ")
    for cp in (*range(0xC0, 0x250), *range(0x370, 0x400), *range(0x400, 0x500)):
        ch = chr(cp)
        if ch in src or unicodedata.category(ch)[0] != "L":
            continue
        low = ch.lower()
        if len(low) != 1:
            continue
        base = unicodedata.normalize("NFD", low)[0]
        out = base if base.isascii() and base.isalpha() else low
        if out != ch:
            src.append(ch)
            dst.append(out)
    return "".join(src), "".join(dst)


FOLD_FROM, FOLD_TO = _fold_table()
# symbols past the table (arrows, shapes, dingbats, emoji): separators to FTS5, letters to the
# server's parser in a C locale
SYMBOLS = "[\u2190-\u2bff\ufe00-\ufe0f\U0001f000-\U0001faff]"
_SYMBOLS = re.compile(SYMBOLS)
ASCII_FROM = string.punctuation  # an ASCII text (most): translate() compares each character
# with each of `from`, so a text without other characters gets the short table
_FOLD = str.maketrans(FOLD_FROM, FOLD_TO)


def _literal(text: str) -> str:
    """A string constant in plain ASCII (`E'...'`, other characters as \\u escapes): the script
    `nexus team init` prints holds no invisible or bidirectional character."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("''")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return "E'" + "".join(out) + "'"


_PROJECT = ("'project'", "{r}.id", "{r}.id || ' ' || {r}.name",
            "{r}.description || ' ' || {r}.tech || ' ' || {r}.internal_docs", "{r}.id")
_DOC = ("'doc'", "{r}.id", "{r}.title", "{r}.content", "NULL")
_STRATEGY = ("'strategy'", "CAST({r}.version AS TEXT)", "'global strategy'", "{r}.content",
             "NULL")
_CHAT = ("CASE WHEN {r}.meeting IS NULL THEN 'chat' ELSE 'meeting' END", "CAST({r}.seq AS TEXT)",
         "coalesce({r}.meeting, 'global chat')", "{r}.text", "{r}.project")


def _values(cols: tuple[str, ...], row: str) -> str:
    return ", ".join(c.format(r=row) for c in cols)


def _trigger(table: str, cols: tuple[str, ...], events: str) -> list[str]:
    """A trigger that keeps ws_words as SQLite's triggers keep ws_fts (a change: the old
    entry out, the new one in)."""
    name = f"{table}_words"
    out = "" if "UPDATE" not in events and "DELETE" not in events else (
        f"IF TG_OP <> 'INSERT' THEN DELETE FROM ws_words WHERE kind = {cols[0].format(r='OLD')}"
        f" AND ref = {cols[1].format(r='OLD')}; END IF; ")
    if table == "ws_strategy":  # the latest version only
        out = "DELETE FROM ws_words WHERE kind = 'strategy'; "
    put = "" if events == "DELETE" else (
        f"IF TG_OP <> 'DELETE' THEN INSERT INTO ws_words (kind, ref, title, body, project)"
        f" VALUES ({_values(cols, 'NEW')}); END IF; ")
    return [f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $nexus_words$"
            f" BEGIN {out}{put}RETURN NULL; END $nexus_words$",
            f"CREATE TRIGGER {name} AFTER {events} ON {table} FOR EACH ROW"
            f" EXECUTE FUNCTION {name}()"]


# Migration 14 on PostgreSQL, statement by statement: the words function; ws_words, what SQLite's
# ws_fts holds but direct messages (they are searched in their own table, where row-level
# security applies, and only the caller's), with its words stored and a GIN index; the triggers
# that keep it, and what is there already.
POSTGRESQL: tuple[str, ...] = (
    f"""CREATE FUNCTION {WORDS}(t TEXT) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $nexus_words$ SELECT to_tsvector('simple'::regconfig, CASE WHEN octet_length(s) =
    char_length(s) THEN translate(s, {_literal(ASCII_FROM)}, {_literal(" " * len(ASCII_FROM))})
    ELSE translate(regexp_replace(s, {_literal(SYMBOLS)}, ' ', 'g'), {_literal(FOLD_FROM)},
    {_literal(FOLD_TO)}) END) FROM (SELECT left(t, {INDEXED_MAX}) AS s) AS head $nexus_words$""",
    f"""CREATE TABLE ws_words (
        kind TEXT COLLATE "C" NOT NULL,
        ref TEXT COLLATE "C" NOT NULL,
        title TEXT COLLATE "C" NOT NULL,
        body TEXT COLLATE "C" NOT NULL,
        project TEXT COLLATE "C",
        words tsvector GENERATED ALWAYS AS ({WORDS}(title || ' ' || body)) STORED,
        PRIMARY KEY (kind, ref)
    )""",
    # no pending list: a search would read all of it until a vacuum merged it (ms per query)
    "CREATE INDEX ws_words_words ON ws_words USING gin (words) WITH (fastupdate = off)",
    *_trigger("ws_projects", _PROJECT, "INSERT OR UPDATE OR DELETE"),
    *_trigger("ws_docs", _DOC, "INSERT OR UPDATE OR DELETE"),
    *_trigger("ws_strategy", _STRATEGY, "INSERT"),
    *_trigger("ws_chat", _CHAT, "INSERT OR DELETE"),
    f"INSERT INTO ws_words (kind, ref, title, body, project) SELECT {_values(_PROJECT, 'p')}"
    " FROM ws_projects p",
    f"INSERT INTO ws_words (kind, ref, title, body, project) SELECT {_values(_DOC, 'd')}"
    " FROM ws_docs d",
    f"INSERT INTO ws_words (kind, ref, title, body, project) SELECT {_values(_STRATEGY, 's')}"
    " FROM ws_strategy s ORDER BY s.version DESC LIMIT 1",
    f"INSERT INTO ws_words (kind, ref, title, body, project) SELECT {_values(_CHAT, 'c')}"
    " FROM ws_chat c",
)


# team mode (core/store/policy.py): the words are for everyone to search and only the triggers
# write them, as their owner (team/security.py makes these functions SECURITY DEFINER)
TEAM_TABLES = {"ws_words": policy.Table(read=policy.TEAM, insert=policy.FUNCTIONS,
                                        update=policy.FUNCTIONS, delete=policy.FUNCTIONS)}
TRIGGER_FUNCTIONS = tuple(f"{t}_words" for t in ("ws_projects", "ws_docs", "ws_strategy",
                                                 "ws_chat"))


def words(text: str) -> list[str]:
    """The words `nexus_words` makes of a text (the same folding)."""
    return _SYMBOLS.sub(" ", text).translate(_FOLD).lower().split()


# -- FTS5 query syntax -> tsquery -------------------------------------------------------------

_TOKEN = re.compile(r'\s+|"(?:[^"]|"")*"|\(|\)|\*|[\w\x1a]+|[^\x00-\x7f]+|.', re.UNICODE)


NOTHING = "'!'"  # a lexeme no text has (`!` is folded to a space): a phrase of no word


def _lexeme(word: str) -> str:
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def _phrase(text: str, prefix: bool) -> str | None:
    found = words(text)
    if not found:
        return None  # a phrase without a word: matches nothing
    parts = [_lexeme(w) for w in found]
    if prefix:
        parts[-1] += ":*"
    return parts[0] if len(parts) == 1 else "(" + " <-> ".join(parts) + ")"


class _Parser:
    """FTS5's grammar, as far as nexus's queries go: phrases (bare words or "quoted", `*` for
    a prefix), AND (implicit between phrases only: `(a) b` is an error, as in FTS5), OR, binary
    NOT, parentheses. NEAR, column filters, `+` and `^` are syntax errors here (the caller
    then takes the words as words, as it does for any query FTS5 refuses). Precedence as
    FTS5's: NOT, then AND, then OR."""

    def __init__(self, query: str) -> None:
        self.tokens: list[str] = []
        pos = 0
        for m in _TOKEN.finditer(query):
            if m.start() != pos:
                raise BadQuery(query)
            pos = m.end()
            if not m.group(0).isspace():
                self.tokens.append(m.group(0))
        if pos != len(query):
            raise BadQuery(query)
        self.i = 0
        self.phrases: list[tuple[tuple[str, ...], bool]] = []  # what a match highlights
        self.negated = False

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def parse(self) -> str:
        if not self.tokens:
            raise BadQuery("")
        out = self.or_()
        if self.peek() is not None:
            raise BadQuery(self.peek() or "")
        return out

    def _joined(self, word: str, operand: Callable[[], str], op: str) -> str:
        """`operand (word operand)*` as tsquery's `op` between them."""
        parts = [operand()]
        while self.peek() == word:
            self.take()
            parts.append(operand())
        return parts[0] if len(parts) == 1 else "(" + f" {op} ".join(parts) + ")"

    def or_(self) -> str:
        return self._joined("OR", self.and_, "|")

    def and_(self) -> str:
        return self._joined("AND", self.not_, "&")

    def not_(self) -> str:
        out = self.primary()
        while self.peek() == "NOT":
            self.take()
            negated, self.negated = self.negated, True
            out = f"({out} & !{self.primary()})"
            self.negated = negated
        return out

    def primary(self) -> str:
        """( expr ), or phrases side by side (FTS5's implicit AND joins phrases only)."""
        if self.peek() == "(":
            self.take()
            inner = self.or_()
            if self.peek() != ")":
                raise BadQuery("(")
            self.take()
            return inner
        parts = [self.atom()]
        while self.peek() not in (None, "AND", "OR", "NOT", "(", ")", "*"):
            parts.append(self.atom())
        return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"

    def atom(self) -> str:
        tok = self.peek()
        if tok is None or tok in ("AND", "OR", "NOT", "(", ")", "*"):
            raise BadQuery(tok or "")
        self.take()
        if len(tok) > 1 and tok[0] == tok[-1] == '"':
            text = tok[1:-1].replace('""', '"')
        elif re.fullmatch(r"[\w\x1a]+|[^\x00-\x7f]+", tok):
            if tok == "NEAR" and self.peek() == "(":
                raise BadQuery("NEAR")
            text = tok
        else:
            raise BadQuery(tok)
        prefix = self.peek() == "*"
        if prefix:
            self.take()
        if not self.negated and words(text):
            self.phrases.append((tuple(words(text)), prefix))
        return _phrase(text, prefix) or NOTHING


def tsquery(query: str) -> str:
    """The tsquery text that matches what the FTS5 query matches; BadQuery where FTS5 refuses
    it. A phrase without a word matches nothing (as in FTS5)."""
    return _Parser(query).parse()


# -- snippets ---------------------------------------------------------------------------------

_RUN = re.compile(r"\S+")


def snippet(text: str, query: str, size: int = SNIPPET_WORDS) -> str:
    """A window of `size` words of `text` around its matches of the query's phrases, each match
    in brackets, `…` where the text goes on (FTS5's snippet(), near enough)."""
    try:
        parser = _Parser(query)
        parser.parse()
        phrases = parser.phrases
    except BadQuery:
        phrases = [((w,), False) for w in words(" ".join(re.findall(r"\w+", query)))]
    folded = _SYMBOLS.sub(" ", text).translate(_FOLD)  # one character for one: offsets stay
    spans = [(m.start(), m.end(), m.group(0).lower()) for m in _RUN.finditer(folded)]
    if not spans:
        return ""
    found: list[tuple[int, int]] = []  # (first word, past the last) of each phrase's match
    for i in range(len(spans)):
        for ws, prefix in phrases:
            k = len(ws)
            got = [w for _, _, w in spans[i:i + k]]
            if len(got) == k and got[:-1] == list(ws[:-1]) and (
                    got[-1].startswith(ws[-1]) if prefix else got[-1] == ws[-1]):
                found.append((i, i + k))
                break
    best, score = 0, -1
    for first, _ in (found or [(0, 0)]):  # the window with most matches, its first early in it
        lo = max(0, min(first - 2, len(spans) - size))
        got_in = sum(1 for a, b in found if a >= lo and b <= lo + size)
        if got_in > score:
            best, score = lo, got_in
    window = range(best, min(best + size, len(spans)))
    opens = {a: b for a, b in reversed(found) if a in window}
    out, pos, close = [], spans[best][0], -1
    for i in window:
        a, b, _ = spans[i]
        out.append(text[pos:a])
        if close < 0 and i in opens:
            out.append("[")
            close = min(opens[i], window.stop) - 1
        out.append(text[a:b])
        if i == close:
            out.append("]")
            close = -1
        pos = b
    if close >= 0:
        out.append("]")
    return ("…" if best > 0 else "") + "".join(out) + ("…" if window.stop < len(spans) else "")


def like(text: str) -> str:
    """`%text%` with LIKE's own characters taken literally (ESCAPE '\\'), its ASCII letters in
    lower case: `lower(column) LIKE` it matches as SQLite's LIKE does on both engines (ASCII case
    ignored; `lower` of a "C" column folds ASCII only, as SQLite's does)."""
    text = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%" + text.translate(_ASCII_LOWER) + "%"


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}
