"""A scriptable fake model for the real clients, stdlib only, on 127.0.0.1.

Serves the Anthropic Messages API (`POST /v1/messages`, SSE: Claude Code) and the OpenAI
Responses API (`POST /v1/responses`, SSE: Codex). The script is a JSON file re-read at every
request: `{"<run tag>": [STEP, ...]}`. A request belongs to the run whose tag `[run:<tag>]` appears
in its latest tagged user message; each request that offers tools takes that run's next step:

    {"shell": "command"}               the client's shell tool (Bash / exec_command)
    {"tool": "mcp__x__y", "input": {}} that tool (Codex: namespace mcp__x, function y; a name
                                       without `__` is a plain function, e.g. exec_command)
    {"patch": "*** Begin Patch..."}    Codex only: its freeform apply_patch tool (a custom tool
                                       call; Codex offers the tool only for models whose metadata
                                       has it, e.g. gpt-5.5, not gpt-5)
    {"text": "..."}                    a final answer

A run whose steps are used up answers "done"; requests without tools (titles, summaries) get
"OK". A Codex command still running when its shell tool yields (after 10 s) is waited for as a
model waits for it, polling its session (`write_stdin`) until it ends, before the next step.
Every request is appended to the log as one JSON line `{"run", "path", "body"}`, so a test can ask
what reached the model.

Usage: fake_model.py SCRIPT LOG PORTFILE   (binds an ephemeral port and writes it to PORTFILE)
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT, LOG, PORTFILE = sys.argv[1:4]
TAG = re.compile(r"\[run:([A-Za-z0-9_-]+)\]")
NONCE = uuid.uuid4().hex[:10]  # tool-use ids stay unique across fake restarts
counter = itertools.count(1)
lock = threading.Lock()
cursor: dict[str, int] = {}


def new_id(prefix: str) -> str:
    return f"{prefix}_{NONCE}{next(counter):05d}"


def texts(value: object) -> str:
    """All text inside a message content value (string or blocks)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(texts(v.get("text") or v.get("content") or "") if isinstance(v, dict)
                        else texts(v) for v in value)
    return ""


def run_of(body: dict) -> str:
    """The tag of the latest user message that carries one (a resumed run brings a new tag)."""
    items = body.get("messages") or body.get("input") or []
    for item in reversed(items) if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("role") == "user":
            found = TAG.search(texts(item.get("content")))
            if found:
                return found.group(1)
    return ""


RUNNING = re.compile(r"Process running with session ID (\d+)")


def still_running(body: dict) -> int | None:
    """The session of a Codex command that the latest tool output says is still running."""
    items = body.get("input") or []
    last = items[-1] if isinstance(items, list) and items else None
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        found = RUNNING.search(str(last.get("output")))
        return int(found.group(1)) if found else None
    return None


def next_step(run: str) -> dict:
    with lock:
        with open(SCRIPT) as fh:
            steps = json.load(fh).get(run, [])
        i = cursor.get(run, 0)
        cursor[run] = i + 1
    return steps[i] if i < len(steps) else {"text": "done"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, code: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str, dict]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:
        if "/models" in self.path:
            return self._json(200, {"object": "list", "data": []})
        self._json(404, {"error": {"message": f"fake model: no {self.path}"}})

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(size) or b"{}")
        path = self.path.split("?")[0]
        run = run_of(body)
        session = still_running(body) if path.endswith("/responses") else None
        if session is not None:  # wait for it (up to 30 s a poll), taking no step
            step = {"tool": "write_stdin", "input": {"session_id": session, "chars": "",
                                                     "yield_time_ms": 30000}}
        else:
            step = next_step(run) if body.get("tools") and run else {"text": "OK"}
        with lock, open(LOG, "a") as fh:
            fh.write(json.dumps({"t": time.time(), "run": run, "path": path, "step": step,
                                 "body": body}) + "\n")
        if path.endswith("/count_tokens"):
            return self._json(200, {"input_tokens": 10})
        if path.endswith("/v1/messages"):
            return self._anthropic(body, step)
        if path.endswith("/responses"):
            return self._openai(body, step)
        self._json(404, {"error": {"message": f"fake model: no {path}"}})

    def _anthropic(self, body: dict, step: dict) -> None:
        if "shell" in step:
            step = {"tool": "Bash", "input": {"command": step["shell"], "description": "scripted"}}
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        events = [("message_start", {"type": "message_start", "message": {
            "id": new_id("msg"), "type": "message", "role": "assistant", "content": [],
            "model": body.get("model", "fake"), "stop_reason": None, "stop_sequence": None,
            "usage": usage}})]
        if "tool" in step:
            block = {"type": "tool_use", "id": new_id("toolu"), "name": step["tool"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step["input"])}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step["text"]}
            stop = "end_turn"
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 5},
                               "delta": {"stop_reason": stop, "stop_sequence": None}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._sse(events)

    def _openai(self, body: dict, step: dict) -> None:
        if "shell" in step:
            item = {"type": "function_call", "id": new_id("fc"), "call_id": new_id("call"),
                    # wait for the command to end: past Codex's default 10 s it would go on in the
                    # background and die with the turn (a nested client under load takes longer)
                    "name": "exec_command", "arguments": json.dumps({"cmd": step["shell"],
                                                                     "yield_time_ms": 120_000}),
                    "status": "completed"}
        elif "patch" in step:  # Codex's freeform apply_patch tool: a custom tool call
            item = {"type": "custom_tool_call", "id": new_id("ctc"), "call_id": new_id("call"),
                    "name": "apply_patch", "input": step["patch"], "status": "completed"}
        elif "tool" in step:
            namespace, _, name = step["tool"].rpartition("__")
            item = {"type": "function_call", "id": new_id("fc"), "call_id": new_id("call"),
                    "namespace": namespace, "name": name, "status": "completed",
                    "arguments": json.dumps(step["input"])}
            if not namespace:  # a plain function tool (`exec_command` with its own arguments)
                del item["namespace"]
        else:
            item = {"type": "message", "id": new_id("msg"), "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step["text"], "annotations": []}]}
        response = {"id": new_id("resp"), "object": "response", "created_at": int(time.time()),
                    "status": "completed", "model": body.get("model", "fake"), "output": [item],
                    "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                              "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens_details": {"reasoning_tokens": 0}}}
        events = [
            ("response.created", {"type": "response.created",
                                  "response": {**response, "status": "in_progress", "output": []}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": {**item, "status": "in_progress"}}),
        ]
        if item["type"] == "message":
            events.append(("response.output_text.delta", {
                "type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                "item_id": item["id"], "delta": step["text"]}))
        events += [
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                           "item": item}),
            ("response.completed", {"type": "response.completed", "response": response}),
        ]
        self._sse(events)


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = PORTFILE + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(str(server.server_address[1]))
    os.replace(tmp, PORTFILE)
    parent = os.getppid()

    def watchdog() -> None:  # never outlive the test that started us
        deadline = time.time() + float(os.environ.get("FAKE_MAX_SECONDS", "900"))
        while os.getppid() == parent and time.time() < deadline:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
