"""A regular expression matched in a child process, so that a search can keep its time limit.

Python's `re` backtracks: a pattern like `(a+)+$` or `(a|aa)*b` can take hours on a line of
forty characters, and nothing inside the process running it can stop it from another thread
(the MCP server runs tools in threads). So the texts go, in batches, to a small child Python
that compiles the pattern once and answers the span of the first hit in each; when an answer
does not come by the deadline the child is killed, the batch counts as cut short, and the next
batch starts a new child. Stdlib only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from ..core.store import wake

BATCH = 256  # texts per batch
BATCH_CHARS = 1 << 20  # characters per batch
START_TIMEOUT = 15.0  # seconds a new child may take to be ready (a loaded machine)

CHILD = r"""
import json, re, sys
read, write = sys.stdin.buffer, sys.stdout.buffer
pattern = re.compile(json.loads(read.readline()), re.IGNORECASE)
write.write(b"ready\n")
write.flush()
for line in read:
    out = []
    for text in json.loads(line):
        m = pattern.search(text)
        out.append(None if m is None else [m.start(), m.end()])
    write.write(json.dumps(out).encode() + b"\n")
    write.flush()
"""


class WorkerFailed(Exception):
    """The child could not be started or stopped answering for another reason than time."""


class Worker:
    """The child process matching one pattern; `match` gives the spans of a batch of texts, or
    None when the deadline came first (the child is then killed; the next call starts another).
    `overall` bounds every wait, the start of a child included."""

    def __init__(self, pattern: str, overall: float = float("inf")) -> None:
        self.pattern = pattern
        self.overall = overall
        self.proc: subprocess.Popen[bytes] | None = None
        self.buf = b""

    def _start(self) -> bool:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", CHILD], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
        self.buf = b""
        self._send(json.dumps(self.pattern).encode() + b"\n")
        return self._line(min(self.overall, time.monotonic() + START_TIMEOUT)) == b"ready"

    def _send(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _line(self, deadline: float) -> bytes | None:
        """The child's next line, or None when the deadline came first."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready = wake.ready([fd], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise WorkerFailed("the matching process ended")
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def match(self, texts: list[str], deadline: float) -> list[list[int] | None] | None:
        deadline = min(deadline, self.overall)
        try:
            if self.proc is None and not self._start():
                self.close()
                return None
            self._send(json.dumps(texts).encode() + b"\n")
            line = self._line(deadline)
        except (OSError, ValueError, WorkerFailed):
            self.close()
            raise WorkerFailed("the matching process failed") from None
        if line is None:
            self.close()
            return None
        spans = json.loads(line)
        assert isinstance(spans, list) and len(spans) == len(texts)
        return spans

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        proc.kill()
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        proc.wait()
