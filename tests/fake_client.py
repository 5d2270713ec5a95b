"""A stand-in for `claude -p --output-format stream-json` and `codex exec --json` in unit tests:
it prints the events the real clients print (their shapes as observed), and can sleep, start a
child, or fail. Installed as `claude`/`codex` scripts in a temporary PATH folder.

FAKE_SLEEP=seconds (before the answer), FAKE_CHILD=1 (start a long `sleep` child first),
FAKE_EXIT=code, FAKE_TEXT=the answer, FAKE_STARTED=a file to create at start (the bench),
FAKE_HOLD=a file to wait for before the answer (a test's barrier)."""

import json
import os
import subprocess
import sys
import time
import uuid

if os.environ.get("FAKE_STARTED"):
    with open(os.environ["FAKE_STARTED"], "w") as fh:
        fh.write(repr(time.time()))
    if os.environ.get("FAKE_QUIT"):
        sys.exit(0)
name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
text = os.environ.get("FAKE_TEXT", "I wrote notes.md")
with open(os.environ.get("FAKE_ARGV_LOG", os.devnull), "a") as log:
    log.write(json.dumps({"argv": args, "run": os.environ.get("NEXUS_RUN"),
                          "stdin": "" if sys.stdin is None or sys.stdin.isatty()
                          else sys.stdin.read(),
                          "claude_sid": os.environ.get("CLAUDE_CODE_SESSION_ID")}) + "\n")


def hold():
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    while os.environ.get("FAKE_HOLD") and not os.path.exists(os.environ["FAKE_HOLD"]):
        time.sleep(0.01)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if os.environ.get("FAKE_CHILD"):
    subprocess.Popen(["sleep", "300"])
if name == "claude":
    sid = args[args.index("--session-id") + 1] if "--session-id" in args else \
        args[args.index("--resume") + 1] if "--resume" in args else str(uuid.uuid4())
    emit({"type": "system", "subtype": "init", "session_id": sid, "cwd": os.getcwd()})
    hold()
    emit({"type": "assistant", "session_id": sid, "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Write",
         "input": {"file_path": "notes.md", "content": "x" * 5000}}]}})
    emit({"type": "user", "session_id": sid, "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": False}]}})
    emit({"type": "assistant", "session_id": sid, "message": {"content": [
        {"type": "text", "text": text}]}})
    emit({"type": "result", "subtype": "success", "is_error": False, "result": text,
          "session_id": sid, "num_turns": 2, "duration_ms": 10, "duration_api_ms": 5,
          "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 30,
                    "cache_creation_input_tokens": 0}})
else:
    thread = args[args.index("resume") + 1] if "resume" in args else str(uuid.uuid4())
    emit({"type": "thread.started", "thread_id": thread})
    emit({"type": "turn.started"})
    hold()
    emit({"type": "item.started", "item": {"id": "i1", "type": "command_execution",
                                           "command": "ls", "status": "in_progress"}})
    emit({"type": "item.completed", "item": {"id": "i1", "type": "command_execution",
                                             "command": "ls", "aggregated_output": "a\n",
                                             "exit_code": 0}})
    emit({"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": text}})
    emit({"type": "turn.completed", "usage": {"input_tokens": 7, "cached_input_tokens": 1,
                                              "output_tokens": 3}})
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
