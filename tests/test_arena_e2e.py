"""The hosted arena end to end: a real ``gin arena serve`` on loopback, authors made with the
command line, uploads by ``gin bot submit --arena`` and by a raw HTTP client, the ladder playing
them in the sandbox, the checks between authors, the escaping of what a bot's manifest says, and
the pages in a real headless Chromium (screenshots kept in ``tests/artifacts/arena/``).

One server serves the whole module (its tests run in order and build on each other's uploads).
The browser tests skip, saying why, only when Chromium is not installed.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tarfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import chromium as chromium_module
from tests.chromium import Chromium, find_chromium, launch
from tests.test_arena_server import GIN, ROOT, SERVING, arena_home

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).parent / "artifacts" / "arena"
CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (as root, `make browser-deps` runs apt-get install chromium)",
)
MARKUP_DESCRIPTION = (
    "<script>document.title = 'pwned'; window.pwned = 1;</script>"
    '<b id="xss">bold</b><img src=x onerror="window.pwned = 2">'
)
MARKUP_AUTHOR = '<i id="xss-author">Mallory</i><script>window.pwned = 3;</script>'
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
ADA_BOT = "ada-greedy@1.0.0"
BOB_BOT = "bob-random@1.0.0"


# --- the site ------------------------------------------------------------------------------------


@dataclass
class Site:
    """The running server and what the tests need of it."""

    url: str
    home: Path
    env: dict[str, str]
    tokens: dict[str, str]
    process: subprocess.Popen[str]
    log: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def request(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request: its status, headers (lowercase names) and body."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        try:
            connection.request(method, path, body=body, headers=sent)
            answer = connection.getresponse()
            data = answer.read()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, data
        finally:
            connection.close()

    def json(self, method: str, path: str, token: str | None = None) -> tuple[int, Any]:
        status, _, data = self.request(method, path, token)
        return status, json.loads(data)

    def page(self, path: str) -> str:
        status, _, data = self.request("GET", path)
        assert status == 200, (path, status, data[:300])
        return data.decode()

    def board(self) -> dict[str, dict[str, Any]]:
        """The leaderboard's rows by bot."""
        status, board = self.json("GET", "/api/leaderboard")
        assert status == 200, board
        return {row["ident"]: row for row in board["bots"]}

    def gin(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The ``gin`` command line on this home."""
        return subprocess.run(
            [*GIN, *args],
            check=False,
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: float = 1.0) -> Any:
    """Poll ``check`` until it gives something true; that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _start(home: Path, env: dict[str, str], log: Path) -> tuple[subprocess.Popen[str], str]:
    with log.open("w") as errors:
        process = subprocess.Popen(
            [*GIN, "arena", "serve", "--port", "0", "-j", "2", "--move-time", "200ms"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,  # a file: a chatty server never blocks on a full pipe
            text=True,
            start_new_session=True,
        )
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if ready:
            found = SERVING.search(process.stdout.readline())
            if found:
                return process, found.group(1)
    _end(process)
    raise AssertionError(f"the server did not start: {log.read_text()[-3000:]}")


def _end(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)
    if process.stdout is not None:
        process.stdout.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A home with the house bots greedy and random entered, two authors made with ``gin arena
    author add``, and a server on it."""
    root = tmp_path_factory.mktemp("arena-e2e")
    arena = arena_home(root)
    env = {**os.environ, "GIN_HOME": str(arena.home), "COLUMNS": "200"}
    env.pop("GIN_ARENA_TOKEN", None)
    tokens = {}
    for name in ("ada", "bob"):
        made = subprocess.run(
            [*GIN, "arena", "author", "add", name],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        token = made.stdout.strip()
        assert re.fullmatch(r"gin_[A-Za-z0-9_-]{43}", token), made.stdout
        assert token not in made.stderr
        tokens[name] = token
    log = root / "server.log"
    process, url = _start(arena.home, env, log)
    yield Site(url, arena.home, env, tokens, process, log)
    _end(process)


def bot_folder(root: Path, sample: str, name: str, **fields: str) -> Path:
    """A copy of ``sample_bots/SAMPLE`` whose bot.toml names it ``name`` (and sets ``fields``:
    JSON's string escapes are TOML's)."""
    folder = root / name
    shutil.copytree(
        ROOT / "sample_bots" / sample, folder, ignore=shutil.ignore_patterns("__pycache__")
    )
    manifest = folder / "bot.toml"
    lines = [
        line
        for line in manifest.read_text(encoding="utf-8").splitlines()
        if line.split("=")[0].strip() not in {"name", *fields}
    ]
    lines.insert(0, f'name = "{name}"')
    lines += [f"{key} = {json.dumps(value)}" for key, value in fields.items()]
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def tar_of(folder: Path) -> bytes:
    """``tar czf x.tgz -C folder .``, made with tarfile."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def upload(site: Site, token: str, folder: Path) -> tuple[int, dict[str, Any]]:
    status, _, data = site.request(
        "POST",
        "/api/bots",
        token,
        tar_of(folder),
        {"Content-Type": "application/gzip"},
    )
    answer: dict[str, Any] = json.loads(data)
    return status, answer


def verdict(site: Site, token: str, url: str, timeout: float = 120) -> dict[str, Any]:
    """Poll a submission until it is accepted or rejected."""

    def done() -> dict[str, Any] | None:
        status, answer = site.json("GET", url, token)
        assert status == 200, answer
        return answer if answer["state"] in ("accepted", "rejected") else None

    found: dict[str, Any] = wait_for(done, timeout, f"the verdict of {url}")
    return found


@dataclass
class Uploads:
    cli: subprocess.CompletedProcess[str]
    raw: tuple[int, dict[str, Any], dict[str, Any]]
    broken: tuple[int, dict[str, Any], dict[str, Any]]


@pytest.fixture(scope="module")
def uploads(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Uploads:
    """Ada uploads a renamed greedy with ``gin bot submit --arena``; meanwhile Bob uploads, by
    raw HTTP, a renamed random whose manifest holds markup, and a bot that exits at once."""
    root = tmp_path_factory.mktemp("bots")
    ada = bot_folder(root, "greedy", "ada-greedy")
    bob = bot_folder(
        root, "random", "bob-random", description=MARKUP_DESCRIPTION, author=MARKUP_AUTHOR
    )
    broken = bot_folder(root, "random", "bob-broken")
    (broken / "bot.py").write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    cli = subprocess.Popen(
        [*GIN, "bot", "submit", str(ada), "--arena", site.url],
        cwd=ROOT,
        env={**site.env, "GIN_ARENA_TOKEN": site.tokens["ada"]},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    raw_status, raw = upload(site, site.tokens["bob"], bob)
    broken_status, broken_answer = upload(site, site.tokens["bob"], broken)
    out, err = cli.communicate(timeout=240)
    finished = subprocess.CompletedProcess(cli.args, cli.returncode, out, err)
    raw_verdict = verdict(site, site.tokens["bob"], raw["url"]) if raw_status == 202 else {}
    broken_verdict = (
        verdict(site, site.tokens["bob"], broken_answer["url"]) if broken_status == 202 else {}
    )
    return Uploads(
        finished, (raw_status, raw, raw_verdict), (broken_status, broken_answer, broken_verdict)
    )


# --- uploads and the ladder ----------------------------------------------------------------------


def test_the_command_line_upload_is_accepted(uploads: Uploads) -> None:
    cli = uploads.cli
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert "uploaded" in cli.stdout
    assert ADA_BOT in cli.stdout
    assert "Traceback" not in cli.stdout + cli.stderr


def test_a_raw_http_upload_is_queued_then_accepted(uploads: Uploads) -> None:
    status, answer, final = uploads.raw
    assert status == 202, answer
    assert answer["state"] == "queued"
    assert answer["url"] == f"/api/submissions/{answer['id']}"
    assert final["state"] == "accepted", final
    assert final["bot"] == BOB_BOT
    assert final["finished_at"] >= final["created_at"]


def test_a_bot_that_exits_at_once_is_rejected_with_its_checklist(uploads: Uploads) -> None:
    status, answer, final = uploads.broken
    assert status == 202, answer
    assert final["state"] == "rejected", final
    assert final["bot"] == "bob-broken@1.0.0"  # what it tried to be
    checklist = final["checklist"]
    assert checklist is not None
    assert checklist["passed"] is False
    verdicts = {item["name"]: item["verdict"] for item in checklist["items"]}
    assert verdicts["manifest is valid"] == "passed"
    assert verdicts["starts and says hello"] == "failed", checklist["items"]
    assert final["message"]


def test_a_submission_is_its_authors_only(site: Site, uploads: Uploads) -> None:
    _, answer, _ = uploads.raw
    assert site.json("GET", answer["url"], site.tokens["ada"])[0] == 404
    assert site.json("GET", answer["url"], site.tokens["bob"])[0] == 200


def test_uploaded_bots_play_real_sandboxed_pairs(site: Site, uploads: Uploads) -> None:
    assert uploads.cli.returncode == 0

    def rated() -> bool:
        board = site.board()
        return all(
            ident in board and board[ident]["series"] >= 2 and board[ident]["rating"] is not None
            for ident in (ADA_BOT, BOB_BOT)
        )

    wait_for(rated, 180, "ratings for both uploaded bots", every=2.0)
    board = site.board()
    assert board[ADA_BOT]["author"] == "ada"
    assert board[BOB_BOT]["author"] == "bob"
    assert "bob-broken@1.0.0" not in board
    # a real log of a real match: the referee's header names the uploaded bot's hash
    match = played_match(site, ADA_BOT)
    status, _, data = site.request("GET", f"/matches/{quote(match)}/log.jsonl")
    assert status == 200
    header = json.loads(data.splitlines()[0])
    assert "ada-greedy" in json.dumps(header)


def quote(text: str) -> str:
    return urllib.parse.quote(text, safe="@~")


def played_match(site: Site, ident: str) -> str:
    """A finished ladder match of ``ident`` (from its page's recent matches)."""
    page = site.page(f"/bots/{quote(ident)}")
    for found in re.finditer(r'<a href="/matches/([^"]+)">', page):
        match_id = urllib.parse.unquote(found.group(1))
        if site.request("GET", f"/matches/{found.group(1)}/log.jsonl")[0] == 200:
            return match_id
    raise AssertionError(f"no finished match on {ident}'s page")


def seat_of(match_id: str, ident: str) -> int:
    """``ident``'s seat in a ladder match (``ladder~first~second~index``: even legs seat the
    first bot at 0, odd ones swap)."""
    _, first, second, index = match_id.split("~")
    seat = 0 if ident == first else 1
    assert ident in (first, second)
    return seat if int(index) % 2 == 0 else 1 - seat


# --- across authors ------------------------------------------------------------------------------


def test_an_author_cannot_retire_or_read_another_authors_bot(site: Site, uploads: Uploads) -> None:
    assert uploads.cli.returncode == 0
    ada, bob = site.tokens["ada"], site.tokens["bob"]
    status, answer = site.json("POST", f"/api/bots/{ADA_BOT}/retire", bob)
    assert status == 403, answer
    assert site.board()[ADA_BOT]["state"] == "active"
    match = wait_for(lambda: _match_or_none(site, ADA_BOT), 120, "a match of ada's bot")
    seat = seat_of(match, ADA_BOT)
    stderr = f"/api/matches/{quote(match)}/stderr/{seat}"
    status, _, data = site.request("GET", stderr, bob)
    assert status == 403, data
    assert json.loads(data) == {"error": "that seat's bot is not yours"}
    status, _, data = site.request("GET", stderr, ada)  # her own: shown, or none was kept
    assert status in (200, 404), data
    status, _, _ = site.request("GET", f"/api/matches/{quote(match)}/stderr/{1 - seat}", ada)
    assert status == 403  # a house bot's seat is not hers either
    assert site.request("GET", stderr)[0] == 401  # nobody's


def _match_or_none(site: Site, ident: str) -> str | None:
    try:
        return played_match(site, ident)
    except AssertionError:
        return None


def test_a_revoked_token_is_refused_at_once(site: Site, uploads: Uploads) -> None:
    made = site.gin("arena", "author", "token", "bob")
    assert made.returncode == 0, made.stderr
    spare = made.stdout.strip()
    _, answer, _ = uploads.raw
    assert site.json("GET", answer["url"], spare)[0] == 200
    revoked = site.gin("arena", "author", "revoke", "bob", "--token", spare)
    assert revoked.returncode == 0, revoked.stdout + revoked.stderr
    status, refused = site.json("GET", answer["url"], spare)  # no wait, no restart
    assert status == 401, refused
    assert "error" in refused
    status, _, _ = site.request(
        "POST", "/api/bots", spare, tar_of(ROOT / "sample_bots" / "random"),
        {"Content-Type": "application/gzip"},
    )  # fmt: skip
    assert status == 401
    assert site.json("GET", answer["url"], site.tokens["bob"])[0] == 200  # his other token lives


# --- what a manifest says is shown as text -------------------------------------------------------


def _bob_match(site: Site) -> str:
    found: str = wait_for(lambda: _match_or_none(site, BOB_BOT), 120, "a match of bob's bot")
    return found


def _no_markup(html: str) -> None:
    for tag in ("<script", "<b id", "<img", "<i id"):
        assert tag not in html.lower(), tag
    assert "onerror=" not in html or "onerror=&#34;" in html or "onerror=&quot;" in html


def test_markup_in_a_manifest_is_escaped_on_every_page(site: Site, uploads: Uploads) -> None:
    assert uploads.raw[2]["state"] == "accepted"
    match = _bob_match(site)
    board = site.page("/")
    bot = site.page(f"/bots/{quote(BOB_BOT)}")
    match_page = site.page(f"/matches/{quote(match)}")
    for html in (board, bot, match_page):
        _no_markup(html)
    assert "&lt;script&gt;document.title = &#39;pwned&#39;" in bot  # shown, as text
    assert "&lt;b id=&#34;xss&#34;&gt;" in bot
    assert BOB_BOT in board
    assert BOB_BOT in match_page
    status, headers, _ = site.request("GET", f"/bots/{quote(BOB_BOT)}")
    assert status == 200
    assert "script-src 'self'" in headers["content-security-policy"]


# --- in a browser --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    """One Chromium for the module's pages. ``tests.chromium`` maps every host name to nothing
    (pages from files need no network); the arena is on loopback, so its address is let
    through, and only it."""
    assert CHROMIUM is not None
    flags = tuple(
        LOOPBACK_ONLY if flag.startswith("--host-resolver-rules=") else flag
        for flag in chromium_module.FLAGS
    )
    assert LOOPBACK_ONLY in flags
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chromium_module, "FLAGS", flags)  # read when the browser starts
        chromium = launch(CHROMIUM, tmp_path_factory.mktemp("browser") / "profile")
    with chromium:
        chromium.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        )
        yield chromium


def visit(browser: Chromium, url: str) -> None:
    """Load a URL and wait for its load event (the events of earlier pages forgotten)."""
    browser.events.clear()
    browser.call("Page.navigate", {"url": url})
    browser.wait_for_event("Page.loadEventFired")


def page_errors(browser: Chromium) -> list[str]:
    """The page's console errors, but for the browser's own request of ``/favicon.ico``, which
    the arena does not serve (a 404 the page never asked for)."""
    return [error for error in browser.errors() if "/favicon.ico" not in error]


def frame_ready(browser: Chromium) -> bool:
    """Whether the page's frame (the replay) has run its script to its end, which marks its
    body ``data-ready`` once it has drawn the first step. The sandboxed frame is a target of
    its own (out of the page's process): it is read through a session attached to it."""
    frames = [
        event["params"]["sessionId"]
        for event in browser.events
        if event["method"] == "Target.attachedToTarget"
        and event["params"]["targetInfo"]["type"] == "iframe"
    ]
    if not frames:
        return False
    page, browser.session = browser.session, frames[-1]
    try:
        ready: object = browser.evaluate("document.body !== null && document.body.dataset.ready")
    finally:
        browser.session = page
    return ready == "true"


def text_of(browser: Chromium) -> str:
    text: str = browser.evaluate("document.body.innerText")
    return text


@needs_chromium
def test_the_leaderboard_bot_and_match_pages_in_chromium(
    site: Site, uploads: Uploads, browser: Chromium
) -> None:
    assert uploads.raw[2]["state"] == "accepted"
    match = _bob_match(site)
    for _ in range(5):  # the ladder plays on: a board may come between the API and the page
        before = site.board()[BOB_BOT]["rating"]
        visit(browser, site.url + "/")
        text = text_of(browser)
        after = site.board()[BOB_BOT]["rating"]
        if before == after:
            break
    assert browser.evaluate("document.title") == "gin arena"
    for ident in ("greedy@1.0.0", "random@1.0.0", ADA_BOT, BOB_BOT):
        assert ident in text, ident
    assert f"{after:.0f}" in text  # the rating as the page rounds it
    assert page_errors(browser) == []
    browser.screenshot(ARTIFACTS / "leaderboard.png")

    visit(browser, site.url + f"/bots/{quote(BOB_BOT)}")
    text = text_of(browser)
    assert MARKUP_DESCRIPTION[:40] in text  # the markup, shown as text
    assert browser.evaluate("document.title") == f"{BOB_BOT} · gin arena"  # no script ran
    assert browser.evaluate("document.getElementById('xss') === null")
    assert browser.evaluate("window.pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('script').length") == 0
    assert page_errors(browser) == []
    browser.screenshot(ARTIFACTS / "bot-page.png")

    visit(browser, site.url + f"/matches/{quote(match)}")
    text = text_of(browser)
    assert BOB_BOT in text
    assert browser.evaluate("window.pwned === undefined")
    assert browser.evaluate("document.title") == f"{match} · gin arena"
    frame = browser.evaluate("document.querySelector('iframe.replay').getAttribute('src')")
    assert frame == f"/matches/{quote(match)}/replay"
    assert any(url.endswith(f"{quote(match)}/replay") for url in browser.requests())
    attach = {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True}
    browser.call("Target.setAutoAttach", attach)  # the frame's target, as events
    wait_for(lambda: frame_ready(browser), 30, "the replay frame's first step", every=0.05)
    assert page_errors(browser) == []
    browser.screenshot(ARTIFACTS / "match-page.png")

    visit(browser, site.url + f"/matches/{quote(match)}/replay")  # the replay on its own
    assert "bob-random" in text_of(browser)
    assert page_errors(browser) == []
    browser.screenshot(ARTIFACTS / "match-replay.png")


FITS: str = """(() => {
  const header = document.querySelector('header.top');
  return {scroll: document.documentElement.scrollWidth,
          header: header.scrollWidth - header.clientWidth,
          right: Math.max(...Array.from(header.querySelectorAll('a, button, span'),
                                        (e) => e.getBoundingClientRect().right))};
})()"""
"""How wide a page lays out (a phone's browser zooms out to it, so the window's own width says
nothing) and how far the header's parts reach."""


@needs_chromium
@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 900)])
def test_every_page_fits_a_phone_and_a_desktop(
    site: Site, uploads: Uploads, browser: Chromium, width: int, height: int
) -> None:
    """No page scrolls sideways at 390 px (the board was 810 px wide, a match 782; the header
    ran off the screen): a wide table scrolls within itself. Screenshots kept."""
    assert uploads.raw[2]["state"] == "accepted"
    match = _bob_match(site)
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
    browser.call("Emulation.setDeviceMetricsOverride", metrics)
    pages = {
        "leaderboard": "/",
        "bot": f"/bots/{quote(BOB_BOT)}",
        "match": f"/matches/{quote(match)}",
        "live": "/live",
        "login": "/login",
    }
    try:
        for name, path in pages.items():
            visit(browser, site.url + path)
            fits = browser.evaluate(FITS)
            assert fits["scroll"] <= width, (name, fits)
            assert fits["header"] <= 0, (name, fits)
            assert fits["right"] <= width, (name, fits)
            browser.screenshot(ARTIFACTS / f"{name}-{width}px.png")
    finally:
        metrics = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        browser.call("Emulation.setDeviceMetricsOverride", metrics)


def test_the_event_stream_says_started_and_finished(site: Site, uploads: Uploads) -> None:
    assert uploads.cli.returncode == 0
    connection = http.client.HTTPConnection("127.0.0.1", site.port, timeout=90)
    try:
        connection.request("GET", "/events")
        answer = connection.getresponse()
        assert answer.status == 200
        assert answer.getheader("content-type", "").startswith("text/event-stream")
        data: dict[str, dict[str, Any]] = {}  # the latest event of each kind
        fields: dict[str, str] = {}
        deadline = time.monotonic() + 90
        while not {"started", "finished"} <= data.keys() and time.monotonic() < deadline:
            line = answer.readline().decode().rstrip("\n")
            if line:
                name, _, value = line.partition(": ")
                fields[name] = value
                continue
            if "event" in fields:  # a blank line ends an event
                data[fields["event"]] = json.loads(fields["data"])
                assert int(fields["id"]) > 0
            fields = {}
        assert {"started", "finished"} <= data.keys(), data
        assert data["started"]["match"].startswith("ladder~")
        assert len(data["started"]["seats"]) == 2
        assert data["finished"]["match"].startswith("ladder~")
    finally:
        connection.close()


@needs_chromium
def test_the_live_page_follows_the_events_in_chromium(
    site: Site, uploads: Uploads, browser: Chromium
) -> None:
    assert uploads.cli.returncode == 0
    visit(browser, site.url + "/live")
    rows = (
        "Array.from(document.querySelectorAll('#live-matches tr[data-match]'),"
        " r => r.dataset.match)"
    )
    first = browser.evaluate(rows)
    wait_for(
        lambda: (
            browser.evaluate("document.getElementById('live-status').textContent")
            == "Following live."
        ),
        20,
        "the live page's event stream to open",
        every=0.25,
    )
    new: list[str] = wait_for(  # a match that started after the page was served
        lambda: [match for match in browser.evaluate(rows) if match not in first],
        90,
        "a new match in flight on the live page",
        every=0.5,
    )
    assert all(match.startswith("ladder~") for match in new)
    assert page_errors(browser) == []
    browser.screenshot(ARTIFACTS / "live.png")


def test_the_owner_retires_her_bot(site: Site, uploads: Uploads) -> None:
    assert uploads.cli.returncode == 0
    status, answer = site.json("POST", f"/api/bots/{ADA_BOT}/retire", site.tokens["ada"])
    assert status == 200, answer
    assert answer == {"bot": ADA_BOT, "state": "retired"}
    wait_for(lambda: site.board()[ADA_BOT]["state"] == "retired", 30, "the board to say retired")
    assert "Traceback" not in site.log.read_text()
