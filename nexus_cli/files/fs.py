"""fs_read, fs_list, fs_stat and fs_write inside the caller's project (see jail). Stdlib only."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from ..core import sessions, settings
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope
from ..core.settings import FS_READ_BYTES, FS_READ_MAX, FS_WRITE_MAX
from ..reservations import edits
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
    """The caller's jail: an agent's project as registered at its start (no later hook event
    moves it), the person's where the person stands."""
    with ctx.read() as conn:
        me = ctx.me(conn)
        root = sessions.jail(sessions.get(conn, me.id), me)
    return [jail.usable_root(root)]


def _missing(path: str) -> NexusError:
    return NexusError("path_not_found", path, "path not found",
                      "list the parent folder with `nexus fs list`")


def read(ctx: Ctx, a: FsReadArgs) -> dict:
    allowed = roots(ctx)
    path = jail.check(a.path, allowed, ctx.store.root)
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise _missing(a.path) from None
    if stat.S_ISDIR(st.st_mode):
        raise jail.kind_error(a.path, st.st_mode)
    try:
        fd = jail.open_file(path, allowed, a.path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        raise _missing(a.path) from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        refused = jail.linked(a.path, st)
        if refused is not None:
            raise refused
        if st.st_size > FS_READ_MAX:
            raise NexusError("file_too_large", f"{size(st.st_size)}",
                             f"file too large: {a.path} is over {size(FS_READ_MAX)}",
                             "read it from your own shell in parts")
        text = fh.read(FS_READ_MAX + 1).decode("utf-8", "replace")
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
    allowed = roots(ctx)
    path = jail.check(a.path, allowed, ctx.store.root, write=True)
    if os.path.isdir(path):
        raise NexusError("path_kind", a.path, "is a directory", "write to a file path")
    with ctx.read() as conn:  # a file another session reserved is refused here as at the edit
        held = edits.held(conn, ctx.me(conn).id, [path], ctx.now)
    if held:
        raise NexusError("reservation_conflict", a.path, held[0],
                         "wait for its release (`nexus reserve PATH --wait S`) or pick other work")
    if a.mode == "overwrite":
        _overwrite(path, allowed, a.path, data)
        return _written(path, data, a.mode)
    flags = os.O_WRONLY | os.O_CREAT
    flags |= os.O_EXCL if a.mode == "create-new" else os.O_APPEND
    try:
        fd = jail.open_file(path, allowed, a.path, flags, 0o644, create_dirs=True)
    except FileExistsError:
        raise NexusError("file_exists", a.path, "file already exists",
                         "use mode overwrite or append, or a new path") from None
    with os.fdopen(fd, "wb") as fh:
        st = os.fstat(fh.fileno())
        refused = jail.linked(a.path, st)
        if refused is not None:
            raise refused
        if st.st_mode & 0o111:
            os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode) & ~0o111)
        fh.write(data)
    return _written(path, data, a.mode)


def _written(path: str, data: bytes, mode: str) -> dict:
    return {"ok": True, "path": path, "bytes_raw": len(data), "bytes": size(len(data)),
            "mode": mode, "next": f"check it with `nexus fs stat {path}`"}


def _overwrite(path: str, allowed: list[str], raw: str, data: bytes) -> None:
    """Through a temporary file in the same (walked, link-free) folder, renamed over the target:
    never over a file nexus cannot read, never executable (the old mode without its x bits)."""
    dfd, name = jail.parent(path, allowed, raw, create=True)
    try:
        try:
            old = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            raise jail.kind_error(raw, old.st_mode)
        if old is not None and not os.access(name, os.R_OK, dir_fd=dfd):
            raise NexusError("path_denied", raw, "the file cannot be read, so nexus will "
                             "not overwrite it", "choose another file")
        mode = (stat.S_IMODE(old.st_mode) if old is not None else 0o644) & 0o666
        tmp = f".{name}.{os.urandom(4).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                     dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
                os.fchmod(fh.fileno(), mode)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
    finally:
        os.close(dfd)
