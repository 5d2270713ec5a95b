"""`nexus board --web`: the board as a page, tested in a real browser (Debian's Chromium, driven
by Playwright over the DevTools protocol; one browser for the module). The page lists the
sessions and redraws by itself when the store changes, draws the wait graph with its deadlock
in colour and in words, answers a permission request so the waiting run goes on, sends a
message and releases a reservation as the CLI would; every peer text stays text. Requests
without the token, with a wrong one, from a foreign Host or without the page's nonce are
refused. The screenshots are looked at (`NEXUS_BOARD_PNG=docs/board.png` writes the picture the
README and docs/insight.md show)."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from helpers import WORKER, A, B, claude_env, run_hook_in_thread, sid

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT = 30_000  # ms: an outer limit for what the page shows (it redraws within a second)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One Chromium for the module (a fresh profile of its own)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not os.access(CHROMIUM, os.X_OK):
        if os.environ.get("NEXUS_REQUIRE_BROWSER") == "1":
            pytest.fail("Chromium or Playwright is missing (scripts/test.sh installs both)")
        pytest.skip("Chromium or Playwright is missing (scripts/test.sh installs both)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=FLAGS, headless=True,
            viewport={"width": 1280, "height": 800})
        yield context
        context.close()


@pytest.fixture
def page(browser):
    tab = browser.new_page()
    tab.set_default_timeout(WAIT)
    yield tab
    tab.close()


@pytest.fixture
def web(terminal, chdir_work):
    """web(**options) -> a started Board (the person at a terminal, in the sessions' project)."""
    from nexus_cli.web.server import Board

    started = []

    def start(**kw):
        board = Board(**kw).start()
        started.append(board)
        return board

    yield start
    for board in started:
        board.stop()


def shot(page, tmp_path, name: str, width: int, height: int = 800) -> Path:
    """A screenshot of what a window of this size shows (and one of the whole page); the page
    must not be wider than the window."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(300)  # the graph redraws on resize
    assert page.evaluate("document.documentElement.scrollWidth") <= width, name
    out = tmp_path / f"{name}.png"
    page.screenshot(path=str(out))
    page.screenshot(path=str(tmp_path / f"{name}-whole.png"), full_page=True)
    return out


def get(board, path: str, host: str | None = None, **headers) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", board.port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", f"127.0.0.1:{board.port}" if host is None else host)
        for k, v in headers.items():
            conn.putheader(k.replace("_", "-"), v)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def post(board, action: str, body: object, **headers) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", board.port, timeout=30)
    try:
        data = json.dumps(body).encode()
        conn.request("POST", f"/action/{action}?token={board.token}", data,
                     {"Content-Type": "application/json", **{k.replace("_", "-"): v
                                                             for k, v in headers.items()}})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"{}")
    finally:
        conn.close()


def row(page, name: str):
    return page.locator("#sessions tbody tr", has=page.locator(".name", has_text=name))


# -- what the page shows, and its updates -------------------------------------------------------


def test_the_page_lists_the_sessions_and_redraws_when_a_message_arrives(
        nx, hook, web, page, tmp_path):
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    board = web()
    page.goto(board.url)
    page.locator("#live.on").wait_for()
    assert row(page, "claude@work").count() == 1 and row(page, "codex@work").count() == 1
    inbox = row(page, "claude@work").locator("td[data-label=inbox]")
    assert inbox.inner_text() == "0"
    page.evaluate("window.notReloaded = true")
    assert nx("send", "claude@work", "the build is green", env=B).code == 0
    page.wait_for_function(
        "() => [...document.querySelectorAll('#sessions tbody tr')].some(r => "
        "r.querySelector('.name').textContent === 'claude@work' && "
        "r.querySelector('td[data-label=inbox]').textContent === '1')")
    assert page.evaluate("window.notReloaded") is True  # drawn again, not loaded again
    page.locator("#activity li", has_text="the build is green").wait_for()
    assert "codex@work" in page.locator("#activity").inner_text()
    shot(page, tmp_path, "sessions-wide", 1280)


def test_the_deadlock_is_drawn_in_colour_and_in_words(nx, hook, web, page, tmp_path):
    for client, n in (("claude", 1), ("codex", 2), ("claude", 3)):
        hook(client, "SessionStart", sid(n), source="startup")
    assert nx("delegate", "codex", "review auth.py and tell me", env=A).code == 0
    assert nx("delegate", "claude@work", "first fix the tests I depend on", env=B).code == 0
    page.goto(web().url)
    alarm = page.locator("#alarm")
    alarm.wait_for()
    words = alarm.inner_text()
    assert "DEADLOCK" in words and "claude@work → codex@work" in words + words.replace(
        "codex@work → claude@work", "claude@work → codex@work")
    assert page.locator("#graph svg path.edge.dead:not(.head)").count() == 2
    assert page.locator("#graph svg g.node.dead").count() == 2
    assert page.locator("#graph svg g.node").count() == 3  # the third waits on nobody
    assert page.locator("#graph svg .dead-word").text_content().startswith("DEADLOCK")
    colour = page.evaluate("getComputedStyle(document.querySelector('g > path.edge.dead')).stroke")
    assert colour == "rgb(207, 34, 46)"  # red
    assert page.locator("#edges li.dead").count() == 2
    for width in (1280, 400):
        shot(page, tmp_path, f"deadlock-{width}", width)


def test_an_approval_answered_on_the_page_lets_the_run_go_on(nx, hook, web, page, routed,
                                                             tmp_path, monkeypatch):
    """The showcase: a deadlock, a reservation, mail and a waiting permission request; the
    screenshot taken here is docs/board.png, the README's and docs/insight.md's picture
    (NEXUS_BOARD_PNG names where to write it)."""
    monkeypatch.setenv("HOME", str(tmp_path))  # the project shows as ~/work
    hook("claude", "SessionStart", sid(3), source="startup")
    for n, client, said in ((1, "claude", "Split auth.py into session.py and tokens.py; asked "
                             "codex@work to review it."),
                            (2, "codex", "The review needs the failing tests fixed first."),
                            (3, "claude", "Listening for the next task.")):
        hook(client, "Stop", sid(n), last_assistant_message=said)
    assert nx("delegate", "codex", "review auth.py and tell me", env=A).code == 0
    assert nx("delegate", "claude@work", "first fix the tests I depend on", env=B).code == 0
    nx("listen", "on", env=claude_env(sid(3)))
    Path("src").mkdir()
    assert nx("reserve", "src/", "--reason", "refactoring the parser", env=B).code == 0
    nx("send", "codex", "the schema moved to db/schema.sql", env=A)
    thread, box = run_hook_in_thread("claude", "PermissionRequest", WORKER, env=routed,
                                     tool_name="Bash", tool_input={"command": "rm -rf build"},
                                     permission_mode="default")
    page.goto(web().url)
    card = page.locator("#approvals li.approval")
    card.wait_for()
    assert "rm -rf build" in card.inner_text() and "Bash" in card.inner_text()
    page.locator("#reservations li").wait_for()
    wide = shot(page, tmp_path, "board-1280", 1280)
    shot(page, tmp_path, "board-400", 400)
    wanted = os.environ.get("NEXUS_BOARD_PNG")
    if wanted:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.wait_for_timeout(300)
        page.screenshot(path=wanted, full_page=True)
    assert wide.stat().st_size > 10_000
    assert thread.is_alive()  # the run's client still waits
    card.get_by_role("button", name="Allow once").click()
    page.locator("#said", has_text="allowed once").wait_for()
    thread.join(30)
    reply, code, _ = box["reply"]
    assert code == 0 and reply["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    card.wait_for(state="detached")
    log = nx("events", "--action", "approval.answer", "--json").json["events"]
    assert log[0]["actor"].startswith("user:") and log[0]["detail"]["outcome"] == "allow-once"


def test_a_message_sent_and_a_reservation_released_from_the_page(nx, hook, web, page):
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    Path("src").mkdir()
    assert nx("reserve", "src/", "--reason", "left over", env=B).code == 0
    page.goto(web().url)
    page.locator("#send-to").select_option(f"claude:{sid(1)}")
    page.locator("#send-text").fill("please rebase on main")
    page.get_by_role("button", name="Send").click()
    page.locator("#said", has_text="sent to claude@work").wait_for()
    got = nx("read", "--json", env=A).json["messages"]
    assert [m["text"] for m in got] == ["please rebase on main"]
    assert got[0]["from"]["id"].startswith("user:")
    page.locator("#reservations li button.release").click()
    page.locator("#said", has_text="released src/").wait_for()
    assert nx("reservations", "--json").json["total"] == 0
    page.locator("#reservations-empty").wait_for()
    acted = nx("events", "--action", "security.act_as", "--json").json["events"]
    assert acted and acted[0]["target"] == f"codex:{sid(2)}"
    released = nx("events", "--action", "reservation.release", "--json").json["events"]
    assert released and released[0]["actor"] == f"codex:{sid(2)}"


def test_peer_text_with_markup_and_control_characters_stays_text(nx, hook, web, page):
    evil = ("<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>"
            "\x1b[2J\u202e\u200bdone")
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    hook("claude", "Stop", sid(1), last_assistant_message=evil)
    nx("send", "claude@work", evil, env=B)
    nx("rename", "claude@work", "<b>bold</b>\x07title")
    page.goto(web().url)
    answer = row(page, "claude@work").locator(".answer")
    answer.wait_for()
    page.locator("#activity li", has_text="<img").wait_for()
    text = answer.text_content()
    assert text.startswith('<img src=x onerror="window.pwned=1"><script>') and \
        "\\x1b[2J\\u202e\\u200bdone" in text
    assert page.evaluate("window.pwned") is None
    assert page.locator("main img, main script").count() == 0
    body = page.evaluate("document.body.innerText")
    assert not any(ch in body for ch in "\x1b\x07\u202e\u200b")
    assert "<b>bold</b>\\x07title" in row(page, "claude@work").locator(".title").text_content()


# -- who may see it, and what it refuses --------------------------------------------------------


def test_requests_without_the_token_or_from_elsewhere_are_refused(hook, web):
    hook("claude", "SessionStart", sid(1), source="startup")
    board = web()
    ok, headers, body = get(board, f"/?token={board.token}")
    assert ok == 200 and b"nexus board" in body
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert headers["Cache-Control"] == "no-store" and headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    for path in ("/", "/state", "/board.js", "/events", f"/?token={board.token[:-1]}x",
                 "/?token="):
        status, _, body = get(board, path)
        assert status == 403 and b"claude@work" not in body, path
    assert get(board, "/state", X_Nexus_Token=board.token)[0] == 200
    wrong = "x" * len(board.token)
    assert get(board, "/state", X_Nexus_Token=wrong)[0] == 403
    for host in (f"evil.example:{board.port}", "127.0.0.1", f"127.0.0.1:{board.port + 1}", ""):
        status, _, body = get(board, f"/state?token={board.token}", host=host)
        assert status == 403 and b"claude@work" not in body, host
    assert json.loads(get(board, f"/state?token={board.token}", host=f"localhost:{board.port}")
                      [2])["sessions"][0]["name"] == "claude@work"
    # a POST needs the nonce of a page this run served, and no foreign origin
    body = {"target": f"claude:{sid(1)}", "text": "hi"}
    assert post(board, "send", body)[0] == 403
    assert post(board, "send", body, X_Nexus_Nonce="forged")[0] == 403
    page = get(board, f"/?token={board.token}")[2].decode()
    nonce = page.split('name="nexus-nonce" content="')[1].split('"')[0]
    assert post(board, "send", body, X_Nexus_Nonce=nonce, Origin="http://evil.example")[0] == 403
    status, got = post(board, "send", {**body, "extra": 1}, X_Nexus_Nonce=nonce)
    assert status == 400 and got["error"]["code"] == "invalid_argument"
    status, got = post(board, "send", body, X_Nexus_Nonce=nonce,
                       Origin=f"http://127.0.0.1:{board.port}")
    assert status == 200 and got["ok"], got
    status, got = post(board, "approve", {"approval_id": "a-nosuch", "session": "x",
                                          "outcome": "allow-once"}, X_Nexus_Nonce=nonce)
    assert status == 404 and got["error"]["code"] == "approval_not_found"


def test_only_the_person_at_a_terminal_serves_the_board(hook, web, fake, monkeypatch):
    from nexus_cli.core import caller
    from nexus_cli.core.errors import NexusError

    hook("claude", "SessionStart", sid(1), source="startup")
    with fake.inside(fake.client_of(f"claude:{sid(1)}")), pytest.raises(NexusError) as got:
        web()
    assert got.value.code == "people_only"
    monkeypatch.setattr(caller, "at_terminal", lambda: False)  # a script, setsid, a pipe
    with pytest.raises(NexusError) as got:
        web()
    assert got.value.code == "people_only" and "interactive terminal" in got.value.reason


def test_the_feed_publishes_a_change_within_its_wake(nx, hook, web, monkeypatch, backend):
    """Without a browser, on both stores: a message wakes the feed (its wake channels, the
    look each second), not its ten-second refetch. In team mode each session's machine is
    shown."""
    from nexus_cli.core.proctable import machine
    from nexus_cli.web import feed

    monkeypatch.setattr(feed, "REFETCH_EVERY", 3600.0)
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    board = web()
    version, body = board.feed.latest()
    first = json.loads(body)
    assert first["team"] == (backend == "pg")
    assert {s["machine"] for s in first["sessions"]} == {machine()}
    nx("send", "claude@work", "ping", env=B)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        got = board.feed.next(version, 30)
        assert got is not None, "no new state after a message"
        version, body = got
        counts = {s["name"]: s["unread"] for s in json.loads(body)["sessions"]}
        if counts.get("claude@work") == 1:
            return
    raise AssertionError("the message never showed")


test_the_feed_publishes_a_change_within_its_wake = pytest.mark.parametrize(
    "backend", ["sqlite", "pg"], indirect=True)(test_the_feed_publishes_a_change_within_its_wake)


def test_a_change_between_a_look_and_its_channels_is_not_missed(hook, web, monkeypatch):
    """A message committed after the feed read the store but before it made the channels of
    the sessions it saw (a new session's, say) still shows: the change counter it waits on
    was read before the look."""
    from helpers import call
    from nexus_cli.web import feed

    monkeypatch.setattr(feed, "REFETCH_EVERY", 3600.0)
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    follow, sent = feed.Changes.follow, []

    def late(self, ids):
        if ids and not sent:  # the feed thread, between its look and the channels
            sent.append(call(None, "send", {"target": f"claude:{sid(1)}", "text": "gap"},
                             env=B))
        follow(self, ids)

    monkeypatch.setattr(feed.Changes, "follow", late)
    board = web()
    version, body = board.feed.latest()
    while (got := board.feed.next(version, 30)) is not None:
        version, body = got
        if {s["name"]: s["unread"] for s in json.loads(body)["sessions"]}["claude@work"] == 1:
            return
    raise AssertionError("the message sent in the gap never showed")


# -- the command ---------------------------------------------------------------------------------


def test_the_command_prints_its_address_serves_and_stops_at_ctrl_c(hook, chdir_work, home,
                                                                   tmp_path):
    """`nexus board --web --port 0 --open` at a real terminal: one line with the address, the
    browser asked to open it ($BROWSER) through a file only the person can read (issue 37: the
    address on the browser's command line let another user read its secret with `ps`, then
    act as the person on the page), the page served, and Ctrl-C ends it cleanly."""
    import fcntl
    import pty
    import signal
    import subprocess
    import termios

    from helpers import store_env

    opened = tmp_path / "opened"
    env = {"PATH": os.environ["PATH"], "NEXUS_HOME": str(home), **store_env(),
           "PYTHONPATH": os.pathsep.join(sys.path), "HOME": str(tmp_path), "TERM": "dumb",
           "PYTHONFAULTHANDLER": "1",
           "BROWSER": f"{shutil.which('sh')} -c 'echo \"$0\" > {opened}' %s"}
    main, child = pty.openpty()

    def controlling_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([sys.executable, "-m", "nexus_cli", "board", "--web", "--port", "0",
                             "--open"], env=env, stdin=child, stdout=child, stderr=child,
                            preexec_fn=controlling_terminal, cwd=chdir_work)
    os.close(child)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"(Ctrl-C stops it)" not in seen and time.monotonic() < deadline:
            try:
                seen += os.read(main, 4096)
            except OSError:
                break
        line = seen.decode().strip().splitlines()[0]
        assert line.startswith("nexus board: http://127.0.0.1:"), seen
        url = line.split()[2]
        port = int(url.split(":")[2].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", url.split(str(port), 1)[1])
        assert conn.getresponse().status == 200
        conn.close()
        for _ in range(600):
            if opened.exists() and opened.read_text().strip():
                break
            time.sleep(0.05)
        # the browser's command line (what `ps` shows every user) holds a file, not the secret
        handed = opened.read_text().strip()
        token = url.split("token=", 1)[1]
        assert handed.startswith("file:///") and token not in handed, handed
        redirect = Path(handed[len("file://"):])
        assert redirect.stat().st_uid == os.getuid() and redirect.stat().st_mode & 0o077 == 0
        assert f"url={url}" in redirect.read_text()  # which the browser follows to the page
        os.write(main, b"\x03")  # Ctrl-C at the terminal
        try:
            code = proc.wait(60)
        except subprocess.TimeoutExpired:  # (seen once under heavy load, not reproduced since)
            proc.send_signal(signal.SIGABRT)  # faulthandler: every thread's stack, on the pty
            code = proc.wait(30)
        while True:
            try:
                got = os.read(main, 4096)
            except OSError:
                break
            if not got:
                break
            seen += got
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        os.close(main)
    assert code == 0 and b"Traceback" not in seen and b"stopped" in seen, seen.decode(
        errors="replace")
    assert not redirect.exists()  # gone with the board
    with pytest.raises(OSError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=5).request("GET", "/")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # its own
def test_a_web_server_that_dies_by_itself_is_an_internal_error(terminal, chdir_work, home,
                                                               monkeypatch, capsys):
    """The server's loop fails (here: the standard library's per-loop hook raises): the command
    does not go on as if it served, nor exit 0; it says so and exits 70."""
    import socketserver

    from nexus_cli.cli import board

    def broken(self) -> None:
        raise RuntimeError("the loop broke")

    monkeypatch.setattr(socketserver.BaseServer, "service_actions", broken)
    with pytest.raises(SystemExit) as exited:
        board._web(0, False, False, False)
    err = capsys.readouterr().err
    assert exited.value.code == 70 and "internal_error" in err and "stopped by itself" in err, err


def test_the_options_go_together(nx):
    assert nx("board", "--port", "0").code == 2
    assert nx("board", "--web", "--once").code == 2


def test_every_file_the_page_needs_ships_in_the_package():
    import tomllib
    from fnmatch import fnmatch

    from nexus_cli.web import server

    conf = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    globs = conf["tool"]["setuptools"]["package-data"]["nexus_cli.web"]
    assert "nexus_cli.web" in conf["tool"]["setuptools"]["packages"]
    files = sorted(p.name for p in Path(server.PAGE).iterdir())
    assert files and all(any(fnmatch(f"page/{name}", g) for g in globs) for name in files)
    served = {"board.html", *(name for name, _ in server.FILES.values())}
    assert served == set(files)
    for name in files:  # nothing of the page points anywhere else
        text = (Path(server.PAGE) / name).read_text()
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and \
            "https://" not in text and "//cdn" not in text, name



def test_the_redirect_file_takes_a_real_browser_to_the_page(hook, web, page):
    board = web()
    import webbrowser

    real = webbrowser.open
    try:
        webbrowser.open = lambda url, *a, **k: True  # type: ignore[assignment]
        path = board.browse()
    finally:
        webbrowser.open = real  # type: ignore[assignment]
    page.goto("file://" + path)
    page.wait_for_url(f"http://127.0.0.1:{board.port}/**")
    page.get_by_text("nexus board").first.wait_for()
