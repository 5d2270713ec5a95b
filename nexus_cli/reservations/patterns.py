"""Paths and globs of reservations: one syntax, one normal form, one way to match a file and to
tell whether two patterns can name the same file. Stdlib only (the PreToolUse hook matches).

Syntax (docs/reservations.md, "Paths and globs"):
- a path without `*`, `?` or `[...]` names one file; a directory, or a path ending in `/`,
  names everything under it (`src/` is `src/**`);
- `*` matches any run of characters inside one path component (dotfiles too), `?` one
  character, `[abc]`, `[a-z]`, `[!abc]` one character of (not of) a set; none of them matches
  `/`; a `[` without its `]` is itself;
- `**` as a whole component matches any number of components: `src/**/test_*.py` (zero or more
  directories between), `docs/**` (everything under docs/), `**` (the whole project);
- a name that holds `*`, `?` or `[` itself is written with the character in brackets: `[*]`;
- at most MAX_COMPONENT_WILDCARDS wildcards in one component and MAX_WILDCARDS in a pattern.

Normal form: relative to a root (the reserving session's project root; for a path outside it,
that path's own project root), `.` and `..` resolved, symbolic links resolved (a link and its
target are one file), empty components dropped, runs of `*` and of `**` collapsed. On a
case-insensitive file system case does not count."""

from __future__ import annotations

import os
import re
from collections import namedtuple

from ..core import identity

LIT, ANY, CLASS, STAR = 0, 1, 2, 3
STAR_ATOM = (STAR,)
ANY_ATOM = (ANY,)
SLASH = (LIT, "/")
GLOBSTAR = "**"
MAX_LENGTH = 4096
# bounds of a glob (normalise refuses more): wildcards (`*`, `?`, `[...]`) in one component and
# in the whole pattern (`**` counted), so that matching and overlap stay small; and the steps the
# overlap decisions of one reserve may take under the store's write lock (about 0.3 s)
MAX_COMPONENT_WILDCARDS = 10
MAX_WILDCARDS = 40
OVERLAP_STEPS = 100_000

# a reservation's place: `root` (absolute, real) and `pattern` relative to it; `anchor` is the
# absolute real directory (or, for one file, the file) every match lies under: the hook looks a
# file up by its own path and its ancestors (case-folded where the file system ignores case)
Spec = namedtuple("Spec", "root pattern anchor exact folded")


# -- syntax ---------------------------------------------------------------------------------------


def _bracket(text: str, i: int) -> tuple[tuple, int] | None:
    """The set `[...]` starting at text[i], and the index after it; None when it never closes."""
    j = i + 1
    negated = j < len(text) and text[j] in "!^"
    if negated:
        j += 1
    ranges: list[tuple[int, int]] = []
    first = True
    while j < len(text):
        ch = text[j]
        if ch == "]" and not first:
            return (CLASS, negated, tuple(ranges)), j + 1
        first = False
        if j + 2 < len(text) and text[j + 1] == "-" and text[j + 2] != "]":
            lo, hi = ord(ch), ord(text[j + 2])
            if lo <= hi:  # a reversed range names nothing
                ranges.append((lo, hi))
            j += 3
        else:
            ranges.append((ord(ch), ord(ch)))
            j += 1
    return None


def atoms(component: str) -> list[tuple]:
    out: list[tuple] = []
    i = 0
    while i < len(component):
        ch = component[i]
        if ch == "*":
            if not out or out[-1] != STAR_ATOM:
                out.append(STAR_ATOM)
            i += 1
        elif ch == "?":
            out.append(ANY_ATOM)
            i += 1
        elif ch == "[" and (found := _bracket(component, i)) is not None:
            out.append(found[0])
            i = found[1]
        else:
            out.append((LIT, ch))
            i += 1
    return out


def literal(component: str) -> str | None:
    """The one name a component matches when it matches one (`a[*]b` is `a*b`), else None."""
    if component == GLOBSTAR:
        return None
    out = []
    for atom in atoms(component):
        if atom[0] == LIT:
            out.append(atom[1])
        elif atom[0] == CLASS and not atom[1] and len(atom[2]) == 1 and \
                atom[2][0][0] == atom[2][0][1]:
            out.append(chr(atom[2][0][0]))
        else:
            return None
    return "".join(out)


def escape(name: str) -> str:
    """A literal path (or name) as a pattern that matches exactly it."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def tidy(components: list[str]) -> list[str]:
    """Runs of `*` inside a component and of `**` components collapsed."""
    out: list[str] = []
    for c in components:
        if c != GLOBSTAR and "**" in c:
            c = re.sub(r"\*+", "*", c)
        if c == GLOBSTAR and out and out[-1] == GLOBSTAR:
            continue
        out.append(c)
    return out


# -- matching a file ---------------------------------------------------------------------------
#
# No regular expression (a backtracking engine is exponential on `*a*a*a...`): a pattern is a
# list of tokens, one per component (`**` being MANY, any number of components; a trailing `**`
# is ONE then MANY: at least one), matched by the greedy wildcard walk at both levels: inside a
# component `*` against characters, across components MANY against components. Each walk only
# ever returns to its last star, so a match costs at most (length of the text) x (length of the
# pattern) steps of its level; normalise bounds both.

class _Mark:
    __slots__ = ()


MANY, ONE = _Mark(), _Mark()  # tokens: a run of whole components (`**`), one non-empty component


def _component(comp: str) -> str | tuple:
    """A component as a token: its name when it is literal (compared with ==), else its atoms."""
    name = literal(comp)
    return name if name is not None else tuple(atoms(comp))


_TOKENS: dict[str, tuple] = {}


def tokens(pattern: str) -> tuple:
    found = _TOKENS.get(pattern)
    if found is None:
        parts = pattern.split("/")
        out: list = []
        for i, comp in enumerate(parts):
            if comp == GLOBSTAR:
                out += [ONE, MANY] if i == len(parts) - 1 else [MANY]
            else:
                out.append(_component(comp))
        found = _TOKENS[pattern] = tuple(out)
    return found


def _char(atom: tuple, ch: str) -> bool:
    kind = atom[0]
    if kind == LIT:
        return atom[1] == ch
    if kind == ANY:
        return True
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in atom[2]) != atom[1]


def _name(token: object, name: str) -> bool:
    """Whether one component (a name without `/`) matches a component token."""
    if isinstance(token, str):
        return token == name
    if token is ONE:
        return bool(name)
    assert isinstance(token, tuple)
    p = n = 0
    star, mark = -1, 0
    size = len(token)
    while n < len(name):
        if p < size and token[p][0] == STAR:
            star, mark = p, n
            p += 1
        elif p < size and _char(token[p], name[n]):
            p += 1
            n += 1
        elif star >= 0:  # the last star takes one more character
            mark += 1
            p, n = star + 1, mark
        else:
            return False
    while p < size and token[p][0] == STAR:
        p += 1
    return p == size


def match(pattern: str, path: str) -> bool:
    """Whether a relative path (components joined by `/`) matches a pattern. Linear in each
    level's text for a bounded pattern: no backtracking past the last `*` or `**`."""
    toks = tokens(pattern)
    comps = path.split("/")
    p = n = 0
    star, mark = -1, 0
    size = len(toks)
    while n < len(comps):
        if p < size and toks[p] is MANY:
            star, mark = p, n
            p += 1
        elif p < size and _name(toks[p], comps[n]):
            p += 1
            n += 1
        elif star >= 0 and comps[mark]:  # the last `**` takes one more (non-empty) component
            mark += 1
            p, n = star + 1, mark
        else:
            return False
    while p < size and toks[p] is MANY:
        p += 1
    return p == size


SPECIAL = re.compile(r"[*?\[\]]")  # the characters of wildcards (and of `]`)


def matches(root: str, pattern: str, folded: bool, real: str) -> bool:
    """Whether the file at the absolute real path `real` is one the reservation names. The
    pattern's literal head (before its first wildcard) and tail (after its last) are compared
    first: most candidates (a thousand globs in one directory) fail there without being parsed."""
    base = root.rstrip("/") + "/"
    if folded:
        base, real, pattern = base.lower(), real.lower(), pattern.lower()
    if not real.startswith(base):
        return False
    rel = real[len(base):]
    first = SPECIAL.search(pattern)
    if first is None:
        return rel == pattern
    if not rel.startswith(pattern[: first.start()]):
        return False
    tail = pattern[max(pattern.rfind(c) for c in "*?[]") + 1:]
    # a tail `/x` after a leading `**` that matched no component is the whole path `x`
    if tail and not ("/" + rel).endswith(tail):
        return False
    return match(pattern, rel)


def absolute(root: str, pattern: str) -> str:
    return escape(root.rstrip("/")) + "/" + pattern


# -- whether two patterns can name one file ----------------------------------------------------


def _has(label: tuple, code: int) -> bool:
    if label[0] == LIT:
        return ord(label[1]) == code
    if code == 0x2F:  # `/`: only a separator matches it
        return False
    if label[0] == ANY:
        return True
    return any(lo <= code <= hi for lo, hi in label[2]) != label[1]


def _common(a: tuple, b: tuple) -> str | None:
    """A character both labels accept, if any. The smallest such character starts an interval of
    the intersection, and every interval starts at a boundary of one of the sets: trying those
    boundaries is exact."""
    candidates = [ord(c) for c in "xab0_"]
    for label in (a, b):
        if label[0] == LIT:
            candidates.append(ord(label[1]))
        elif label[0] == CLASS:
            for lo, hi in label[2]:
                candidates += [lo, hi + 1]
    for code in (*candidates, 0, 0x30):
        if 0 <= code <= 0x10FFFF and _has(a, code) and _has(b, code):
            return chr(code)
    return None


def _nfa(pattern: str) -> tuple[list[list[tuple]], list[list[int]], int]:
    """(transitions, epsilon moves, accepting state) of a pattern, over characters."""
    trans: list[list[tuple]] = [[]]
    eps: list[list[int]] = [[]]

    def new() -> int:
        trans.append([])
        eps.append([])
        return len(trans) - 1

    cur = 0
    parts = pattern.split("/")
    for i, comp in enumerate(parts):
        last = i == len(parts) - 1
        if comp == GLOBSTAR:
            q = new()
            trans[cur].append((ANY_ATOM, q))
            trans[q].append((ANY_ATOM, q))
            if last:  # [^/]+(/[^/]+)*
                r = new()
                trans[q].append((SLASH, r))
                trans[r].append((ANY_ATOM, q))
                cur = q
            else:  # ([^/]+/)*, then the next component from where it started
                trans[q].append((SLASH, cur))
            continue
        for atom in atoms(comp):
            q = new()
            if atom == STAR_ATOM:
                eps[cur].append(q)
                trans[q].append((ANY_ATOM, q))
            else:
                trans[cur].append((atom, q))
            cur = q
        if not last:
            q = new()
            trans[cur].append((SLASH, q))
            cur = q
    return trans, eps, cur


class TooComplex(ValueError):
    """Deciding an overlap would take more than its budget of steps."""


def budget() -> list[int]:
    """The steps the overlap decisions of one change may take together (a mutable count)."""
    return [OVERLAP_STEPS]


def overlap(a: str, b: str, steps: list[int] | None = None) -> str | None:
    """A path both patterns match (shortest first found), or None when no path can match both.
    Exact: a breadth-first walk of the product of the two patterns' automata. The walk spends
    `steps` (one per pair of moves tried; a fresh OVERLAP_STEPS when None) and raises TooComplex
    when they run out: it runs under the store's write lock, which it must not hold for long."""
    from collections import deque

    left = steps if steps is not None else budget()

    ta, ea, fa = _nfa(a)
    tb, eb, fb = _nfa(b)
    start = (0, 0)
    seen: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {start: None}
    queue = deque([start])

    def push(state: tuple[int, int], parent: tuple[int, int], ch: str) -> None:
        if state not in seen:
            seen[state] = (parent, ch)
            queue.append(state)

    while queue:
        state = queue.popleft()
        i, j = state
        if i == fa and j == fb:
            out = []
            step = seen[state]
            while step is not None:
                out.append(step[1])
                step = seen[step[0]]
            return "".join(reversed(out))
        left[0] -= 1 + len(ta[i]) * len(tb[j])
        if left[0] < 0:
            raise TooComplex(f"comparing {a[:60]!r} with {b[:60]!r} takes too many steps")
        for k in ea[i]:
            push((k, j), state, "")
        for k in eb[j]:
            push((i, k), state, "")
        for la, ti in ta[i]:
            for lb, tj in tb[j]:
                ch = _common(la, lb)
                if ch is not None:
                    push((ti, tj), state, ch)
    return None


# -- normal form ---------------------------------------------------------------------------------

_CASELESS: dict[str, bool] = {}


def case_insensitive(path: str) -> bool:
    """Whether the file system holding `path` ignores case: the nearest existing component with
    letters, looked up with its case swapped, is the same file."""
    probe = path
    while probe and probe != os.path.dirname(probe):
        if probe in _CASELESS:
            return _CASELESS[probe]
        base = os.path.basename(probe)
        if base.lower() != base.upper() and os.path.lexists(probe):
            swapped = os.path.join(os.path.dirname(probe), base.swapcase())
            try:
                same = os.path.samestat(os.lstat(probe), os.lstat(swapped))
            except OSError:
                same = False
            _CASELESS[probe] = same
            return same
        probe = os.path.dirname(probe)
    return False


def ancestors(path: str) -> list[str]:
    """`path` and every directory above it, up to `/`."""
    out = [path]
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return out
        out.append(parent)
        path = parent


def locate(path: str, cwd: str, follow: bool = True) -> tuple[str, list[str], bool]:
    """A file as the hook sees it: its real absolute path, the anchors that could hold it (the
    path and its ancestors, case-folded where case does not count), and whether it is folded.
    With `follow` false a symbolic link is itself (its directory resolved, not its target): what
    a commit changes is the link."""
    given = os.path.join(cwd, path)
    if follow:
        real = os.path.realpath(given)
    else:
        head, tail = os.path.split(os.path.normpath(given))
        real = os.path.join(os.path.realpath(head), tail) if tail else os.path.realpath(given)
    folded = case_insensitive(os.path.dirname(real))
    return real, ancestors(real.lower() if folded else real), folded


def normalise(raw: str, cwd: str, project: str) -> Spec:
    """The normal form of a path or glob typed in `cwd` by a session of `project`; ValueError
    saying why when it cannot be one."""
    if not raw.strip():
        raise ValueError("an empty path")
    if "\x00" in raw:
        raise ValueError("a path cannot hold a NUL character")
    if len(raw) > MAX_LENGTH:
        raise ValueError(f"longer than {MAX_LENGTH} characters")
    parts = [c for c in raw.split("/") if c not in ("", ".")]
    names = [literal(c) for c in parts]
    k = next((i for i, name in enumerate(names) if name is None), len(parts))
    plain, rest = names[:k], tidy(parts[k:])
    if ".." in rest:
        raise ValueError("`..` after a wildcard cannot be resolved; write the directory out")
    wild_atoms = [0 if c == GLOBSTAR else sum(a[0] != LIT for a in atoms(c)) for c in rest]
    if max(wild_atoms, default=0) > MAX_COMPONENT_WILDCARDS:
        raise ValueError(f"more than {MAX_COMPONENT_WILDCARDS} wildcards (`*`, `?`, `[...]`) in "
                         "one component")
    if sum(wild_atoms) + rest.count(GLOBSTAR) > MAX_WILDCARDS:
        raise ValueError(f"more than {MAX_WILDCARDS} wildcards in one pattern")
    anchor = os.path.realpath(os.path.join("/" if raw.startswith("/") else cwd, *plain))  # type: ignore[arg-type]
    if not rest and (raw.split("/")[-1] in ("", ".") or os.path.isdir(anchor)):
        rest = [GLOBSTAR]
    mine = os.path.realpath(project)
    if anchor == mine or anchor.startswith(mine.rstrip("/") + "/"):
        root = mine
    else:  # a path in another project belongs to that one
        root = os.path.realpath(identity.project_root(
            anchor if os.path.isdir(anchor) else os.path.dirname(anchor)))
    inside = anchor[len(root.rstrip("/")) + 1:] if anchor != root else ""
    pattern = "/".join([*(escape(c) for c in inside.split("/") if c), *rest])
    if len(pattern) > MAX_LENGTH:
        raise ValueError(f"longer than {MAX_LENGTH} characters once resolved")
    folded = case_insensitive(anchor)
    return Spec(root, pattern, anchor.lower() if folded else anchor, not rest, folded)
