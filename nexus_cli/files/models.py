"""Argument and result models of the file tools (never imported when a tool runs)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..core.models import Args, Epoch, Page, Result, Stamp

Path = Field(min_length=1, max_length=4096, description="Absolute path inside your project.")


class FsPathArgs(Args):
    path: str = Path


class FsReadArgs(Args):
    path: str = Path
    offset: int = Field(1, ge=1, description="First line (1-based).")
    limit: int = Field(400, ge=1, le=2000, description="Lines at most (content <= 48 KB).")


class FsReadResult(Result):
    path: str = Field(description="The real path read.")
    total_lines: int
    offset: int
    limit: int
    lines: int = Field(description="Lines in content.")
    truncated: bool
    content: str
    size_bytes: int
    size: str
    modified_at: str | None = Stamp("Last modified")
    modified_at_epoch: float | None = Epoch("Last modified")
    next: str | None = Field(description="The offset to continue from, when truncated.")


class FsListArgs(Args):
    path: str = Path
    depth: int = Field(1, ge=1, le=5, description="Levels to descend.")
    limit: int = Field(100, ge=1, le=100, description="Page size.")
    offset: int = Field(0, ge=0, description="Skip this many.")


class FsEntry(Result):
    name: str = Field(description="Relative to the listed folder.")
    type: Literal["dir", "file", "symlink", "other"]
    size_bytes: int
    size: str
    mtime: str | None = Stamp("Last modified")
    mtime_epoch: float | None = Epoch("Last modified")


class FsListResult(Page):
    path: str
    depth: int
    capped: bool = Field(description="True when 1,000 entries were gathered and more exist.")
    entries: list[FsEntry]


class FsStatResult(Result):
    exists: bool
    path: str
    size_bytes: int | None
    size: str | None
    mtime: str | None = Stamp("Last modified")
    mtime_epoch: float | None = Epoch("Last modified")
    is_dir: bool | None
    is_file: bool | None


class FsWriteArgs(Args):
    path: str = Path
    content: str = Field(max_length=4 * 1024 * 1024, description="UTF-8 text, <= 4 MB.")
    mode: Literal["overwrite", "append", "create-new"] = Field(
        "overwrite", description="create-new fails when the file exists.")


class FsWriteResult(Result):
    ok: bool
    path: str
    bytes_raw: int
    bytes: str
    mode: Literal["overwrite", "append", "create-new"]
    next: str
