"""A full disk and a read-only file system, for real (a tmpfs in a private mount namespace):
clear errors, nothing half-written, nothing lost, reads still work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable

import pytest

from standin import client_wrapper

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None
    or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0,
    reason="needs root and unshare -m (a private mount namespace) to mount a small tmpfs")

# two sessions on the small disk: A (this script runs below a stand-in claude, A's client) and B
# (its commands run below a codex)
SESSIONS = textwrap.dedent("""
    mkdir -m 700 "$NEXUS_HOME"
    A=aaaaaaaa-0000-4000-8000-000000000001
    B=bbbbbbbb-0000-4000-8000-000000000002
    hook() {
        printf '{"hook_event_name": "SessionStart", "session_id": "%s", "cwd": "%s"}\\n' \\
            "$2" "$MNT" | ${3:-} $PY -m nexus_cli hook $1 > /dev/null
    }
    hook claude $A && hook codex $B "$CODEX"
    export CLAUDE_CODE_SESSION_ID=$A
    # B's commands, each in a codex of its own (a stand-in runs one command) whose first event
    # resumes B there, as `codex resume` does: a client takes a session over only that way
    as_b() {
        printf '{"hook_event_name": "SessionStart", "session_id": "%s", "cwd": "%s", %s}\\n' \\
            "$B" "$MNT" '"source": "resume"' > "$OUT/resume-b.json"
        CODEX_SESSION_ID=$B CLAUDE_CODE_SESSION_ID= "$CODEX" sh -c '"$0" -m nexus_cli hook codex \\
            < "$1" > /dev/null 2>&1; shift; exec "$0" -m nexus_cli "$@"' "$PY" \\
            "$OUT/resume-b.json" "$@"
    }
""")


def script(text: str) -> str:
    return textwrap.dedent(text).replace("@SESSIONS@\n", SESSIONS)


SCRIPT = script("""
    set -u
    mount -t tmpfs -o size=800k tmpfs "$MNT"
    @SESSIONS@
    $PY -m nexus_cli send codex:$B "before the disk filled" --json > "$OUT/first.json"
    dd if=/dev/zero of="$MNT/filler" bs=4k count=1000 2>/dev/null
    big=$(head -c 20000 /dev/zero | tr '\\0' x)
    $PY -m nexus_cli send codex:$B "$big" > /dev/null 2> "$OUT/full.err"; echo $? > "$OUT/full.rc"
    $PY -m nexus_cli delegate codex:$B "$big" \\
        > /dev/null 2> "$OUT/full2.err"; echo $? > "$OUT/full2.rc"
    rm "$MNT/filler"
    cp "$NEXUS_HOME/nexus.db" "$OUT/before-ro.db"
    mount -o remount,ro "$MNT"
    $PY -m nexus_cli send codex:$B "on read-only media" \\
        > /dev/null 2> "$OUT/ro.err"; echo $? > "$OUT/ro.rc"
    $PY -m nexus_cli peers --json --include-offline \\
        > "$OUT/peers.json" 2> "$OUT/peers.err"; echo $? > "$OUT/peers.rc"
    printf '{"hook_event_name": "Stop", "session_id": "%s", "cwd": "/"}\\n' $A \\
        | $PY -m nexus_cli hook claude > /dev/null 2> "$OUT/hook.err"; echo $? > "$OUT/hook.rc"
    cmp -s "$NEXUS_HOME/nexus.db" "$OUT/before-ro.db"; echo $? > "$OUT/same.rc"
    mount -o remount,rw "$MNT"
    as_b read --json > "$OUT/read.json"
    integrity="import sqlite3,sys; print(sqlite3.connect(sys.argv[1])"
    integrity="$integrity.execute('pragma integrity_check').fetchone()[0])"
    $PY -c "$integrity" "$NEXUS_HOME/nexus.db" > "$OUT/integrity"
""")


def on_a_small_disk(tmp_path, script: str, timeout: float) -> Callable[[str], str]:
    """Run a shell script below a stand-in Claude Code in its own mount namespace (where it
    mounts its small disk at $MNT); returns a reader of the files it left in $OUT."""
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    env = {**os.environ, "MNT": str(mnt), "OUT": str(out), "NEXUS_HOME": str(mnt / "nexus"),
           "PY": sys.executable, "PYTHONPATH": os.pathsep.join(sys.path),
           "CODEX": client_wrapper(str(tmp_path), "codex")}
    claude = client_wrapper(str(tmp_path), "claude")
    done = subprocess.run(["unshare", "-m", claude, "bash", "-c", script], env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return lambda name: (out / name).read_text().strip()


@pytest.mark.realprocs
def test_full_and_read_only_disks(tmp_path):
    r = on_a_small_disk(tmp_path, SCRIPT, timeout=300)
    assert r("full.rc") == "6" and "store_full" in r("full.err")
    assert "Traceback" not in r("full.err")
    assert r("full2.rc") == "6" and "store_full" in r("full2.err")
    assert r("ro.rc") == "6" and "store_readonly" in r("ro.err")
    assert r("peers.rc") == "0", r("peers.err")  # reading still works on read-only media
    assert ({p["id"] for p in json.loads(r("peers.json"))["items"]}
            >= {"claude:aaaaaaaa-0000-4000-8000-000000000001"}), (r("peers.json"), r("peers.err"))
    assert r("hook.rc") == "1" and "store_readonly" in r("hook.err")  # non-blocking for the client
    assert r("same.rc") == "0"  # not a byte changed
    got = json.loads(r("read.json"))["messages"]
    # nothing lost, nothing half-written
    assert [m["text"] for m in got] == ["before the disk filled"]
    assert r("integrity") == "ok"


FILL = script("""
    set -u
    mount -t tmpfs -o size=2m tmpfs "$MNT"
    @SESSIONS@
    free=$(df --output=avail -k "$MNT" | tail -1)
    # room for a few dozen messages (each send is a command's process: more cost seconds)
    dd if=/dev/zero of="$MNT/filler" bs=1k count=$((free - 60)) 2>/dev/null
    body=$(head -c 3000 /dev/zero | tr '\\0' x)
    : > "$OUT/acked"
    for i in $(seq 1 400); do
        if $PY -m nexus_cli send codex:$B "$i $body" --json \\
                > "$OUT/one.json" 2> "$OUT/refused.err"; then
            $PY -c "import json,sys; print(json.load(open(sys.argv[1]))['message_id'])" \\
                "$OUT/one.json" >> "$OUT/acked"
        else
            echo $? > "$OUT/refused.rc"; break
        fi
    done
    rm "$MNT/filler"
    as_b read --count 50 --json > "$OUT/read1.json" 2> "$OUT/read1.err"
    echo $? > "$OUT/read1.rc"
    n=1  # read on until a read finds nothing more
    while grep -q '"message_id"' "$OUT/read$n.json" && [ $n -lt 20 ]; do
        n=$((n + 1))
        as_b read --count 50 --json > "$OUT/read$n.json" 2>> "$OUT/read1.err"
    done
    echo $n > "$OUT/reads"
    $PY -m nexus_cli send codex:$B "after the disk freed up" --json \\
        > "$OUT/after.json" 2> "$OUT/after.err"; echo $? > "$OUT/after.rc"
""")


# (not marked realprocs: what it checks is the store's; the test above runs the same hooks and
# commands through the `ps` process table too)
def test_a_full_disk_loses_nothing_acknowledged_and_the_store_recovers_by_itself(tmp_path):
    """Fill the disk, send until refused, free the space: every message acknowledged before is
    read, and the store takes new ones, with no command in between."""
    r = on_a_small_disk(tmp_path, FILL, timeout=600)
    acked = r("acked").split()
    assert acked and r("refused.rc") == "6", (len(acked), r("refused.err"))
    assert "store_full" in r("refused.err") and "Traceback" not in r("refused.err")
    assert "move" not in r("refused.err")  # no advice that would drop the store
    assert r("read1.rc") == "0", r("read1.err")
    seen = [m["message_id"] for n in range(1, int(r("reads")) + 1)
            for m in json.loads(r(f"read{n}.json"))["messages"]]
    assert set(acked) <= set(seen)
    assert r("after.rc") == "0", r("after.err")


READ_FULL = script("""
    set -u
    mount -t tmpfs -o size=1m tmpfs "$MNT"
    @SESSIONS@
    # a reader that keeps its snapshot (a long listing, a waiter's look): the WAL cannot start
    # over, so the read's COMMIT must grow it, and that is what the full disk refuses
    $PY -c "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.execute('BEGIN')
    c.execute('SELECT count(*) FROM sessions').fetchone(); open(sys.argv[2], 'w').close()
    time.sleep(300)" "$NEXUS_HOME/nexus.db" "$OUT/holding" &
    holder=$!
    while [ ! -e "$OUT/holding" ]; do sleep 0.05; done
    for i in 1 2 3; do as_b send claude:$A "message $i" > /dev/null; done
    dd if=/dev/zero of="$MNT/filler" bs=1k 2>/dev/null  # until the disk is full
    $PY -m nexus_cli read --json > "$OUT/full.json" 2> "$OUT/full.err"  # A, below its claude
    echo $? > "$OUT/full.rc"
    kill $holder
    rm "$MNT/filler"
    $PY -m nexus_cli read --json > "$OUT/after.json" 2> "$OUT/after.err"
    echo $? > "$OUT/after.rc"
""")


@pytest.mark.realprocs
def test_a_read_on_a_full_disk_prints_nothing_it_did_not_consume(tmp_path):
    """`read --json` on a full disk: its COMMIT fails (store_full, exit 6), and then nothing was
    printed but the error (one JSON document), and every message is still unread; printed
    messages would have been read."""
    r = on_a_small_disk(tmp_path, READ_FULL, timeout=300)
    assert r("full.rc") == "6" and "store_full" in r("full.err"), r("full.err")
    document = json.loads(r("full.json"))  # exactly one document: the error
    assert document["error"]["code"] == "store_full" and "messages" not in document
    assert r("after.rc") == "0", r("after.err")
    assert [m["text"] for m in json.loads(r("after.json"))["messages"]] == \
        ["message 1", "message 2", "message 3"]
