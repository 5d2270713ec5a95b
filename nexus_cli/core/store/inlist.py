"""IN lists of any length, a chunk at a time: a statement binds at most 999 parameters on older
SQLite builds, and one of thousands is slow to prepare. Stdlib only."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

SIZE = 500  # values per IN list
T = TypeVar("T")


def chunked(values: Sequence[T], size: int = SIZE) -> Iterator[Sequence[T]]:
    """`values` in consecutive slices of at most `size`."""
    for start in range(0, len(values), size):
        yield values[start:start + size]


def marks(values: Sequence[object]) -> str:
    """The placeholders of an IN list of these values: `?,?,?`."""
    return ",".join("?" * len(values))
