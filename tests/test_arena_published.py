"""The published tree (issue 30): a visitor's pages rendered when they change, kept as files
with a ``.gz`` and an ETag, served by the app (304, gzip) and by Debian's nginx alike; never a
stale board, never a held first leg, never what only an author may see; a damaged file
rendered again."""

from __future__ import annotations

import dataclasses
import gzip
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
import trio
import trio.testing
from hypercorn.config import Config

from tests.test_arena_web import (
    HOSTILE,
    FakeIntake,
    Home,
    Reply,
    Site,
    _csrf,
    _page,
    built,
    serve_home,
)
from tournaments.arena.board import Board, board_json
from tournaments.arena.replays import replay_views
from tournaments.arena.server import GRACE_S, server_config
from tournaments.arena.service import REFRESH_SHARE, ArenaService
from tournaments.arena.store import ArenaStore, EntrantState
from tournaments.arena.web import (
    API_PER_MINUTE,
    CSP,
    REPLAY_CSP,
    SESSION_COOKIE,
    TEMPORARY_S,
    Page,
    Published,
    Tree,
    create_app,
    stamped_files,
    tree_stamp,
)
from tournaments.arena.web._front import Front, byte_range
from tournaments.arena.web._publish import PAGES_SHARE
from tournaments.arena.web._tree import LEADERBOARD
from tournaments.arena.web._wire import plain_request, serve_door
from tournaments.registry import Arena
from tournaments.runner import Progress
from tournaments.store import MatchRow, MatchState

__all__ = ["built"]  # the home of test_arena_web, built once for this module too

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None
)


@pytest.fixture
def home(built: Home, tmp_path: Path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(built.path, copy)
    return copy


def published(service: ArenaService) -> Published:
    assert isinstance(service.publisher, Published)
    return service.publisher


async def until(check: Callable[[], bool], what: str) -> None:
    with trio.fail_after(30):
        while not check():
            await trio.sleep(0.02)


def gzip_taken(reply: Reply) -> bytes:
    assert reply.headers.get("content-encoding") == "gzip", reply.headers
    return gzip.decompress(reply.body)


# --- the app -------------------------------------------------------------------------------------


def test_a_visitors_pages_come_with_an_etag_a_304_and_gzip(home: Path, built: Home) -> None:
    match = _page(built.played[2])
    paths = ["/", "/bots/alpha@1.0", f"/matches/{match}", f"/matches/{match}/replay?seat=1"]
    paths += ["/standings.json", "/standings.csv", "/api/leaderboard"]

    async def check(site: Site) -> None:
        for path in paths:
            plain = await site.get(path)
            assert plain.status == 200, path
            assert (plain.headers["vary"], plain.headers["cache-control"]) == (
                "Accept-Encoding",
                "no-cache",
            )
            assert "content-encoding" not in plain.headers
            assert re.fullmatch(r'"[0-9a-f]+-[0-9a-f]+"', plain.headers["etag"]), path
            assert plain.headers["x-content-type-options"] == "nosniff"
            policy = REPLAY_CSP if "replay" in path else CSP
            assert plain.headers["content-security-policy"] == policy, path
            packed = await site.get(path, accept_encoding="br, gzip;q=0.8")
            assert gzip_taken(packed) == plain.body
            assert packed.headers["etag"] != plain.headers["etag"]  # another representation
            refused = await site.get(path, accept_encoding="gzip;q=0, br")
            assert refused.body == plain.body
            same = await site.get(path, if_none_match=f'"x", {plain.headers["etag"]}')
            assert (same.status, same.body, same.headers["etag"]) == (
                304,
                b"",
                plain.headers["etag"],
            )
            both = await site.get(
                path, if_none_match=packed.headers["etag"], accept_encoding="gzip"
            )
            assert both.status == 304
            assert (await site.get(path, if_none_match='"other"')).status == 200
        csv = await site.get("/standings.csv")
        assert csv.headers["content-disposition"] == 'attachment; filename="standings.csv"'
        assert csv.headers["content-type"] == "text/csv; charset=utf-8"

    serve_home(home, check)


def test_the_board_is_published_before_it_is_shown_and_never_served_stale(
    home: Path, built: Home
) -> None:
    """A recorded match and a refreshed board: the file changes before the app shows the new
    board, the app's page follows at once, and the old ETag gets the new page, not a 304."""

    async def check(site: Site) -> None:
        service, tree = site.service, published(site.service).tree
        before = await site.get("/")
        assert "4 series played" in before.text
        # the pending pair's legs played as the first pair's were (same logs): recorded now
        store = service.store
        pending = store.match(built.pending)
        assert pending is not None
        mirror = next(m for m in store.matches("ladder") if m.duplicate_of == built.pending)
        for leg, played in zip((pending, mirror), built.played[:2], strict=True):
            row = store.result(played)
            assert row is not None
            moved = dataclasses.replace(row, match_id=leg.match_id, duplicate_of=leg.duplicate_of)
            store.record_result(moved)
        old_board = service.board
        seen: list[bytes] = []

        def shown_and_published() -> bool:
            if service.board is old_board:
                return False
            seen.append((tree.root / "index.html").read_bytes())
            return True

        service.want_board()
        await until(shown_and_published, "the next board")
        assert b"6 series played" in seen[0]  # on disk when the board was first shown
        after = await site.get("/", if_none_match=before.headers["etag"])
        assert after.status == 200
        assert "6 series played" in after.text
        assert after.headers["etag"] != before.headers["etag"]
        json = await site.get("/standings.json")
        assert '"series":6' in json.text.replace(" ", "")
        service.ladder_error = f"the ladder stopped: {HOSTILE}"  # troubles: a new page too
        assert "the ladder stopped" in (await site.get("/")).text
        assert "the ladder stopped" in (await site.get("/bots/alpha@1.0")).text

    serve_home(home, check)


def test_a_recorded_match_is_published_once_and_a_held_first_leg_is_not(
    home: Path, built: Home
) -> None:
    """What the ladder says was recorded is published by the publishing thread, its replay's
    three views from one reading of its log; a first leg whose mirror is still to play is
    not, and is held for visitors, until the mirror is recorded."""
    first, second, other = built.played[:3]

    async def check(site: Site) -> None:
        service = site.service
        root = published(service).tree.root
        store = service.store
        kept = store.db.execute("SELECT * FROM results WHERE match_id = ?", (second,)).fetchone()
        store.db.execute("DELETE FROM results WHERE match_id = ?", (second,))
        assert service.publisher is not None
        service.publisher.recorded([first])
        service.publisher.recorded([other])  # one job after the other: first's is done
        await until((root / "matches" / other / "replay-1.html").exists, "other")
        views = sorted(p.name for p in (root / "matches" / other).iterdir())
        assert views == sorted(f"replay{s}.html{z}" for s in ("", "-0", "-1") for z in ("", ".gz"))
        assert not (root / "matches" / f"{first}.html").exists()
        assert not (root / "matches" / first).exists()
        held = await site.get(f"/matches/{_page(first)}/replay")
        assert held.status == 404
        assert "held until the other leg" in held.text
        page = await site.get(f"/matches/{_page(first)}")
        assert "held until the other leg" in page.text
        assert "etag" not in page.headers  # rendered per request
        assert not (root / "matches" / f"{first}.html").exists()
        store.db.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", tuple(kept))
        service.publisher.recorded([first, second])  # the pair is done
        await until((root / "matches" / first / "replay-1.html").exists, "first")
        shown = await site.get(f"/matches/{_page(first)}")
        assert shown.headers["etag"]
        assert f"/matches/{_page(first)}/log.jsonl" in shown.text

    serve_home(home, check)


def test_a_held_first_legs_faults_are_on_no_bot_page(home: Path, built: Home) -> None:
    """A fault's detail can name cards ("QS is not in seat 0's hand"), the cards the mirror leg
    is dealt: a held first leg's faults stay off its bots' pages, published or not, until the
    mirror leg is recorded (they were listed on the published page while its match page said
    it was held)."""
    first, second = built.played[:2]  # alpha v beta and its mirror; alpha faulted in the first

    async def check(site: Site) -> None:
        store = site.service.store
        bot = published(site.service).tree.root / "bots" / "alpha@1.0.html"
        store.db.execute("DELETE FROM results WHERE match_id = ?", (second,))
        assert store.mirror_pending(first)

        def faults(text: str) -> str:
            return text.split("Faults in recent matches", 1)[1]

        site.service.want_board()  # without the defence, the page keeps listing it: no end
        await until(lambda: bot.exists() and first not in faults(bot.read_text()), "bot page")
        assert first not in faults((await site.get("/bots/alpha@1.0")).text)
        match = await site.get(f"/matches/{_page(first)}")
        assert "protocol_violation" not in match.text

    serve_home(home, check)


def test_nothing_only_an_author_may_see_is_in_the_tree(home: Path, built: Home) -> None:
    """Every page published (an author logged in asking for them too), the tree holds no
    stderr, no fault evidence, no session's parts; a logged-in author's page is not the
    tree's."""
    secret = "PRIVATE-STDERR my_password=hunter2"

    async def check(site: Site) -> None:
        result = site.service.store.result(built.played[0])
        assert result is not None
        from tests.test_arena_web import _with_evidence  # noqa: PLC0415

        _with_evidence(Path(result.log_path), secret)
        cookie = await site.login(built.tokens["alice"])
        for match in built.played:
            for path in (f"/matches/{_page(match)}", f"/matches/{_page(match)}/replay"):
                mine = await site.get(path, cookie=cookie)
                assert "etag" not in mine.headers
                assert (await site.get(path)).status == 200
        assert "logged in as" in (await site.get("/bots/alpha@1.0", cookie=cookie)).text
        assert (await site.get("/bots/alpha@1.0")).status == 200
        root = published(site.service).tree.root
        files = [file for file in root.rglob("*") if file.is_file()]
        assert len(files) > 20
        for file in files:
            data = file.read_bytes()
            text = (gzip.decompress(data) if file.suffix == ".gz" else data).decode()
            for private in (secret, "own stderr", "logged in as", 'name="csrf"'):
                assert private not in text, (file, private)

    serve_home(home, check)


def test_a_damaged_or_missing_file_is_rendered_again(home: Path, built: Home) -> None:
    """A restart reuses the tree; a file cut short, a .gz that is not its file compressed,
    or a file gone, is rendered again (never a traceback, never the damaged bytes)."""
    match = built.played[2]
    good: dict[str, bytes] = {}

    async def first(site: Site) -> None:
        for path in (f"/matches/{_page(match)}", f"/matches/{_page(match)}/replay"):
            good[path] = (await site.get(path)).body

    serve_home(home, first)
    public = home / "public" / "matches"
    (public / f"{match}.html").write_bytes(good[f"/matches/{_page(match)}"][:100])
    (public / match / "replay.html.gz").write_bytes(b"\x1f\x8b not gzip")
    (public / match / "replay-0.html").unlink()

    async def second(site: Site) -> None:
        for path, body in good.items():
            again = await site.get(path)
            assert (again.status, again.body) == (200, body)
            assert gzip_taken(await site.get(path, accept_encoding="gzip")) == body
        assert (await site.get(f"/matches/{_page(match)}/replay?seat=0")).status == 200
        assert (public / f"{match}.html").read_bytes() == good[f"/matches/{_page(match)}"]

    serve_home(home, second)


def test_a_file_changed_within_the_second_gets_a_new_etag(tmp_path: Path) -> None:
    """The ETag is nginx's (mtime and size), yet strong: a change of the same size within one
    second is dated a second later; the same bytes again keep their date."""
    tree = Tree(tmp_path / "public", "stamp")
    one = tree.put("index.html", b"aaaa")
    two = tree.put("index.html", b"bbbb")
    assert two.mtime == one.mtime + 1
    assert two.etag != one.etag
    assert tree.put("index.html", b"bbbb").mtime == two.mtime
    on_disk = tmp_path / "public" / "index.html"
    assert int(on_disk.stat().st_mtime) == two.mtime
    assert gzip.decompress(Path(f"{on_disk}.gz").read_bytes()) == b"bbbb"
    assert not [p for p in on_disk.parent.iterdir() if p.name.startswith(".tmp-")]
    assert Tree(tmp_path / "public", "stamp").get("index.html") == dataclasses.replace(
        two, tag=None
    )
    assert Tree(tmp_path / "public", "other templates").get("index.html") is None


# --- nginx ---------------------------------------------------------------------------------------


def nginx_config(tree: Path, port: int, app_port: int, scratch: Path) -> str:
    """docs/arena.md's server block, on loopback, in a configuration of its own."""
    docs = (ROOT / "docs" / "arena.md").read_text()
    block = docs.split("<!-- nginx-config -->\n```nginx\n", 1)[1].split("```", 1)[0]
    block = block.replace("listen 80;", f"listen 127.0.0.1:{port};")
    block = block.replace("/srv/gin/public", str(tree))
    block = block.replace("127.0.0.1:8000", f"127.0.0.1:{app_port}")
    temps = "\n".join(
        f"{kind}_temp_path {scratch / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;" if os.geteuid() == 0 else ""
    return (
        f"{user}\ndaemon off;\nworker_processes 1;\npid {scratch / 'nginx.pid'};\n"
        f"error_log {scratch / 'error.log'};\nevents {{}}\nhttp {{\n"
        f"include /etc/nginx/mime.types;\naccess_log off;\n{temps}\n{block}\n}}\n"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_nginx(config: str, scratch: Path) -> subprocess.Popen[bytes]:
    assert NGINX is not None
    path = scratch / "nginx.conf"
    path.write_text(config)
    args = [NGINX, "-c", str(path), "-p", str(scratch), "-e", str(scratch / "error.log")]
    tested = subprocess.run([*args, "-t"], capture_output=True, check=False)
    assert tested.returncode == 0, tested.stderr.decode()
    return subprocess.Popen(args, stderr=subprocess.DEVNULL, start_new_session=True)


async def wait_for_port(port: int) -> None:
    with trio.fail_after(10):
        while True:
            try:
                probe = await trio.to_thread.run_sync(
                    socket.create_connection, ("127.0.0.1", port), 1
                )
                probe.close()
                return
            except OSError:
                await trio.sleep(0.05)


SAME = (
    "content-type",
    "content-length",
    "content-encoding",
    "content-range",
    "accept-ranges",
    "etag",
    "last-modified",
    "content-security-policy",
    "content-disposition",
    "vary",
)
"""The headers nginx and the app must give alike (and ``cache-control``); of a 416, whose page
is each server's own (nginx says its added headers twice there), its range and type."""


@pytest.mark.skipif(
    NGINX is None,
    reason="nginx is not installed (as root: make browser-deps, or apt-get install nginx-light)",
)
def test_nginx_serves_the_tree_as_the_app_does(home: Path, built: Home, tmp_path: Path) -> None:
    """Debian's nginx with docs/arena.md's configuration, on the tree the app published: the
    same bytes, types, ETags, 304s and gzip; a session cookie and every other route go to the
    app."""
    match = _page(built.played[2])
    paths = ["/", "/bots/alpha@1.0", f"/matches/{match}", f"/matches/{match}/replay"]
    paths += [f"/matches/{match}/replay?seat=0", "/standings.json", "/standings.csv"]
    paths.append("/api/leaderboard")
    seats = ["?seat=1&seat=0", "?SEAT=1", "?seat=", "?x=1&seat=0", "?seat"]
    paths += [f"/matches/{match}/replay{query}" for query in seats]  # as $arg_seat reads them
    scratch = tmp_path / "nginx"
    scratch.mkdir()

    async def check(site: Site) -> None:
        for path in paths:  # published (rendered once, if the thread has not yet)
            assert (await site.get(path)).status == 200
        port = free_port()
        tree = published(site.service).tree.root
        server = start_nginx(nginx_config(tree, port, site.port, scratch), scratch)
        try:
            await wait_for_port(port)
            front = Site(site.host, port, site.service, site.app)
            for path in paths:
                await assert_alike(site, front, path)
                await assert_answers_alike(site, front, path)
            await assert_proxied(site, front, built)
            await assert_pruned_goes_to_the_app(site, front, built.played[3])
        finally:
            server.terminate()
            server.wait(timeout=10)

    serve_home(home, check)


async def assert_alike(app: Site, nginx: Site, path: str) -> None:
    for encoding in ("", "gzip"):
        ours, theirs = (
            await app.get(path, accept_encoding=encoding),
            await nginx.get(path, accept_encoding=encoding),
        )
        assert (theirs.status, theirs.body) == (200, ours.body), (path, encoding)
        for name in SAME:
            assert theirs.headers.get(name) == ours.headers.get(name), (path, encoding, name)
        assert theirs.headers.get("content-encoding") == ours.headers.get("content-encoding")
        assert "x-served-by" not in theirs.headers, path
        for server in (app, nginx):
            again = await server.get(
                path, accept_encoding=encoding, if_none_match=ours.headers["etag"]
            )
            assert (again.status, again.body) == (304, b""), (path, server.port)
    csv = await nginx.get("/standings.csv")
    assert csv.headers["content-disposition"] == 'attachment; filename="standings.csv"'


def conditions(plain: Reply) -> list[dict[str, str]]:
    """The requests a page is asked with, besides a plain GET and HEAD: dates, ETags, ranges."""
    date, etag = plain.headers["last-modified"], plain.headers["etag"]
    return [
        {"if_modified_since": date},
        {"if_modified_since": "Thu, 01 Jan 1970 00:00:01 GMT"},
        {"if_modified_since": "not a date"},
        {"if_modified_since": date, "if_none_match": '"other"'},
        {"if_modified_since": "Thu, 01 Jan 1970 00:00:01 GMT", "if_none_match": etag},
        {"if_modified_since": date, "if_none_match": etag},
        {"if_none_match": f'"a", W/{etag}'},
        {"if_none_match": f'"a", *, {etag}x'},
        {"if_modified_since": date, "accept_encoding": "gzip"},
        {"range": "bytes=0-99"},
        {"range": "Bytes = 5 - 9"},
        {"range": "bytes=-50"},
        {"range": "bytes=- 50"},
        {"range": "bytes=10-"},
        {"range": "bytes=99999999-"},
        {"range": "bytes=99999999-,0-9"},
        {"range": "bytes=0-1,5-9"},
        {"range": "bytes=0-1,"},
        {"range": "bytes=x"},
        {"range": "pages=1"},
        {"range": "bytes=0-99", "accept_encoding": "gzip"},
        {"range": "bytes=0-99", "if_range": etag},
        {"range": "bytes=0-99", "if_range": '"other"'},
        {"range": "bytes=0-99", "if_range": date},
        {"range": "bytes=0-99", "if_range": "Thu, 01 Jan 1970 00:00:01 GMT"},
        {"range": "bytes=0-99", "if_none_match": etag},
    ]


async def assert_answers_alike(app: Site, nginx: Site, path: str) -> None:
    """The app answers as nginx does to HEAD, ``If-Modified-Since``, ``If-None-Match``,
    ``Range`` and ``If-Range``: the same status, headers and bytes (a 416's page aside)."""
    plain = await app.get(path)
    for encoding in ("", "gzip"):
        heads = [
            await trio.to_thread.run_sync(
                server._fetch, "HEAD", path, None, {"accept-encoding": encoding}
            )
            for server in (app, nginx)
        ]
        assert_same(heads[0], heads[1], (path, "HEAD", encoding))
        assert heads[0].body == b""
    for asked in conditions(plain):
        ours, theirs = await app.get(path, **asked), await nginx.get(path, **asked)
        assert_same(ours, theirs, (path, asked))


def assert_same(ours: Reply, theirs: Reply, what: object) -> None:
    assert theirs.status == ours.status, (what, theirs.status, ours.status)
    names = ("content-range", "content-type") if ours.status == 416 else (*SAME, "cache-control")
    for name in names:
        assert theirs.headers.get(name) == ours.headers.get(name), (what, name)
    if ours.status != 416:
        assert theirs.body == ours.body, what
    assert "x-served-by" not in theirs.headers, what


async def assert_proxied(app: Site, nginx: Site, built: Home) -> None:
    live = await nginx.get("/live")
    assert (live.status, live.headers.get("x-served-by")) == (200, "gin arena")
    assert "etag" not in live.headers
    cookie = await app.login(built.tokens["alice"])
    mine = await nginx.get("/bots/alpha@1.0", cookie=cookie)
    assert mine.headers.get("x-served-by") == "gin arena"
    assert "logged in as" in mine.text
    forged = await nginx.get("/bots/alpha@1.0", cookie="gin_session=forged")  # to the app
    assert forged.headers.get("x-served-by") == "gin arena"
    assert forged.body == (await nginx.get("/bots/alpha@1.0")).body  # the tree's page
    assert forged.headers["etag"]
    held = await nginx.get(f"/matches/{_page(built.pending)}")
    assert (held.status, held.headers.get("x-served-by")) == (200, "gin arena")
    missing = await nginx.get("/matches/no-such-match/replay?seat=7")
    assert missing.status == 404


async def assert_pruned_goes_to_the_app(app: Site, nginx: Site, match: str) -> None:
    """A match whose files left the tree (older than the last MATCH_PAGES): nginx passes it to
    the app, which renders and publishes it again; nginx serves it from then on."""
    tree = published(app.service).tree
    tree.put(f"matches/{match}.html", (await app.get(f"/matches/{_page(match)}")).body)
    tree.remove(f"matches/{match}.html")
    assert not (tree.root / "matches" / f"{match}.html").exists()
    gone = await nginx.get(f"/matches/{_page(match)}")
    assert (gone.status, gone.headers.get("x-served-by")) == (200, "gin arena")
    assert (tree.root / "matches" / f"{match}.html").exists()
    back = await nginx.get(f"/matches/{_page(match)}")
    assert (back.status, back.body) == (200, gone.body)
    assert "x-served-by" not in back.headers


@pytest.mark.parametrize("planted", ["file", "dangling link"])
def test_a_tree_that_is_not_a_folder_is_made_afresh(tmp_path: Path, planted: str) -> None:
    """``public`` as a file or a dangling link stopped the server at its start (a traceback)."""
    root = tmp_path / "public"
    if planted == "file":
        root.write_text("not a tree")
    else:
        root.symlink_to(tmp_path / "nowhere")
    tree = Tree(root, "stamp")
    tree.put("index.html", b"page")
    assert root.is_dir()
    assert not root.is_symlink()
    assert (root / "index.html").read_bytes() == b"page"


def test_the_stamp_covers_the_privacy_rules_and_the_web_apps_code(tmp_path: Path) -> None:
    """Pages of a finished match are final: after a fix to redaction or escaping, a tree whose
    stamp missed that code kept the pages rendered before it (the stamp covered the templates,
    the static files and two modules only)."""
    names = {(path.parent.name, path.name) for path in stamped_files()}
    for wanted in [("arena", "privacy.py"), ("web", "_pages.py"), ("views", "words.py")]:
        assert wanted in names, wanted
    assert ("referee", "bot_text.py") in names
    source = tmp_path / "module.py"
    source.write_text("HIDDEN = 1\n")
    before = tree_stamp(source)
    source.write_text("HIDDEN = 2\n")
    assert tree_stamp(source) != before


def test_a_page_put_over_an_unreadable_one_gets_another_etag(tmp_path: Path) -> None:
    """The old file's .gz damaged, a new page of the same size in the same second: its time
    came from nothing (0) and so equalled the old one's, and the ETag with it."""
    root = tmp_path / "public"
    one = Tree(root, "s").put("index.html", b"aaaa")
    (root / "index.html.gz").write_bytes(b"junk")
    two = Tree(root, "s").put("index.html", b"bbbb")
    assert two.etag != one.etag


def test_a_forged_or_ended_session_gets_the_trees_page(home: Path, built: Home) -> None:
    """Only a live session is shown pages of its own: any ``gin_session`` cookie made the app
    render every page per request (a forged cookie: the tree's work undone, per request)."""
    match = _page(built.played[2])
    paths = ["/", "/bots/alpha@1.0", f"/matches/{match}", f"/matches/{match}/replay?seat=1"]

    async def check(site: Site) -> None:
        ended = await site.login(built.tokens["alice"])
        out = await site.form(
            "/logout", {"csrf": _csrf((await site.get("/", cookie=ended)).text)}, cookie=ended
        )
        assert out.status == 303
        for cookie in ("gin_session=forged", ended, f"{SESSION_COOKIE}={'x' * 300}"):
            for path in paths:
                tree = await site.get(path)
                theirs = await site.get(path, cookie=cookie)
                assert (theirs.status, theirs.body) == (200, tree.body), (cookie, path)
                assert theirs.headers["etag"] == tree.headers["etag"], (cookie, path)
                again = await site.get(path, cookie=cookie, if_none_match=tree.headers["etag"])
                assert again.status == 304
        live = await site.login(built.tokens["alice"])
        mine = await site.get("/bots/alpha@1.0", cookie=live)
        assert "logged in as" in mine.text
        assert "etag" not in mine.headers


# --- bounded, private and cheap (issue 30's hostile review) --------------------------------------


def test_a_killed_writers_old_temporary_files_are_swept_at_the_start(tmp_path: Path) -> None:
    """A writer killed between its temporary file and the rename left ``.tmp-*`` files for
    ever; an old one is swept when the tree is opened, a young one (a write in flight) is not."""
    root = tmp_path / "public"
    Tree(root, "s").put("matches/m.html", b"page")
    old, young = root / "matches" / ".tmp-old", root / ".tmp-young"
    for file in (old, young):
        file.write_bytes(b"half a page")
    long_ago = time.time() - TEMPORARY_S - 60
    os.utime(old, (long_ago, long_ago))
    tree = Tree(root, "s")
    assert not old.exists()
    assert young.exists()
    assert tree.get("matches/m.html") is not None


def match_ids_in(root: Path) -> set[str]:
    folder = root / "matches"
    return {entry.name.removesuffix(".gz").removesuffix(".html") for entry in folder.iterdir()}


async def record_all_two_kept(site: Site, played: list[str]) -> Path:
    """Record the four played matches in turn (``MATCH_PAGES`` patched to 2): the tree's root,
    once it holds the last two only."""
    root = published(site.service).tree.root
    assert site.service.publisher is not None
    for match in played:
        site.service.publisher.recorded([match])
    await until((root / "matches" / played[3] / "replay-1.html").exists, "last")
    await until(lambda: match_ids_in(root) == set(played[2:]), "the oldest pruned")
    return root


def test_the_tree_keeps_only_the_latest_matches_pages(
    home: Path, built: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree grew by every match's pages for ever; it keeps the last MATCH_PAGES matches
    recorded, an older one's page is rendered when asked for but not kept (a visitor reading
    old matches pushed the latest out of the tree, each then rendered again when asked for),
    and a tree left with more than that at a restart is cut back."""
    monkeypatch.setattr("tournaments.arena.web._publish.MATCH_PAGES", 2)
    played = built.played  # two pairs, all four final

    async def first(site: Site) -> None:
        root = await record_all_two_kept(site, played)
        old = await site.get(f"/matches/{_page(played[0])}")
        assert (old.status, "etag" in old.headers) == (200, True)
        assert "held" not in old.text
        replay = await site.get(f"/matches/{_page(played[1])}/replay?seat=0")
        assert replay.status == 200
        assert "<html" in replay.text.lower()
        assert match_ids_in(root) == set(played[2:])  # the latest stay
        assert not (root / "matches" / f"{played[0]}.html").exists()  # a spare page only

    serve_home(home, first)
    monkeypatch.setattr("tournaments.arena.web._publish.MATCH_PAGES", 1)

    async def second(site: Site) -> None:
        root = published(site.service).tree.root
        await until(lambda: match_ids_in(root) == {played[3]}, "cut back at the start")

    serve_home(home, second)


def test_a_boards_bot_pages_are_rendered_only_when_they_change(
    home: Path, built: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every board rendered every bot's page again (seconds of a core at 1,000 bots): a board
    that changes nothing a bot's page shows renders none, and the page is still served from the
    tree for the new board; a bot that changes gets its page again, alone, and so do the two
    bots of a match that started."""
    from tournaments.arena.web._pages import render_bot  # noqa: PLC0415 - to count its calls

    rendered: list[str] = []

    def counted(web: Any, store: Any, viewer: Any, ident: str, board: Any) -> Any:
        rendered.append(ident)
        return render_bot(web, store, viewer, ident, board)

    monkeypatch.setattr("tournaments.arena.web._publish.render_bot", counted)

    async def next_board(site: Site) -> None:
        service = site.service
        before, tree = service.board, published(service).tree

        def tagged(ident: str) -> bool:
            page = tree.peek(f"bots/{ident}.html")
            tag = None if page is None else page.tag
            return isinstance(tag, tuple) and tag[0] == service.board.at

        service.want_board()
        await until(lambda: service.board is not before, "the next board")
        await until(lambda: all(tagged(row.ident) for row in service.board.rows), "its bots")

    async def check(site: Site) -> None:
        service = site.service
        await next_board(site)  # the first board's bot pages are in
        rendered.clear()
        await next_board(site)
        assert rendered == []
        page = await site.get("/bots/beta@1.0")
        assert page.headers.get("etag"), "served from the tree, for the new board"
        service.store.set_entrant("alpha@1.0", EntrantState.RETIRED, "retired by alice")
        await next_board(site)
        assert rendered == ["alpha@1.0"]
        assert "retired by alice" in (await site.get("/bots/alpha@1.0")).text
        rendered.clear()
        service.store.mark(built.pending, MatchState.RUNNING)  # beta against gamma, started
        await next_board(site)
        assert sorted(rendered) == ["beta@1.0", "gamma@1.0"]
        running = (await site.get("/bots/gamma@1.0")).text.split("Recent matches", 1)[1]
        assert "running" in running

    serve_home(home, check)


def test_a_reader_that_missed_memory_keeps_no_older_page_over_a_newer(tmp_path: Path) -> None:
    """A reader reading the disk while a put writes the same path kept the page it read over the
    put's newer one (memory then served the old page until it was put again): the read and the
    keep are now under the path's lock, which the put waits for (forced here by a hook between
    the reader's read and its keep)."""
    root = tmp_path / "public"
    Tree(root, "s").put("index.html", b"old page")
    tree = Tree(root, "s")  # nothing in memory: a get reads the disk
    writer: list[threading.Thread] = []

    def put_meanwhile(rel: str) -> None:
        tree.reading = lambda rel: None
        thread = threading.Thread(target=tree.put, args=(rel, b"new page!"))
        writer.append(thread)
        thread.start()
        thread.join(timeout=1)  # without the lock the put is done here; with it, it waits

    tree.reading = put_meanwhile
    read = tree.get("index.html")
    assert read is not None
    assert read.body == b"old page"  # what was on disk when it read
    writer[0].join(timeout=10)
    assert not writer[0].is_alive()
    kept = tree.peek("index.html")
    assert kept is not None
    assert kept.body == b"new page!"
    assert tree.get("index.html") == kept
    assert (root / "index.html").read_bytes() == b"new page!"


class TimedPublisher:
    """A publisher whose bot pages take ``PUBLISH_S`` of the (mock) clock, and which notes when
    each board was computed."""

    PUBLISH_S = 5.0

    def __init__(self, clock: trio.testing.MockClock) -> None:
        self.clock = clock
        self.computed: list[float] = []
        self.board = trio.Event()

    def _computed(self) -> None:
        self.computed.append(trio.current_time())
        self.board.set()

    def board_computed(self, board: Board) -> None:
        trio.from_thread.run_sync(self._computed)

    def board_shown(self, board: Board) -> float:
        trio.from_thread.run_sync(self.clock.jump, self.PUBLISH_S)
        return 0.0

    def recorded(self, match_ids: Sequence[str]) -> None:
        pass


def test_the_boards_refresh_counts_its_pages_publishing(home: Path) -> None:
    """The refresh waited only for the fit's share of the time: a big field's bot pages,
    published after each board, could keep a core busy. Their time is counted in."""
    clock = trio.testing.MockClock(autojump_threshold=0)
    publisher = TimedPublisher(clock)

    async def main() -> None:
        arena = Arena(home)
        store = ArenaStore(arena.store_path)
        service = ArenaService(arena, store, ladder=False)
        service.intake = cast(Any, FakeIntake(service))
        service.publisher = publisher
        async with trio.open_nursery() as nursery:
            await nursery.start(service.run)
            for _ in range(2):  # the first board, then one asked for at once
                await publisher.board.wait()
                publisher.board = trio.Event()
                service.want_board()
            nursery.cancel_scope.cancel()
        store.close()
        assert service.publish_seconds >= TimedPublisher.PUBLISH_S
        gap = publisher.computed[1] - publisher.computed[0]
        assert gap >= TimedPublisher.PUBLISH_S / REFRESH_SHARE, gap

    trio.run(main, clock=clock)


def test_a_first_legs_finish_is_not_streamed_until_its_mirror_is_recorded(
    home: Path, built: Home
) -> None:
    """The live stream said a first leg had finished while its mirror leg (the same decks) was
    to play, where its pages say it is held. Its ``finished`` comes with the pair. The ladder's
    calls (its progress, its pair done) are made as the ladder makes them."""
    leg_id = built.pending

    def play(site: Site) -> None:
        service, store = site.service, site.service.store
        leg = store.match(leg_id)
        mirror = next(m for m in store.matches("ladder") if m.duplicate_of == leg_id)
        assert leg is not None

        def record(match: MatchRow, like: str) -> None:
            row = store.result(like)
            assert row is not None
            store.record_result(
                dataclasses.replace(row, match_id=match.match_id, duplicate_of=match.duplicate_of)
            )

        def running(*ids: str) -> None:
            service._progress(Progress("ladder", 2, 0, running=dict.fromkeys(ids, 0.0)))

        running(leg.match_id)
        record(leg, built.played[0])
        running()  # the first leg is recorded: its mirror is to play
        running(mirror.match_id)
        record(mirror, built.played[1])
        running()
        service._pair_done([leg, mirror])

    async def check(site: Site) -> None:
        def listen() -> list[tuple[str, str]]:
            connection = http.client.HTTPConnection(site.host, site.port, timeout=30)
            connection.request("GET", "/events")
            response = connection.getresponse()
            events: list[tuple[str, str]] = []
            kind = ""
            while True:
                line = response.readline().decode()
                if line.startswith(": live"):
                    trio.from_thread.run_sync(play, site)
                elif line.startswith("event: "):
                    kind = line.removeprefix("event: ").strip()
                elif line.startswith("data: "):
                    events.append((kind, json.loads(line.removeprefix("data: ")).get("match")))
                    if kind == "pair":
                        connection.close()
                        return events

        store = site.service.store
        mirror = next(m for m in store.matches("ladder") if m.duplicate_of == leg_id)
        events = await trio.to_thread.run_sync(listen)
        said = [event for event in events if event[0] in ("started", "finished")]
        assert said.index(("finished", leg_id)) > said.index(("started", mirror.match_id)), said
        assert said.index(("finished", leg_id)) > said.index(("finished", mirror.match_id))

    serve_home(home, check)


def test_requests_queued_for_one_board_write_its_pages_once(home: Path) -> None:
    """A board's pages already written while a request waited for the publishing lock are
    served as written, not rendered again by each waiting request (a herd of readers at 1,000
    bots rendered the board and its standings one after another, for minutes)."""

    async def check(site: Site) -> None:
        pub = published(site.service)
        board = site.service.board
        first = await trio.to_thread.run_sync(pub._publish_board, board)
        again = await trio.to_thread.run_sync(pub._publish_board, board)
        assert again is first


class FakePublished:
    """A tree that holds one page at every path the front looks up, and says which."""

    def __init__(self, page: Page | None) -> None:
        self.page = page
        self.asked: list[tuple[str, object, bool]] = []

    def _look(self, kind: str, what: object, peek: bool) -> Page | None:
        self.asked.append((kind, what, peek))
        return self.page

    def board(self, *, peek: bool = False) -> Page | None:
        return self._look("board", None, peek)

    def download(self, name: str, *, peek: bool = False) -> Page | None:
        return self._look("download", name, peek)

    def bot(self, ident: str, *, peek: bool = False) -> Page | None:
        return self._look("bot", ident, peek)

    def match(self, match_id: str, *, peek: bool = False) -> Page | None:
        return self._look("match", match_id, peek)

    def replay(self, match_id: str, seat: int | None, *, peek: bool = False) -> Page | None:
        return self._look("replay", (match_id, seat), peek)


def front_call(
    published: FakePublished, method: str, path: str, query: bytes = b"", **headers: str
) -> tuple[list[dict[str, Any]], bool]:
    """What the front sends for one request, and whether it went on to the app."""
    went_on: list[bool] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        went_on.append(True)

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope: dict[str, Any] = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query,
        "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }
    web = types.SimpleNamespace(published=published)
    front: Any = Front(cast(Any, app), cast(Any, web))
    trio.run(front, scope, receive, send)
    return sent, bool(went_on)


def test_the_front_answers_the_trees_paths_and_passes_on_the_rest() -> None:
    """A visitor's GET or HEAD of a path of the tree, with no body and no session cookie, is
    answered from the page's head; a session cookie (any), a body, another method, another path
    or a page the tree has not (``None``) go on to the app."""
    page = Page(b"<p>board</p>", gzip.compress(b"<p>board</p>"), "text/html; charset=utf-8", 7)
    published = FakePublished(page)
    sent, went_on = front_call(published, "GET", "/")
    assert not went_on
    assert sent[0]["status"] == 200
    assert sent[1]["body"] == page.body
    head = dict(sent[0]["headers"])
    assert head[b"etag"] == page.etag.encode()
    assert head[b"content-security-policy"] == CSP.encode()
    assert (head[b"x-frame-options"], head[b"vary"]) == (b"SAMEORIGIN", b"Accept-Encoding")
    assert published.asked == [("board", None, True)]  # from memory
    sent, _ = front_call(published, "HEAD", "/bots/alpha@1.0", accept_encoding="gzip")
    assert sent[1]["body"] == b""
    assert dict(sent[0]["headers"])[b"content-encoding"] == b"gzip"
    sent, _ = front_call(published, "GET", "/matches/m1/replay", b"SEAT=1&seat=0")
    assert published.asked[-1] == ("replay", ("m1", 1), True)
    for method, path, query, headers in [
        ("GET", "/", b"", {"cookie": "theme=dark; gin_session=forged"}),
        ("GET", "/", b"", {"content-length": "5"}),
        ("GET", "/", b"", {"transfer-encoding": "chunked"}),
        ("POST", "/", b"", {}),
        ("GET", "/live", b"", {}),
        ("GET", "/bots/a/b", b"", {}),
        ("GET", "/matches/m1/replay", b"seat=2", {}),
        ("GET", "/matches/m1/log.jsonl", b"", {}),
    ]:
        asked = len(published.asked)
        sent, went_on = front_call(published, method, path, query, **headers)
        assert went_on, (method, path, headers)
        assert not sent, (method, path, headers)
        assert len(published.asked) == asked, path  # not even looked up
    missing = FakePublished(None)
    sent, went_on = front_call(missing, "GET", "/matches/m2")
    assert went_on
    assert not sent
    assert missing.asked == [("match", "m2", True), ("match", "m2", False)]  # disk, in a thread


# --- the door ------------------------------------------------------------------------------------

PLAIN = b"GET /matches/m%401?seat=1 HTTP/1.1\r\nHost: arena\r\nAccept-Encoding: gzip\r\n\r\n"


@pytest.mark.parametrize(
    "sent",
    [
        PLAIN.replace(b"GET", b"POST"),
        PLAIN.replace(b"HTTP/1.1", b"HTTP/1.0"),
        PLAIN.replace(b"/matches", b"http://arena/matches"),  # absolute form
        PLAIN.replace(b"Host: arena\r\n", b""),
        PLAIN.replace(b"Host: arena\r\n", b"Host: arena\r\nHost: other\r\n"),
        PLAIN.replace(b"\r\n\r\n", b"\r\nContent-Length: 0\r\n\r\n"),
        PLAIN.replace(b"\r\n\r\n", b"\r\nTransfer-Encoding: chunked\r\n\r\n"),
        PLAIN.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"),
        PLAIN.replace(b"\r\n\r\n", b"\r\nUpgrade: h2c\r\n\r\n"),
        PLAIN.replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n"),
        PLAIN.replace(b"Host: arena\r\n", b"Host: arena\nX: y\r\n"),  # a bare LF
        PLAIN.replace(b"gzip\r\n", b"gzip\r\n folded\r\n"),  # obs-fold
        PLAIN.replace(b"gzip", b"gz\x00ip"),
        PLAIN.replace(b"Accept-Encoding", b"Accept Encoding"),
        PLAIN.replace(b"/matches", b"/mat ches"),
        PLAIN[:-2],  # not whole yet
        PLAIN.replace(b"gzip", b"g" * 70_000),  # longer than Hypercorn takes
    ],
)
def test_the_door_reads_only_the_plainest_requests(sent: bytes) -> None:
    """Anything but a whole, plain GET or HEAD is left to Hypercorn, unread."""
    assert plain_request(sent, 64 * 1024) is None


def test_the_door_reads_a_plain_request_as_hypercorn_does() -> None:
    """What a browser sends (``Connection: keep-alive`` too), read as Hypercorn reads it."""
    sent = PLAIN.replace(b"\r\n\r\n", b"\r\nConnection: Keep-Alive\r\n\r\n")
    assert plain_request(sent, 64 * 1024) is not None
    request = plain_request(PLAIN + b"GET / HTTP/1.1\r\n", 64 * 1024)
    assert request is not None
    assert (request.method, request.path, request.query) == ("GET", "/matches/m@1", b"seat=1")
    assert request.headers["accept-encoding"] == "gzip"
    assert request.size == len(PLAIN)


def read_answers(sock: socket.socket, count: int) -> list[tuple[int, list[str], bytes]]:
    """``count`` answers read off a connection: status, header names in order, body."""
    data = b""
    answers: list[tuple[int, list[str], bytes]] = []
    while len(answers) < count:
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, data = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        fields = [line.split(":", 1) for line in lines[1:]]
        size = int({k.lower(): v for k, v in fields}.get("content-length", "0"))
        while len(data) < size:
            data += sock.recv(65536)
        answers.append((int(lines[0].split()[1]), [k.lower() for k, _ in fields], data[:size]))
        data = data[size:]
    return answers


def test_the_door_hands_the_rest_of_a_connection_to_hypercorn(home: Path, built: Home) -> None:
    """Pipelined on one connection: a page the door answers, a form post it leaves to Hypercorn
    (with what it read put back), and a page after it: each answered, in order, and each
    as when asked alone."""
    visitor = b"GET /bots/alpha@1.0 HTTP/1.1\r\nHost: arena\r\n\r\n"
    form = b"POST /logout HTTP/1.1\r\nHost: arena\r\nContent-Length: 0\r\n\r\n"

    def pipelined(site: Site) -> list[tuple[int, list[str], bytes]]:
        with socket.create_connection((site.host, site.port), timeout=30) as sock:
            sock.sendall(visitor + form + visitor)
            return read_answers(sock, 3)

    async def check(site: Site) -> None:
        alone = await site.get("/bots/alpha@1.0")
        first, posted, third = await trio.to_thread.run_sync(pipelined, site)
        assert (first[0], first[2]) == (200, alone.body)
        assert first[1][0] == "date"  # the door's own (Hypercorn says its date last)
        assert posted[0] == 303
        assert "x-content-type-options" in posted[1]
        assert (third[0], third[2]) == (200, alone.body)
        assert third[1][-1] == "date"  # Hypercorn's: the connection is its own now

    serve_home(home, check)


def test_a_fault_at_the_door_closes_its_connection_not_the_server(
    home: Path, built: Home, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug met answering at the door ended the whole server (the error went up through the
    server's nursery): now that connection is closed and logged, and the server serves on."""
    from tournaments.arena.web import _wire  # noqa: PLC0415

    def broken(*args: object) -> None:
        raise RuntimeError("a bug")

    def asked(site: Site) -> bytes:
        with socket.create_connection((site.host, site.port), timeout=30) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: arena\r\n\r\n")
            return sock.recv(65536)

    async def check(site: Site) -> None:
        assert (await site.get("/")).status == 200  # in memory: the door answers it
        monkeypatch.setattr(_wire, "answer", broken)
        assert await trio.to_thread.run_sync(asked, site) == b""  # closed, unanswered
        monkeypatch.undo()
        assert (await site.get("/")).status == 200
        assert "the arena's door failed" in caplog.text

    serve_home(home, check)


def test_the_api_leaderboard_is_a_published_file_that_no_address_runs_out_of(
    home: Path, built: Home
) -> None:
    """A class behind one address polling ``/api/leaderboard`` ran out of the address's API
    calls (and each call went past the door to Hypercorn, the reader's connection with it): it
    is the tree's file now, the board's JSON, written with the board."""

    async def check(site: Site) -> None:
        tree = published(site.service).tree
        for _ in range(API_PER_MINUTE + 10):
            reply = await site.get("/api/leaderboard")
            assert reply.status == 200, reply.text
        assert reply.body == board_json(site.service.board)
        assert reply.headers["content-type"] == "application/json"
        page = tree.peek(LEADERBOARD)
        assert page is not None
        assert reply.headers["etag"] == page.etag
        assert json.loads(reply.body)["series"] == site.service.board.series

    serve_home(home, check)


def test_a_boards_bot_pages_leave_three_quarters_of_the_interpreter_to_the_web(
    home: Path, built: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thousand bots' pages after each board held the interpreter for seconds, the web's
    requests halved meanwhile: each page rendered is followed by a pause, so that the pages
    take at most PAGES_SHARE of the time; the pauses are not counted as the refresh's work."""
    from tournaments.arena.web._pages import render_bot  # noqa: PLC0415 - to slow it down

    by: list[int] = []

    def slow(web: Any, store: Any, viewer: Any, ident: str, board: Any) -> Any:
        by.append(threading.get_ident())
        time.sleep(0.05)
        return render_bot(web, store, viewer, ident, board)

    monkeypatch.setattr("tournaments.arena.web._publish.render_bot", slow)

    async def check(site: Site) -> None:
        publisher, board = published(site.service), site.service.board

        def shown() -> tuple[float, float, int]:
            publisher._bot_pages.clear()  # every page rendered again
            began = time.perf_counter()
            paused = publisher.board_shown(board)
            return time.perf_counter() - began, paused, by.count(threading.get_ident())

        taken, paused, pages = await trio.to_thread.run_sync(shown)
        assert pages == len(board.rows) >= 3
        assert taken >= pages * 0.05 / PAGES_SHARE, (taken, pages)  # its pauses in
        assert paused >= pages * 0.05 * (1 / PAGES_SHARE - 1)  # not counted as its work
        assert taken - paused <= taken * (PAGES_SHARE + 0.05), (taken, paused)

    serve_home(home, check)


def test_the_door_reads_a_long_run_of_spaces_at_once() -> None:
    """A header value with a long run of spaces took the door's pattern seconds (23 s for one
    64 KiB head), the whole server's interpreter held meanwhile; and so did a ``Range`` of one.
    The bound is generous: linear, it takes milliseconds."""
    spaces = b" " * 60_000
    sent = b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: a" + spaces + b"b  \r\n\r\n"
    began = time.perf_counter()
    request = plain_request(sent, 64 * 1024)
    assert request is not None
    assert request.headers["x-pad"] == "a" + spaces.decode() + "b"  # the spaces around it go
    assert byte_range("bytes=1-" + " " * 60_000 + "x", 35) == "unsatisfiable"
    assert time.perf_counter() - began < 2.0


def test_a_range_past_any_file_is_unsatisfiable_not_a_fault() -> None:
    """A range of 4,301 digits raised (Python reads no longer number), which closed the
    connection unanswered with a traceback in the log: it is past ``off_t``, a 416 as nginx
    answers; leading zeros do not count."""
    assert byte_range("bytes=" + "9" * 4301 + "-", 35) == "unsatisfiable"
    assert byte_range("bytes=0-" + "9" * 20, 35) == "unsatisfiable"
    assert byte_range("bytes=" + "0" * 30 + "1-2", 35) == (1, 3)


def test_the_door_closes_a_connection_at_hypercorns_most_requests(
    home: Path, built: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The door answered a kept connection's requests without end: after Hypercorn's
    ``keep_alive_max_requests`` answers it says ``Connection: close`` and closes, as Hypercorn
    does."""
    monkeypatch.setattr(Config, "keep_alive_max_requests", 3)
    visitor = b"GET /bots/alpha@1.0 HTTP/1.1\r\nHost: arena\r\n\r\n"

    def pipelined(site: Site) -> tuple[list[tuple[int, list[str], bytes]], bytes]:
        with socket.create_connection((site.host, site.port), timeout=30) as sock:
            sock.sendall(visitor * 5)
            answers = read_answers(sock, 3)
            return answers, sock.recv(65536)

    async def check(site: Site) -> None:
        await site.get("/bots/alpha@1.0")  # published
        answers, rest = await trio.to_thread.run_sync(pipelined, site)
        assert [status for status, _, _ in answers] == [200] * 3
        assert [fields[0] == "date" for _, fields, _ in answers] == [True] * 3  # the door's
        assert [fields[-1] == "connection" for _, fields, _ in answers] == [False, False, True]
        assert rest == b""  # closed

    serve_home(home, check)


def test_an_old_matchs_page_is_rendered_once_while_spare_and_keeps_its_etag(
    home: Path, built: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An old match's page, asked for when the tree is full, was rendered for every request
    (one URL repeated cost a replay's walk each time) with an ETag new each second, so never a
    304: it is kept among the spare pages, rendered once."""
    monkeypatch.setattr("tournaments.arena.web._publish.MATCH_PAGES", 2)
    played = built.played
    walks: list[str] = []

    def counted(path: Path) -> Any:
        walks.append(str(path))
        return replay_views(path)

    monkeypatch.setattr("tournaments.arena.web._publish.replay_views", counted)

    async def check(site: Site) -> None:
        root = await record_all_two_kept(site, played)
        walks.clear()
        path = f"/matches/{_page(played[0])}/replay?seat=0"
        first = await site.get(path)
        await trio.sleep(1.1)  # a second later: the same ETag
        again = await site.get(path, if_none_match=first.headers["etag"])
        assert (first.status, again.status, len(walks)) == (200, 304, 1)
        assert match_ids_in(root) == set(played[2:])  # still not in the tree

    serve_home(home, check)


def test_a_kept_match_asked_for_again_keeps_its_place(home: Path, built: Home) -> None:
    """A kept match whose page was rendered again on request (its troubles changed) moved to
    the newest end, so the next recorded match pushed a later one out of the tree."""

    async def check(site: Site) -> None:
        publisher = published(site.service)
        with publisher._kept_lock:
            publisher._kept.clear()
        import tournaments.arena.web._publish as publish_module  # noqa: PLC0415

        saved, publish_module.MATCH_PAGES = publish_module.MATCH_PAGES, 3  # type: ignore[misc]
        try:
            for match in ("m1", "m2", "m3"):
                assert publisher._keep_match(match, asked=False)
            assert publisher._keep_match("m1", asked=True)
            assert publisher._keep_match("m4", asked=False)
            assert list(publisher._kept) == ["m2", "m3", "m4"]
        finally:
            publish_module.MATCH_PAGES = saved  # type: ignore[misc]

    serve_home(home, check)


def test_a_stop_does_not_wait_for_a_boards_bot_pages(
    home: Path, built: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pauses between a board's bot pages held a stop for four times the pages' work: a
    closed publisher stops at its next pause."""
    from tournaments.arena.web._pages import render_bot  # noqa: PLC0415 - to slow it down

    def slow(web: Any, store: Any, viewer: Any, ident: str, board: Any) -> Any:
        time.sleep(0.2)
        return render_bot(web, store, viewer, ident, board)

    monkeypatch.setattr("tournaments.arena.web._publish.render_bot", slow)

    async def check(site: Site) -> None:
        publisher, board = published(site.service), site.service.board
        assert len(board.rows) >= 3

        def shown() -> float:
            publisher._bot_pages.clear()
            began = time.perf_counter()
            publisher.board_shown(board)
            return time.perf_counter() - began

        def close_soon() -> None:
            time.sleep(0.3)
            publisher.close()

        closer = threading.Thread(target=close_soon)
        closer.start()
        taken = await trio.to_thread.run_sync(shown)
        closer.join()
        assert taken < 0.2 * len(board.rows) / PAGES_SHARE / 2, taken

    serve_home(home, check)


def test_the_door_lets_its_idle_connections_go_when_the_server_stops(
    home: Path, built: Home
) -> None:
    """A connection kept idle at the door held every stop for the whole grace (Hypercorn lets
    its idle ones go at once), and the door answered during it: the server stops at once."""

    async def main() -> None:
        arena = Arena(home)
        store = ArenaStore(arena.store_path)
        service = ArenaService(arena, store, ladder=False)
        service.intake = cast(Any, FakeIntake(service))
        stop, stopped = trio.Event(), trio.Event()
        async with trio.open_nursery() as nursery:
            await nursery.start(service.run)
            app = cast(Any, create_app(service))
            config = server_config("127.0.0.1", 0)

            async def serving(task_status: trio.TaskStatus[list[str]]) -> None:
                await serve_door(
                    app, app, config, shutdown_trigger=stop.wait, task_status=task_status
                )
                stopped.set()

            binds = await nursery.start(serving)
            port = int(binds[0].rpartition(":")[2])
            with trio.fail_after(30):
                while not service.board.at:
                    await trio.sleep(0.02)
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(b"GET / HTTP/1.1\r\nHost: arena\r\n\r\n")
            assert (await stream.receive_some(65536)).startswith(b"HTTP/1.1 200 OK")  # the door's
            stop.set()
            with trio.fail_after(GRACE_S / 2):
                await stopped.wait()
            await stream.aclose()
            nursery.cancel_scope.cancel()
        if isinstance(service.publisher, Published):
            service.publisher.close()
        store.close()

    trio.run(main)


def test_a_recorded_matchs_replays_are_rendered_in_a_process_of_their_own(
    home: Path, built: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The publishing thread rendered each recorded match's replays in the server's own
    interpreter (79% of it on a busy ladder, the web's requests waiting): they are rendered in
    the replays' process; here it would fail."""

    def here(path: Path) -> Any:
        raise AssertionError("rendered in the server's interpreter")

    monkeypatch.setattr("tournaments.arena.web._publish.replay_views", here)

    async def check(site: Site) -> None:
        root, publisher = published(site.service).tree.root, published(site.service)
        publisher.recorded([built.played[3]])
        await until((root / "matches" / built.played[3] / "replay-1.html").exists, "published")
        assert publisher._replays.started == 1
        assert publisher._replays.process is not None

    serve_home(home, check)
