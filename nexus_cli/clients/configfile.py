"""Editing a client's config files safely.

- A file that does not parse, or has a shape nexus does not understand, is refused (exit 8) and
  left byte for byte as it was.
- Every file of an install is checked (readable, writable by its mode, its folder writable)
  before any is written; a write that fails puts back the files already written.
- A symbolic link is followed: its target is edited in place (the link stays a link).
- Writes are atomic (a temporary file renamed over the target), keep the target's mode, leave a
  `.nexus-backup` of what was there, and hold a portalocker lock against a second nexus."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..core import atomic
from ..core.errors import NexusError
from ..core.store import paths

NEVER = "fix the file by hand; nexus never rewrites a file it cannot read"


def config_error(path: str, reason: str, action: str = NEVER) -> NexusError:
    return NexusError("config_invalid", path, reason, action)


def shape_error(path: str, what: str) -> NexusError:
    return NexusError("config_invalid", path, f"an unexpected shape: {what}",
                      "fix it by hand; nexus never edits a file whose shape it does not know")


def read_text(path: str) -> str | None:
    """The file's text, None when it does not exist; a clear error when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        if os.path.islink(path):
            raise NexusError("config_unwritable", path, "a symbolic link to a file that does "
                             "not exist", "point the link at a file, or remove it") from None
        return None
    except UnicodeDecodeError:
        raise config_error(path, "not UTF-8 text", "fix or move the file, then retry") from None
    except IsADirectoryError:
        raise NexusError("config_unwritable", path, "a directory, not a file",
                         "move it aside") from None
    except OSError as exc:
        raise NexusError("config_unwritable", path, f"cannot read it: {exc.strerror}",
                         "check its permissions") from None


def load_json(path: str, text: str | None) -> dict:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise config_error(path, f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise config_error(path, "the top level is not a JSON object")
    return data


def dump_json(data: dict, indent: int | str = 2) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def indent_of(text: str | None) -> int | str:
    """The indentation a JSON file is written with, its first indented line's (2 when none)."""
    for line in (text or "").splitlines()[1:]:
        body = line.lstrip(" \t")
        if body and len(body) < len(line):
            lead = line[:len(line) - len(body)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def finish(text: str | None, old: dict, new: dict) -> str | None:
    """The new text of a JSON config, indented as it was: unchanged when nothing changed, None
    (remove the file) when nothing is left."""
    if new == old:
        return text
    return dump_json(new, indent_of(text)) if new else None


@dataclass
class Change:
    path: str
    before: str | None
    after: str | None  # None: remove the file (it held only what nexus had added)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def target(self) -> str:
        """The file really written: a symbolic link's target."""
        return os.path.realpath(self.path)

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
            tofile=f"{self.path} (after)" if self.after is not None else "/dev/null"))


def plan(path: str, edit: Callable[[str | None], str | None]) -> Change:
    before = read_text(path)
    return Change(path, before, edit(before))


def unwritable(path: str, reason: str) -> NexusError:
    return NexusError("config_unwritable", path, f"{reason}; nothing was changed",
                      "make it writable (or use --dry-run to see the edit)")


def check_writable(change: Change) -> None:
    """Everything a write of this change needs, checked before anything is written."""
    target = change.target
    folder = os.path.dirname(target) or "."
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise unwritable(change.path, exc.strerror or str(exc)) from None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise unwritable(change.path, "not a regular file")
        if not st.st_mode & stat.S_IWUSR:
            raise unwritable(change.path, f"it is read-only (mode {stat.S_IMODE(st.st_mode):04o})")
    probe = folder
    while not os.path.exists(probe):  # the nearest existing folder must take new entries
        probe = os.path.dirname(probe) or "."
    if not os.path.isdir(probe):
        raise unwritable(change.path, f"{probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise unwritable(change.path, f"cannot create files in {probe}")


@contextlib.contextmanager
def locked(changes: list[Change]) -> Iterator[None]:
    import portalocker

    lock_dir = os.path.join(paths.home(), "locks")
    paths.ensure_private_dir(paths.home())
    paths.ensure_private_dir(lock_dir)
    with contextlib.ExitStack() as stack:
        for change in sorted(changes, key=lambda c: c.target):
            name = "config-" + change.target.replace(os.sep, "_") + ".lock"
            try:
                stack.enter_context(portalocker.Lock(os.path.join(lock_dir, name), timeout=30))
            except portalocker.exceptions.LockException:
                raise NexusError("config_unwritable", change.path,
                                 "another nexus install holds its lock",
                                 "wait for it to finish and retry") from None
        yield


def apply_all(changes: list[Change]) -> list[str | None]:
    """Write every change, or none: all are checked first; if a write fails, the files already
    written are put back. Returns each change's backup path (None where nothing was backed up)."""
    todo = [c for c in changes if c.changed]
    for change in todo:
        check_writable(change)
    with locked(todo):
        for change in todo:
            if read_text(change.path) != change.before:
                raise NexusError("config_changed", change.path,
                                 "it changed while nexus was preparing its edit",
                                 "run the command again")
        done: list[Change] = []
        backups: dict[str, str | None] = {}
        try:
            for change in todo:
                backups[change.path] = _write(change.target, change.before, change.after)
                done.append(change)
        except OSError as exc:
            for written in reversed(done):  # put back what was already written
                with contextlib.suppress(OSError):
                    _write(written.target, written.after, written.before, backup=False)
            failed = todo[len(done)]
            raise unwritable(failed.path, f"cannot write it: {exc.strerror or exc}") from None
    return [backups.get(c.path) for c in changes]


def _write(target: str, before: str | None, after: str | None, backup: bool = True) -> str | None:
    """Replace `target`'s content atomically; returns the backup made, if any."""
    folder = os.path.dirname(target) or "."
    saved = None
    if backup and before is not None:
        saved = target + ".nexus-backup"
        _atomic(saved, before, stat.S_IMODE(os.stat(target).st_mode))
    if after is None:
        if os.path.exists(target):
            os.unlink(target)
        return saved
    os.makedirs(folder, exist_ok=True)
    mode = stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target) else 0o600
    _atomic(target, after, mode)
    return saved


_atomic = atomic.write  # tests replace it to fail a write
