""""Did you mean": the nearest of the words a person could have meant, for a mistyped command,
session name, setting or preset. Stdlib only."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

MOST = 3  # suggestions named at most
CUTOFF = 0.6  # difflib's similarity below which a word is not offered


def nearest(word: str, choices: Iterable[str], most: int = MOST) -> list[str]:
    """The choices closest to `word`, closest first, case aside; none when none is close."""
    by_lower: dict[str, str] = {}
    for choice in choices:
        if choice and choice.lower() not in by_lower:
            by_lower[choice.lower()] = choice
    found = difflib.get_close_matches(word.lower(), list(by_lower), n=most, cutoff=CUTOFF)
    return [by_lower[f] for f in found]


def did_you_mean(word: str, choices: Iterable[str],
                 shown: Callable[[str], str] = lambda c: f"`{c}`") -> str:
    """`did you mean `send`?`, or "" when nothing is close."""
    return phrase([shown(f) for f in nearest(word, choices)])


def phrase(found: list[str]) -> str:
    """`did you mean a, b or c?` for words already shown as they are to be typed."""
    if not found:
        return ""
    return "did you mean " + (", ".join(found[:-1]) + " or " if found[1:] else "") + found[-1] + "?"
