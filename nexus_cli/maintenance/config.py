"""`nexus config list|get|set|unset`: the settings in config.toml (see core.settings), written
atomically, one key at a time; every other byte of the file, comments included, is kept."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..core import atomic, caller, settings, suggest
from ..core.context import Ctx
from ..core.errors import NexusError

if TYPE_CHECKING:
    from .models import ConfigGetArgs, ConfigSetArgs


def _entry(key: str, values: dict[str, object], in_file: dict[str, object]) -> dict:
    _kind, low, high, default, meaning = settings.KEYS[key]
    return {"key": key, "value": values[key], "default": default,
            "source": "file" if key in in_file else "default", "meaning": meaning,
            "range": f"{low}-{high}"}


def _read(file: str) -> dict[str, object]:
    try:
        return settings.read_file(file)
    except (OSError, ValueError) as exc:
        raise NexusError("config_invalid", file, f"it cannot be read ({exc})",
                         "fix it by hand; nexus never rewrites a file it cannot read") from None


def config_list(ctx: Ctx, a: object) -> dict:
    file = settings.path(ctx.store.root)
    in_file, values = _read(file), settings.load(ctx.store.root)
    return {"file": file, "settings": [_entry(k, values, in_file) for k in settings.KEYS]}


def known(key: str) -> None:
    """`invalid_argument` for a key that is no setting, naming the nearest ones."""
    if key not in settings.KEYS:
        hint = suggest.did_you_mean(key, settings.KEYS)
        raise NexusError("invalid_argument", "KEY", f"no setting {key!r}",
                         (hint + " " if hint else "") +
                         f"the settings are {', '.join(settings.KEYS)} (`nexus config list`)")


def config_get(ctx: Ctx, a: ConfigGetArgs) -> dict:
    known(a.key)
    file = settings.path(ctx.store.root)
    return _entry(a.key, settings.load(ctx.store.root), _read(file))


def config_set(ctx: Ctx, a: ConfigSetArgs) -> dict:
    """Set (or with `value` omitted, unset) one key in config.toml."""
    file = settings.path(ctx.store.root)
    known(a.key)
    with ctx.read() as conn:
        me = ctx.me(conn)
    if me.is_agent:  # the limits an agent lives under (turns, rates, files) are not its own
        raise NexusError("people_only", a.key, "settings are the person's: an agent may read "
                         "them (`nexus config get`) but not change them",
                         "ask the person to run it in their shell")
    if a.key in settings.PERSON_ONLY:
        caller.person_at_terminal(me, f"changing {a.key}", a.key)
    value = None
    if a.value is not None:
        try:
            value = settings.check(a.key, a.value)
        except ValueError as exc:
            raise NexusError("invalid_argument", "VALUE", str(exc),
                             "pick a value in range") from None
    _read(file)  # refuse a file that does not parse before touching it
    text = ""
    if os.path.exists(file):
        with open(file, encoding="utf-8") as fh:
            text = fh.read()
    line = re.compile(rf"^\s*{re.escape(a.key)}\s*=.*$", re.MULTILINE)
    new = line.sub("", text).rstrip("\n") if value is None else (
        line.sub(f"{a.key} = {value}", text) if line.search(text)
        else (text.rstrip("\n") + "\n" if text.strip() else "") + f"{a.key} = {value}")
    _write(file, new + "\n" if new.strip() else "")
    if a.key == "autoReserve" and value:
        from ..reservations import marker

        marker.raise_(ctx.store.root)  # from now on every edit reaches the check
    return config_get(ctx, a)


def _write(file: str, text: str) -> None:
    os.makedirs(os.path.dirname(file), mode=0o700, exist_ok=True)
    try:
        atomic.write(file, text, 0o600)
    except OSError as exc:
        raise NexusError("config_unwritable", file, f"cannot write it: {exc.strerror or exc}",
                         "make its folder writable") from None
