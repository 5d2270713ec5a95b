"""Codex's transcripts (rollouts, 0.171.0): where they are and how to read them. Stdlib only.

- `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl` (CODEX_HOME defaults
  to `~/.codex`). The date folders and the time in the name are in the local time zone, so a
  rollout is found by its id with a glob, never rebuilt from a timestamp. A resume appends.
- Every line is `{"timestamp", "ordinal", "type", "payload"}`. `session_meta` (first) holds the
  id and cwd, `turn_context` the model, `response_item`s the conversation, `token_usage_record`
  one model response's usage (input includes the cached tokens), `event_msg` `task_complete` /
  `turn_aborted` the end of a turn (a Stop-hook continuation stays inside the turn), and
  `item_completed` whether a tool call failed.
- The compaction summariser's answer is an assistant message with `metadata.compaction_output`:
  it is a compaction, not the model speaking.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Mapping

from ..transcript import Reader, epoch, text_of
from .runtime import is_id

NAME_RE = re.compile(r"rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                     r"\.jsonl\Z")
KNOWN = frozenset({"world_state", "turn_context", "session_meta", "compacted", "response_item",
                   "event_msg", "token_usage_record"})
CALLS = ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call",
         "web_search_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output",
           "tool_search_call_output")
HARNESS_TAGS = ("<environment_context>", "<user_instructions>", "<turn_aborted>", "<hook_prompt",
                "<user_shell_command>", "<subagent_notification>")


def home(env: Mapping[str, str]) -> str:
    return env.get("CODEX_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"),
                                                 ".codex")


def _patterns(env: Mapping[str, str], raw: str) -> list[str]:
    top = glob.escape(home(env))
    return [os.path.join(top, "sessions", "*", "*", "*", f"rollout-*-{raw}.jsonl"),
            os.path.join(top, "archived_sessions", f"rollout-*-{raw}.jsonl")]


def find(raw_id: str, env: Mapping[str, str], cwd: str | None = None) -> str | None:
    if not is_id(raw_id):
        return None
    for pattern in _patterns(env, raw_id):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def discover(env: Mapping[str, str]) -> list[tuple[str, str]]:
    out = []
    for pattern in _patterns(env, "*"):
        for path in glob.glob(pattern):
            m = NAME_RE.search(os.path.basename(path))
            if m:
                out.append((m.group(1), path))
    return out


class CodexReader(Reader):
    client = "codex"
    SKIP_LONG = (b'"type":"world_state"', b'"payload":{"type":"token_count"')

    def __init__(self) -> None:
        super().__init__()
        self.status: dict[str, bool] = {}  # call id -> whether it failed (item_completed)
        self.last_input: float | None = None  # the latest model input: prompt, tool output

    def _state(self) -> dict:
        return {"status": self.status, "last_input": self.last_input}

    def _restore(self, state: dict) -> None:
        self.status = state.get("status") or {}
        self.last_input = state.get("last_input")

    def record(self, r: dict, offset: int) -> list[dict]:
        out: list[dict] = []
        t, at, p = r["type"], epoch(r.get("timestamp")), r.get("payload")
        if t not in KNOWN:
            self.counts["unknown"] += 1
            return out
        if not isinstance(p, dict):
            self.counts["malformed"] += 1
            return out
        pt = p.get("type")
        if t == "session_meta":
            self.meta["cwd"] = p.get("cwd") or self.meta["cwd"]
            self.meta["version"] = p.get("cli_version") or self.meta["version"]
            self.meta["session"] = p.get("id") or self.meta["session"]
        elif t == "turn_context":
            self.meta["model"] = p.get("model") or self.meta["model"]
            if isinstance(p.get("cwd"), str):
                self.meta["cwd"] = p["cwd"]
        elif t == "compacted":
            self.emit(out, "compaction", at, offset, text=p.get("message"), subtype="compacted")
        elif t == "token_usage_record":
            u = p.get("usage") or {}
            self.emit(out, "usage", at, offset, model=self.meta["model"], turn_id=p.get("turn_id"),
                      usage={"input": int(u.get("input_tokens") or 0),
                             "output": int(u.get("output_tokens") or 0),
                             "cache_read": int(u.get("cached_input_tokens") or 0),
                             "cache_write": int(u.get("cache_write_input_tokens") or 0),
                             "reasoning": int(u.get("reasoning_output_tokens") or 0)},
                      llm_ms=round((at - self.last_input) * 1000)
                      if at is not None and self.last_input is not None else None)
        elif t == "response_item":
            self._item(r, p, pt, at, offset, out)
        elif t == "event_msg":
            self._event(p, pt, at, offset, out)
        return out

    def _item(self, r: dict, p: dict, pt: object, at: float | None, offset: int,
              out: list[dict]) -> None:
        meta = p.get("internal_chat_message_metadata_passthrough") or {}
        turn = meta.get("turn_id")
        if pt == "message":
            role, text = p.get("role"), text_of(p.get("content"))
            prov = [(x.get("provenance") or {}).get("type")
                    for x in meta.get("content_item_metadata") or [] if isinstance(x, dict)]
            if role == "assistant":
                if (r.get("metadata") or {}).get("compaction_output") or \
                        (p.get("metadata") or {}).get("compaction_output"):
                    self.emit(out, "compaction", at, offset, subtype="summary", text=text)
                else:
                    self.emit(out, "assistant/message", at, offset, text=text,
                              model=self.meta["model"], turn_id=turn)
                return
            if role == "user" and (all(x == "user" for x in prov) if prov
                                   else not text.lstrip().startswith(HARNESS_TAGS)):
                self.emit(out, "user/message", at, offset, text=text, turn_id=turn)
            else:
                kinds = meta.get("content_item_kinds") or [role or "message"]
                self.emit(out, "system", at, offset, subtype=",".join(map(str, kinds)), text=text)
            self.last_input = at
        elif pt == "reasoning":
            self.counts["reasoning"] += 1
        elif pt in CALLS:
            name = p.get("name") or pt
            if p.get("namespace"):
                name = f"{p['namespace']}__{name}"
            if pt == "function_call":
                raw = p.get("arguments") or "{}"
                try:
                    args = json.loads(raw) if isinstance(raw, str) else raw
                except ValueError:
                    args = {"_raw": raw}
            else:
                args = {"input": p.get("input")} if "input" in p else p.get("action")
            self.emit(out, "tool/call", at, offset, tool=name, args=args, call_id=p.get("call_id"),
                      turn_id=turn)
        elif pt in OUTPUTS:
            cid, output = p.get("call_id"), p.get("output")
            text = output if isinstance(output, str) else text_of(output) \
                if isinstance(output, list) else json.dumps(output)
            failed = self.status.pop(cid, None) if isinstance(cid, str) else None
            if failed is not None:
                err = failed
            elif pt == "custom_tool_call_output":  # apply_patch: no item_completed when refused
                err = not text.startswith("Exit code: 0")
            else:  # an interrupt: its item_completed is written after the output
                err = "\naborted by user" in text
            self.emit(out, "tool/result", at, offset, call_id=cid, text=text, is_error=err,
                      turn_id=turn)
            self.last_input = at
        else:
            self.counts["unknown"] += 1

    def _event(self, p: dict, pt: object, at: float | None, offset: int, out: list[dict]) -> None:
        if pt == "item_completed":
            item = p.get("item") or {}
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                result = item.get("result")
                self.status[item["id"]] = item.get("status") == "failed" or (
                    isinstance(result, dict) and result.get("isError") is True)
                if len(self.status) > 64:
                    self.status.pop(next(iter(self.status)))
        elif pt in ("task_complete", "turn_aborted"):
            err = p.get("error")
            self.emit(out, "turn/end", at, offset, turn_id=p.get("turn_id"),
                      duration_ms=p.get("duration_ms"), ttft_ms=p.get("time_to_first_token_ms"),
                      error=(err.get("message") if isinstance(err, dict) else str(err))
                      if err else None,
                      aborted=p.get("reason") if pt == "turn_aborted" else None)
        elif pt == "task_started":
            trigger = (p.get("turn_attribution") or {}).get("turn_trigger")
            self.emit(out, "turn/start", at, offset, turn_id=p.get("turn_id"), subtype=trigger)


def reader() -> CodexReader:
    return CodexReader()
