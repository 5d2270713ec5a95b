"""Small records with named fields: what `collections.namedtuple` gave nexus, without building a
class from source at import (half a millisecond of a hook's start for each one). Stdlib only."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Self


class Record:
    """A subclass names its fields in order in `_fields` (and `__slots__ = _fields`), annotates
    them, and may give defaults for the last ones (`_defaults`). Built from positions or
    keywords; equal, hashed, shown and iterated by value in field order, read-only; `_replace`
    makes a changed copy."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _defaults: tuple = ()

    def __init__(self, *args: object, **given: object) -> None:
        fields: tuple[str, ...] = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} values")
        first_default = len(fields) - len(self._defaults)
        for i, name in enumerate(fields):
            if i < len(args):
                value = args[i]
            elif name in given:
                value = given.pop(name)
            elif i >= first_default:
                value = self._defaults[i - first_default]
            else:
                raise TypeError(f"{type(self).__name__}: {name} missing")
            object.__setattr__(self, name, value)
        if given:  # a name that is no field, or one given by position too
            raise TypeError(f"{type(self).__name__}: unexpected {', '.join(given)}")

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only (use _replace)")

    def __iter__(self) -> Iterator:
        return iter(self._values())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def _replace(self, **changes: object) -> Self:
        return type(self)(**{name: changes.pop(name, getattr(self, name))
                             for name in self._fields}, **changes)
