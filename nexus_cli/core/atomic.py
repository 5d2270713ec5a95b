"""Writing a small file atomically: a temporary file in the same folder, flushed to disk, given
the target's mode, then renamed over it. A reader sees the old content or the new, never half.
Stdlib only."""

from __future__ import annotations

import contextlib
import os
import tempfile


def write(target: str, text: str, mode: int) -> None:
    folder = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(target) + ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
