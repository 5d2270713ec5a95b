"""Claude Code's transcripts (2.1.332): where they are and how to read them. Stdlib only.

- `~/.claude/projects/<slug>/<session id>.jsonl` (`$CLAUDE_CONFIG_DIR/projects` when set); the
  slug is the cwd with every character that is not an ASCII letter or digit replaced by `-`,
  cut at 200 characters plus `-` and a base-36 hash of the cwd when longer. Distinct cwds can
  share a slug: the cwd is read from the records, never from the slug. A resume appends to the
  same file; subagents write their own files under `<slug>/<session id>/subagents/`.
- One JSON object per line. Conversation rows (`user`, `assistant`, `attachment`, `system`)
  carry `cwd`, `sessionId`, `version`, `timestamp`; rows are not in time order (an assistant
  message's blocks are flushed together when it completes): file order is the order.
- An assistant message is one row per content block, each repeating `message.id` and `usage`:
  usage counts once per message. `input_tokens` excludes the cache: the prompt is input + cache
  read + cache write.
- No explicit end of a turn in `-p` runs: a message whose `stop_reason` is not `tool_use` ends
  it unless a Stop hook continues the turn (a `rowSource: hook` user row or a
  `hook_blocking_error`); `system/stop_hook_summary`, `system/turn_duration` (interactive only),
  the next prompt or the end of the file confirm it.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping

from ..transcript import Reader, epoch, text_of
from .runtime import is_id

STOP_OK = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal", "pause_turn"})
# record types that carry nothing to show (api-request is read for timing)
KNOWN = frozenset({"api-request", "api-request-shape", "api-request-blob", "cost-state",
                   "last-prompt", "tools-used", "mode", "permission-mode", "atis-latch",
                   "queue-operation", "file-history-snapshot", "summary"})


def root(env: Mapping[str, str]) -> str:
    base = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or
                                                        os.path.expanduser("~"), ".claude")
    return os.path.join(base, "projects")


def _java_hash(text: str) -> int:
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def slug(cwd: str) -> str:
    s = re.sub(r"[^A-Za-z0-9]", "-", cwd)
    if len(s) > 200:
        s = s[:200] + "-" + _base36(abs(_java_hash(cwd)))
    return s


def find(raw_id: str, env: Mapping[str, str], cwd: str | None = None) -> str | None:
    """The transcript of a session id: beside its cwd's slug when known, else anywhere."""
    if not is_id(raw_id):
        return None
    top = root(env)
    if cwd:
        path = os.path.join(top, slug(cwd), raw_id + ".jsonl")
        if os.path.isfile(path):
            return path
    found = sorted(glob.glob(os.path.join(glob.escape(top), "*", raw_id + ".jsonl")))
    return found[0] if found else None


def discover(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """(session id, path) of every main transcript (subagents' files are parts of another)."""
    out = []
    for path in glob.glob(os.path.join(glob.escape(root(env)), "*", "*.jsonl")):
        raw = os.path.basename(path)[:-6]
        if is_id(raw):
            out.append((raw, path))
    return out


class ClaudeReader(Reader):
    client = "claude"
    SKIP_LONG = (b'"type":"api-request-shape"', b'"type":"api-request-blob"',
                 b'"attachment":{"type":"prompt_snapshot"', b'"type":"cost-state"',
                 b'"attachment":{"type":"skill_listing"', b'"type":"file-history-snapshot"')

    def __init__(self) -> None:
        super().__init__()
        self.requests: dict[str, float] = {}  # api-request id -> its time (the recent ones)
        self.msg: dict | None = None  # the assistant message being read
        self.pending: dict | None = None  # a turn end waiting for confirmation

    def _state(self) -> dict:
        return {"requests": self.requests, "msg": self.msg, "pending": self.pending}

    def _restore(self, state: dict) -> None:
        self.requests = state.get("requests") or {}
        self.msg = state.get("msg")
        self.pending = state.get("pending")

    def _close_message(self, out: list[dict]) -> None:
        m, self.msg = self.msg, None
        if not m or m.get("error"):
            return
        start = m.get("start")
        self.emit(out, "usage", m["last"], m["offset"], model=m.get("model"), usage=m["usage"],
                  llm_ms=round((m["last"] - start) * 1000) if start and m["last"] else None,
                  ttft_ms=round((m["first"] - start) * 1000) if start and m["first"] else None)

    def _flush(self, out: list[dict], cancel: bool = False, duration: object = None) -> None:
        p, self.pending = self.pending, None
        if p and not cancel:
            self.emit(out, "turn/end", p["at"], p["offset"], error=p.get("error"),
                      duration_ms=duration if isinstance(duration, int | float) else None)

    def finish(self) -> list[dict]:
        out: list[dict] = []
        self._close_message(out)
        self._flush(out)
        return out

    def record(self, r: dict, offset: int) -> list[dict]:
        out: list[dict] = []
        t = r["type"]
        at = epoch(r.get("timestamp"))
        if isinstance(r.get("cwd"), str):
            self.meta["cwd"] = r["cwd"]
        if isinstance(r.get("version"), str):
            self.meta["version"] = r["version"]
        if isinstance(r.get("sessionId"), str) and not self.meta["session"]:
            self.meta["session"] = r["sessionId"]
        if t == "assistant":
            self._assistant(r, at, offset, out)
            return out
        self._close_message(out)
        if self.pending and self.pending.get("confirmed") and not (
                t == "system" and r.get("subtype") == "turn_duration"):
            self._flush(out)  # confirmed by a Stop summary; no duration follows
        if t == "user":
            self._user(r, at, offset, out)
        elif t == "attachment":
            self._attachment(r, at, offset, out)
        elif t == "system":
            self._system(r, at, offset, out)
        elif t == "api-request":
            if isinstance(r.get("id"), str) and at is not None:
                self.requests[r["id"]] = at
                if len(self.requests) > 32:
                    self.requests.pop(next(iter(self.requests)))
        elif t == "queue-operation":
            if self.pending:
                self._flush(out)
        elif t not in KNOWN:
            self.counts["unknown"] += 1
        return out

    def _assistant(self, r: dict, at: float | None, offset: int, out: list[dict]) -> None:
        m = r.get("message") or {}
        mid = m.get("id")
        if self.msg and self.msg.get("id") != mid:
            self._close_message(out)
        if self.pending and self.pending.get("msg") != mid:
            self._flush(out)
        model = m.get("model") if m.get("model") != "<synthetic>" else None
        if model:
            self.meta["model"] = model
        if r.get("isApiErrorMessage"):
            self.emit(out, "error", at, offset, text=text_of(m.get("content")),
                      subtype=str(r.get("apiErrorStatus") or r.get("error") or "api"))
            self.pending = {"at": at, "offset": offset, "msg": mid, "error": "api error"}
            return
        if self.msg is None:
            u = m.get("usage") or {}
            read = int(u.get("cache_read_input_tokens") or 0)
            write = int(u.get("cache_creation_input_tokens") or 0)
            self.msg = {"id": mid, "model": model, "offset": offset, "first": at, "last": at,
                        "start": self.requests.get(r.get("requestRef") or ""),
                        "usage": {"input": int(u.get("input_tokens") or 0) + read + write,
                                  "output": int(u.get("output_tokens") or 0),
                                  "cache_read": read, "cache_write": write,
                                  "reasoning": int((u.get("output_tokens_details") or {})
                                                   .get("thinking_tokens") or 0)}}
        elif at is not None:
            self.msg["last"] = max(at, self.msg["last"] or at)
        for b in m.get("content") or []:
            if not isinstance(b, dict):
                continue
            bt = b.get("type")
            if bt == "text":
                self.emit(out, "assistant/message", at, offset, text=b.get("text") or "",
                          model=model)
            elif bt in ("thinking", "redacted_thinking"):
                self.counts["reasoning"] += 1
            elif bt in ("tool_use", "server_tool_use"):
                self.emit(out, "tool/call", at, offset, tool=b.get("name"), args=b.get("input"),
                          call_id=b.get("id"))
            else:
                self.counts["unknown"] += 1
        if m.get("stop_reason") in STOP_OK:
            self.pending = {"at": at, "offset": offset, "msg": mid}

    def _user(self, r: dict, at: float | None, offset: int, out: list[dict]) -> None:
        m = r.get("message") or {}
        c = m.get("content")
        if r.get("isCompactSummary"):
            self._flush(out)
            self.emit(out, "compaction", at, offset, text=text_of(c), subtype="summary")
            return
        if r.get("rowSource") == "hook" or r.get("hookText"):
            self._flush(out, cancel=True)  # a Stop hook continued the turn
            self.emit(out, "system", at, offset, subtype="hook_feedback", text=text_of(c))
            return
        if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                       for b in c):
            for b in c:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    self.emit(out, "tool/result", at, offset, call_id=b.get("tool_use_id"),
                              text=text_of(b.get("content")), is_error=bool(b.get("is_error")))
            return
        self._flush(out)
        text = text_of(c)
        if r.get("isMeta") or text.lstrip().startswith(("<command-name>", "<local-command-",
                                                        "<command-message>")):
            self.emit(out, "system", at, offset, subtype="command", text=text)
            return
        self.emit(out, "user/message", at, offset, text=text, turn_id=r.get("promptId"))

    def _attachment(self, r: dict, at: float | None, offset: int, out: list[dict]) -> None:
        a = r.get("attachment") or {}
        at_type = a.get("type")
        if at_type == "hook_blocking_error":
            self._flush(out, cancel=True)
            err = a.get("blockingError")
            text = err.get("blockingError") if isinstance(err, dict) else err
            self.emit(out, "system", at, offset, subtype=at_type, text=text_of(text),
                      tool=a.get("hookName"))
        elif at_type == "hook_additional_context":
            self.emit(out, "system", at, offset, subtype=at_type, text=text_of(a.get("content")),
                      tool=a.get("hookName"))
        elif at_type == "queued_command":
            self._flush(out)
            self.emit(out, "user/message", at, offset, text=text_of(a.get("prompt")),
                      subtype="queued")
        elif at_type == "model":
            ident = a.get("identity") or {}
            if isinstance(ident, dict) and ident.get("modelId"):
                self.meta["model"] = ident["modelId"]

    def _system(self, r: dict, at: float | None, offset: int, out: list[dict]) -> None:
        st = r.get("subtype")
        if st == "turn_duration":
            self._flush(out, duration=r.get("durationMs"))
        elif st == "compact_boundary":
            self._flush(out)
            meta = r.get("compactMetadata") or {}
            self.emit(out, "compaction", at, offset, subtype=str(meta.get("trigger") or "compact"),
                      text=text_of(r.get("content")))
        elif st == "stop_hook_summary":
            if self.pending and not (r.get("hookErrors") or r.get("preventedContinuation")):
                self.pending["confirmed"] = True  # the interactive client adds its duration next
        else:
            self.emit(out, "system", at, offset, subtype=str(st or "system"),
                      text=text_of(r.get("content")))


def reader() -> ClaudeReader:
    return ClaudeReader()
