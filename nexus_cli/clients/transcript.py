"""What both clients' transcript readers share: one normalised event shape, a streaming line
reader (lines of any size, a last line still being written is left for later, never called
malformed), and the reading strategies built on them (whole file, from an offset, from the end).

A reader turns the lines of one transcript into events, in file order (clients do not write in
time order), each a dict:

    seq         0-based position in the transcript's event stream (counted from the end as -1,
                -2, ... when only the end was read; see `tail`)
    type        user/message, assistant/message, tool/call, tool/result, turn/end, turn/start,
                usage (one per model response: a step), compaction, system, error
    time_epoch  when the client wrote it (seconds), or None
    offset      byte offset of the line it came from: the full record is there
    and where they apply: text, tool, args, call_id, is_error, model, usage (input, output,
    cache_read, cache_write, reasoning: input counts every prompt token, cached ones too),
    turn_id, subtype, duration_ms, ttft_ms, llm_ms, aborted, error

Reasoning and thinking are stripped (counted in `counts["reasoning"]`); record types a reader
does not know are skipped and counted (`unknown`), a line that is not a JSON object is counted
(`malformed`), a line longer than `MAX_LINE` is not read at all (memory stays bounded whatever
the file holds): it is counted (`oversize`) and stands as a `system` event of subtype
`oversize_line` saying where it is. Neither ever fails a read. Only regular files are read
(`open_regular`): a FIFO or a device named like a transcript would block a read forever.
Each client's reader lives in its adapter
(`clients/<name>/transcript.py`): formats change between client versions. Stdlib only."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from datetime import datetime

TYPES = ("user/message", "assistant/message", "tool/call", "tool/result", "turn/end",
         "turn/start", "usage", "compaction", "system", "error")
DIALOG = ("user/message", "assistant/message")
TOOLS = ("tool/call", "tool/result")
DEFAULT_TYPES = (*DIALOG, *TOOLS)
CHUNK = 1 << 20
TAIL_WINDOW = 1 << 18  # the first look from the end: 256 KB, then four times more each time
MAX_LINE = 16 << 20  # a longer line is skipped unread (what one line may cost in memory)
LONG_PREFIX = 320  # bytes kept of a skipped line (its record type is often among them)


def open_regular(path: str):  # type: ignore[no-untyped-def]
    """`path` opened for reading in binary, only if it is a regular file: anything else (a FIFO
    or a device named like a transcript, a directory) raises OSError, which every caller counts
    as an unreadable transcript. Opened non-blocking so that opening a FIFO never waits for a
    writer, checked with fstat (no race with a rename), then made blocking again."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class Long(bytes):
    """A line over `MAX_LINE` bytes that was not read: its value is its first `LONG_PREFIX`
    bytes, its len() the line's real length (offsets stay right)."""

    size = 0

    def __new__(cls, prefix: bytes, size: int) -> Long:
        self = super().__new__(cls, prefix)
        self.size = size
        return self

    def __len__(self) -> int:
        return self.size


def epoch(ts: object) -> float | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def text_of(content: object) -> str:
    """The text of a content value: a string, or a list of blocks (text, content) joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") in ("image", "input_image", "document"):
                    parts.append(f"[{block.get('type')}]")
                    continue
                parts.append(text_of(block.get("text", block.get("content", ""))))
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(p for p in parts if p)
    return ""


class Reader:
    """The normaliser of one client's transcript: `feed` each complete line with its offset,
    `finish` at the end of what was read. Its `state()` lets an index resume where it stopped."""

    client = ""
    # (line prefix marker, ...): a long line whose first bytes carry one is skipped undecoded
    SKIP_LONG: tuple[bytes, ...] = ()

    def __init__(self) -> None:
        self.seq = 0
        self.counts = {"unknown": 0, "malformed": 0, "reasoning": 0, "oversize": 0}
        self.meta: dict = {"cwd": None, "version": None, "model": None, "session": None,
                           "first_prompt": None, "started_epoch": None, "last_epoch": None}

    # -- what a client's reader implements --------------------------------------------------

    def record(self, r: dict, offset: int) -> list[dict]:
        raise NotImplementedError

    def finish(self) -> list[dict]:
        return []

    def _state(self) -> dict:
        return {}

    def _restore(self, state: dict) -> None:
        pass

    # -- shared ----------------------------------------------------------------------------------

    def feed(self, line: bytes, offset: int) -> list[dict]:
        if isinstance(line, Long):
            if any(m in bytes(line) for m in self.SKIP_LONG):
                return []
            self.counts["oversize"] += 1
            out: list[dict] = []
            self.emit(out, "system", None, offset, subtype="oversize_line",
                      text=f"a line of {len(line):,} bytes was not read (longer than "
                      f"{MAX_LINE:,} bytes); the whole record is at offset {offset}")
            return out
        if len(line) > 8192 and any(m in line[:320] for m in self.SKIP_LONG):
            return []
        try:
            r = json.loads(line)
        except (ValueError, RecursionError):
            self.counts["malformed"] += 1
            return []
        if not isinstance(r, dict) or not isinstance(r.get("type"), str):
            self.counts["malformed"] += 1
            return []
        try:
            return self.record(r, offset)
        except (AttributeError, TypeError, ValueError, KeyError):
            self.counts["malformed"] += 1  # a field of an unexpected shape: the line is skipped
            return []

    def emit(self, out: list[dict], type_: str, at: float | None, offset: int,
             **kw: object) -> dict:
        ev: dict = {"seq": self.seq, "type": type_, "time_epoch": at, "offset": offset}
        ev.update((k, v) for k, v in kw.items() if v is not None)
        self.seq += 1
        out.append(ev)
        if at is not None:
            if self.meta["started_epoch"] is None:
                self.meta["started_epoch"] = at
            if self.meta["last_epoch"] is None or at > self.meta["last_epoch"]:
                self.meta["last_epoch"] = at
        if type_ == "user/message" and self.meta["first_prompt"] is None and kw.get("text"):
            self.meta["first_prompt"] = str(kw["text"])[:500]
        return ev

    def state(self) -> dict:
        return {"seq": self.seq, "counts": self.counts, "meta": self.meta, "own": self._state()}

    def restore(self, state: dict) -> None:
        self.seq = state.get("seq", 0)
        self.counts.update(state.get("counts") or {})
        self.meta.update(state.get("meta") or {})
        self._restore(state.get("own") or {})


# -- lines --------------------------------------------------------------------------------------


def lines(fh, start: int = 0, end: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(offset, line) for each complete line from `start` (a line start) up to `end`. A last line
    with no newline yet is yielded only if it is a whole JSON value (a client still writing it
    will finish it: it is not malformed, and is read next time). A line over `MAX_LINE` bytes is
    yielded as a `Long` (its first bytes), read past in chunks, never held whole."""
    fh.seek(start)
    offset = start
    while end is None or offset < end:
        line = fh.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            prefix, size = line[:LONG_PREFIX], len(line)
            del line
            while True:
                part = fh.readline(CHUNK)
                if not part:
                    return  # no end yet: still being written, read next time
                size += len(part)
                if part.endswith(b"\n"):
                    break
            yield offset, Long(prefix, size)
            offset += size
            continue
        if not line.endswith(b"\n"):
            try:
                json.loads(line)
            except ValueError:
                return
        yield offset, line
        offset += len(line)


def complete_end(fh, size: int) -> int:
    """The offset just past the last newline (what a resumable read may consume)."""
    pos = size
    while pos > 0:
        step = min(CHUNK, pos)
        fh.seek(pos - step)
        block = fh.read(step)
        i = block.rfind(b"\n")
        if i >= 0:
            return pos - step + i + 1
        pos -= step
    return 0


def line_start_after(fh, pos: int) -> int:
    """The first line start at or after `pos`."""
    if pos <= 0:
        return 0
    fh.seek(pos - 1)
    while True:
        block = fh.read(65536)
        if not block:
            return fh.tell()
        i = block.find(b"\n")
        if i >= 0:
            return fh.tell() - len(block) + i + 1


# -- reading strategies ---------------------------------------------------------------------------


def read_all(path: str, reader: Reader, start: int = 0, end: int | None = None,
             state: dict | None = None) -> Iterator[dict]:
    """Every event of a transcript (from `start`, resuming `state`), streamed."""
    if state:
        reader.restore(state)
    with open_regular(path) as fh:
        for offset, line in lines(fh, start, end):
            yield from reader.feed(line, offset)
    yield from reader.finish()


def tail(path: str, make: Callable[[], Reader], want: Callable[[dict], bool], n: int,
         size: int | None = None) -> tuple[list[dict], int, int, Reader]:
    """The last `n` events `want` keeps, read from the end of the file without parsing it whole:
    a window of 256 KB, widened fourfold while it holds fewer than n + 1 of them (so the oldest
    shown one is known not to be the first). Returns (events, matched in the window, window
    start, the reader). Memory: the window's events kept are at most n."""
    size = os.path.getsize(path) if size is None else size
    window = TAIL_WINDOW
    with open_regular(path) as fh:
        while True:
            start = line_start_after(fh, size - window) if window < size else 0
            reader = make()
            kept: deque[dict] = deque(maxlen=max(n, 1))
            matched = 0
            for offset, line in lines(fh, start):
                for ev in reader.feed(line, offset):
                    if want(ev):
                        matched += 1
                        kept.append(ev)
            for ev in reader.finish():
                if want(ev):
                    matched += 1
                    kept.append(ev)
            if matched > n or start == 0:
                return list(kept)[-n:] if n else [], matched, start, reader
            window *= 4


def head(path: str, make: Callable[[], Reader], want: Callable[[dict], bool],
         n: int) -> list[dict]:
    """The first `n` events `want` keeps, reading forward only as far as needed."""
    if n <= 0:
        return []
    reader = make()
    out: list[dict] = []
    with open_regular(path) as fh:
        for offset, line in lines(fh, 0):
            for ev in reader.feed(line, offset):
                if want(ev):
                    out.append(ev)
                    if len(out) >= n:
                        return out
    return out


def sniff(path: str, make: Callable[[], Reader], limit: int = 1 << 20) -> dict:
    """The session's metadata (cwd, first prompt, start) from the beginning of its transcript,
    reading at most `limit` bytes."""
    reader = make()
    with open_regular(path) as fh:
        for offset, line in lines(fh, 0):
            reader.feed(line, offset)
            m = reader.meta
            if (m["cwd"] and m["first_prompt"]) or offset + len(line) > limit:
                break
    return reader.meta
