"""Editing a client's config file safely: refuse what does not parse, keep every unrelated byte,
write atomically with a backup, under a portalocker lock, and show the change as a diff."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from ..core.errors import NexusError
from ..core.store import paths


def config_error(path: str, reason: str, action: str) -> NexusError:
    return NexusError("config_invalid", path, reason, action)


def read_text(path: str) -> str | None:
    """The file's text, None when it does not exist; a clear error when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise config_error(path, "not UTF-8 text", "fix or move the file, then retry") from None
    except OSError as exc:
        raise NexusError("config_unwritable", path, f"cannot read it: {exc.strerror}",
                         "check its permissions") from None


def load_json(path: str, text: str | None) -> dict:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise config_error(path, f"not valid JSON ({exc})",
                           "fix the file by hand; nexus never rewrites a file it cannot read") from None
    if not isinstance(data, dict):
        raise config_error(path, "the top level is not a JSON object",
                           "fix the file by hand; nexus never rewrites a file it cannot read")
    return data


def dump_json(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def finish(text: str | None, old: dict, new: dict) -> str | None:
    """The new text of a JSON config: unchanged when nothing changed, None (remove the file) when
    nothing is left."""
    if new == old:
        return text
    return dump_json(new) if new else None


@dataclass
class Change:
    path: str
    before: str | None
    after: str | None  # None: remove the file (it held only what nexus had added)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            (self.before or "").splitlines(keepends=True), (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
            tofile=f"{self.path} (after)" if self.after is not None else "/dev/null"))


def plan(path: str, edit: Callable[[str | None], str | None]) -> Change:
    before = read_text(path)
    return Change(path, before, edit(before))


def apply(change: Change) -> str | None:
    """Write the change atomically (backup first). Returns the backup path, if one was made."""
    if not change.changed:
        return None
    import portalocker

    lock_dir = os.path.join(paths.home(), "locks")
    paths.ensure_private_dir(paths.home())
    paths.ensure_private_dir(lock_dir)
    lock_path = os.path.join(lock_dir, "config-" + change.path.replace(os.sep, "_") + ".lock")
    try:
        with portalocker.Lock(lock_path, timeout=30):
            current = read_text(change.path)
            if current != change.before:
                raise NexusError("config_changed", change.path,
                                 "it changed while nexus was preparing its edit",
                                 "run the command again")
            return _write(change)
    except portalocker.exceptions.LockException:
        raise NexusError("config_unwritable", change.path, "another nexus install holds its lock",
                         "wait for it to finish and retry") from None


def _write(change: Change) -> str | None:
    folder = os.path.dirname(change.path) or "."
    backup = None
    try:
        if change.before is not None:
            backup = change.path + ".nexus-backup"
            shutil.copy2(change.path, backup)
        if change.after is None:
            os.unlink(change.path)
            return backup
        os.makedirs(folder, exist_ok=True)
        mode = stat.S_IMODE(os.stat(change.path).st_mode) if change.before is not None else 0o600
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(change.path) + ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(change.after)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, change.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise NexusError("config_unwritable", change.path,
                         f"cannot write it: {exc.strerror or exc}; nothing was changed",
                         "make the file and its directory writable, or use --dry-run to see the edit")
    return backup
