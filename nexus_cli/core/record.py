"""Small records with named fields: what `collections.namedtuple` gave nexus, without building a
class from source at import (half a millisecond of a hook's start for each one). Stdlib only."""

from __future__ import annotations

from _collections import _tuplegetter  # (loaded with `json` and `sqlite3`: namedtuple's getter)

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from typing import Self


class Record(tuple):
    """A subclass names its fields in order in `_fields` (with `__slots__ = ()`), annotates them,
    and may give defaults for the last ones (`_defaults`). Built from positions or keywords;
    equal (to a record of its own type only), hashed, shown and iterated by value in field
    order, read-only; `_replace` makes a changed copy. The values are the tuple itself: one
    allocation builds a record (setting a field of a slotted object costs a call each), and a
    field is read by C code (`_tuplegetter`)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _defaults: tuple = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        for i, name in enumerate(cls._fields):
            setattr(cls, name, _tuplegetter(i, None))

    def __new__(cls, *args: object, **given: object) -> Self:
        fields: tuple[str, ...] = cls._fields
        first_default = len(fields) - len(cls._defaults)
        if not given and first_default <= len(args):  # by position: most records
            if len(args) > len(fields):
                raise TypeError(f"{cls.__name__} takes {len(fields)} values")
            return tuple.__new__(cls, args + cls._defaults[len(args) - first_default:])
        values = list(args)
        for i in range(len(args), len(fields)):
            name = fields[i]
            if name in given:
                values.append(given.pop(name))
            elif i >= first_default:
                values.append(cls._defaults[i - first_default])
            else:
                raise TypeError(f"{cls.__name__}: {name} missing")
        if given:  # a name that is no field, or one given by position too
            raise TypeError(f"{cls.__name__}: unexpected {', '.join(given)}")
        return tuple.__new__(cls, values)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only (use _replace)")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and tuple.__eq__(self, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__

    def __getnewargs__(self) -> tuple:  # (copy and pickle build it from its values)
        return tuple(self)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self,
                                                                     strict=True))
        return f"{type(self).__name__}({shown})"

    def _replace(self, **changes: object) -> Self:
        return type(self)(**{name: changes.pop(name, value)
                             for name, value in zip(self._fields, self, strict=True)}, **changes)
