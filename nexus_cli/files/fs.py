"""fs_read, fs_list, fs_stat and fs_write inside the caller's project (see jail). Stdlib only."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from ..core import settings
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope
from ..core.settings import FS_READ_BYTES, FS_READ_MAX, FS_WRITE_MAX
from . import jail

if TYPE_CHECKING:
    from .models import FsListArgs, FsPathArgs, FsReadArgs, FsWriteArgs

LIST_COLLECT = 1000  # entries gathered before paging


def size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def roots(ctx: Ctx) -> list[str]:
    with ctx.read() as conn:
        me = ctx.me(conn)
    return [me.project]


def _missing(path: str) -> NexusError:
    return NexusError("path_not_found", path, "path not found",
                      "list the parent folder with `nexus fs list`")


def read(ctx: Ctx, a: FsReadArgs) -> dict:
    path = jail.check(a.path, roots(ctx), ctx.store.root)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise _missing(a.path) from None
    if stat.S_ISDIR(st.st_mode):
        raise NexusError("path_kind", a.path, "is a directory, use fs_list",
                         "list it with `nexus fs list`, or add a file name")
    if st.st_size > FS_READ_MAX:
        raise NexusError("file_too_large", f"{size(st.st_size)}",
                         f"file too large: {a.path} is over {size(FS_READ_MAX)}",
                         "read it from your own shell in parts")
    with open(path, "rb") as fh:
        text = fh.read().decode("utf-8", "replace")
    lines = text.splitlines(keepends=True)
    first = a.offset - 1
    chosen: list[str] = []
    used = 0
    for line in lines[first: first + a.limit]:
        if used + len(line.encode("utf-8")) > FS_READ_BYTES and chosen:
            break
        chosen.append(line)
        used += len(line.encode("utf-8"))
    end = first + len(chosen)
    truncated = end < len(lines)
    return {"path": path, "total_lines": len(lines), "offset": a.offset, "limit": a.limit,
            "lines": len(chosen), "truncated": truncated, "content": "".join(chosen),
            "size_bytes": st.st_size, "size": size(st.st_size), "modified_at_epoch": st.st_mtime,
            "next": f"--offset {end + 1}" if truncated else None}


def _entry(path: str, name: str) -> dict:
    st = os.lstat(path)
    kind = ("symlink" if stat.S_ISLNK(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode)
            else "file" if stat.S_ISREG(st.st_mode) else "other")
    return {"name": name, "type": kind, "size_bytes": st.st_size, "size": size(st.st_size),
            "mtime_epoch": st.st_mtime}


def listing(ctx: Ctx, a: FsListArgs) -> dict:
    path = jail.check(a.path, roots(ctx), ctx.store.root)
    if not os.path.exists(path):
        raise _missing(a.path)
    if not os.path.isdir(path):
        raise NexusError("path_kind", a.path, "not a directory", "read it with `nexus fs read`")
    found: list[dict] = []
    store = os.path.realpath(ctx.store.root)

    def walk(folder: str, prefix: str, depth: int) -> None:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names:
            if len(found) >= LIST_COLLECT:
                return
            full = os.path.join(folder, name)
            if jail.sensitive(name) or jail.inside(os.path.realpath(full), store):
                continue
            try:
                entry = _entry(full, prefix + name)
            except OSError:
                continue
            found.append(entry)
            if entry["type"] == "dir" and depth > 1:
                walk(full, prefix + name + "/", depth - 1)

    walk(path, "", a.depth)
    page = found[a.offset: a.offset + a.limit]
    out = envelope(page, len(found), a.offset, a.limit, key="entries", path=path, depth=a.depth)
    out["capped"] = len(found) >= LIST_COLLECT
    return out


def stat_(ctx: Ctx, a: FsPathArgs) -> dict:
    path = jail.check(a.path, roots(ctx), ctx.store.root)
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return {"exists": False, "path": path, "size_bytes": None, "size": None,
                "mtime_epoch": None, "is_dir": None, "is_file": None}
    return {"exists": True, "path": path, "size_bytes": st.st_size, "size": size(st.st_size),
            "mtime_epoch": st.st_mtime, "is_dir": stat.S_ISDIR(st.st_mode),
            "is_file": stat.S_ISREG(st.st_mode)}


def write(ctx: Ctx, a: FsWriteArgs) -> dict:
    if not settings.load(ctx.store.root)["fsWrite"]:
        raise NexusError("fs_write_disabled", "fs_write", "writing files through nexus is off",
                         "the person turns it on: `nexus config set fsWrite 1`")
    data = a.content.encode("utf-8")
    if len(data) > FS_WRITE_MAX:
        raise NexusError("file_too_large", size(len(data)), f"content too large: over "
                         f"{size(FS_WRITE_MAX)}", "split it into several mode=append writes")
    path = jail.check(a.path, roots(ctx), ctx.store.root)
    parent = os.path.dirname(path)
    missing = []
    while not os.path.exists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for folder in reversed(missing):
        os.mkdir(folder, 0o755)
        jail.check(folder, roots(ctx), ctx.store.root)  # nothing raced a link in between
    if os.path.isdir(path):
        raise NexusError("path_kind", a.path, "is a directory", "write to a file path")
    flags = os.O_WRONLY | os.O_NOFOLLOW
    if a.mode == "create-new":
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)  # atomic: no race
        except FileExistsError:
            raise NexusError("file_exists", a.path, "file already exists",
                             "use mode overwrite or append, or a new path") from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    elif a.mode == "append":
        fd = os.open(path, flags | os.O_CREAT | os.O_APPEND, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    else:
        from ..core import atomic

        mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o644
        if os.path.exists(path) and not os.access(path, os.R_OK):
            raise NexusError("path_denied", a.path, "the file cannot be read, so nexus will "
                             "not overwrite it", "choose another file")
        atomic.write(path, a.content, mode)
    return {"ok": True, "path": path, "bytes_raw": len(data), "bytes": size(len(data)),
            "mode": a.mode, "next": f"check it with `nexus fs stat {path}`"}
