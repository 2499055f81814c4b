"""The arena's web app, served for real (Hypercorn under trio, in-process) over a home holding
real match results: every page renders and escapes hostile text, every response carries the
security headers, and the defences (CSRF, ownership, revoked tokens, body limits, rate limits,
static files) hold."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import http.client
import json
import logging
import math
import re
import secrets
import shutil
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlencode

import pytest
import trio

from referee.faults import Fault, FaultKind
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog, stderr_path
from referee.rules import greedy_policy, patient_policy
from referee.seats import InProcessSeat
from tournaments.arena.accounts import new_token, token_digest
from tournaments.arena.ladder import LADDER, ladder_config
from tournaments.arena.server import server_config
from tournaments.arena.service import ArenaService, LiveMatch
from tournaments.arena.store import ArenaStore, EntrantState, RatingPoint
from tournaments.arena.web import (
    API_PER_MINUTE,
    CSP,
    FAILED_LOGINS_PER_MINUTE,
    FORM_BYTES,
    LOGINS_PER_MINUTE,
    REPLAY_CSP,
    SESSION_COOKIE,
    STREAMS_PER_CLIENT,
    UPLOADS_PER_MINUTE,
    Published,
    create_app,
    serve_door,
)
from tournaments.formats.records import MatchSummary
from tournaments.league import StoredLeague, match_id
from tournaments.registry import Arena
from tournaments.store import BotRow, MatchRow, MatchState, ResultRow

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'
HOSTILE = SCRIPT + IMG
"""Markup in every text a bot or an author gives."""
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
EVIL_AUTHOR = "mallory" + HOSTILE
BOTS = {"alpha": "alice", "beta": EVIL_AUTHOR, "gamma": "bob"}
"""Each bot's owner (``beta``'s author name is hostile: a store may hold one)."""


@dataclasses.dataclass
class Home:
    """A home with results, and what the tests need to know of it."""

    path: Path
    tokens: dict[str, str]
    played: list[str]
    """Matches with results (the first: alpha in seat 0 against beta, with the hostile parts)."""
    pending: str


def _play(path: Path, mid: str, seed: int, names: tuple[str, str]) -> MatchSummary:
    policies = {"alpha": greedy_policy, "beta": patient_policy, "gamma": greedy_policy}
    hello = [HOSTILE if name == "beta" else name for name in names]
    seats = (
        InProcessSeat(policies[names[0]], hello[0], "1.0"),
        InProcessSeat(policies[names[1]], hello[1], "1.0"),
    )

    async def main() -> MatchSummary:
        with MatchLog(path) as log:
            result = await play_match(seats, MatchConfig(mid, seed), log)
        summary = MatchSummary.of(result, path)
        return dataclasses.replace(
            summary, result=dataclasses.replace(summary.result, match_id=mid)
        )

    return trio.run(main)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Home:
    """Three bots, two duplicate pairs played in-process (four results), one pair pending."""
    home = tmp_path_factory.mktemp("web") / "home"
    arena = Arena(home)
    store = ArenaStore(arena.store_path)
    tokens = {}
    for author in sorted(set(BOTS.values())):
        store.add_author(author)
        tokens[author] = new_token()
        store.add_token(author, token_digest(tokens[author]))
    for name, author in BOTS.items():
        description = f"the {name} bot {HOSTILE}"
        store.add_bot(BotRow(name, "1.0", "h" * 64, home / name, author, description, time.time()))
        store.claim_name(name, author)
        store.enter(f"{name}@1.0", name)
    idents = [f"{name}@1.0" for name in BOTS]
    config = StoredLeague(ladder_config(idents, 1), tuple(idents)).to_json()
    played: list[str] = []
    legs: list[MatchRow] = []
    for index, (first, second) in enumerate(
        (("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma"))
    ):
        one, two = f"{first}@1.0", f"{second}@1.0"
        key = f"{one}|{two}"
        lead = match_id(LADDER, one, two, 0)
        legs += [
            MatchRow(lead, LADDER, key, 0, one, two, 100 + index, None, MatchState.PENDING, 0, ""),
            MatchRow(
                match_id(LADDER, one, two, 1),
                LADDER,
                key,
                1,
                two,
                one,
                100 + index,
                lead,
                MatchState.PENDING,
                0,
                "",
            ),
        ]
    store.save_league(LADDER, config, legs, b"s" * 32)
    logs = arena.logs_dir(LADDER)
    logs.mkdir(parents=True, exist_ok=True)
    for leg in legs[:4]:
        log = logs / f"{leg.match_id}.jsonl"
        names = (leg.seat0.split("@")[0], leg.seat1.split("@")[0])
        summary = _play(log, leg.match_id, leg.seed, names)
        if not played:  # the first: a hostile fault detail, and both seats' stderr kept
            hostile = Fault(0, FaultKind.PROTOCOL_VIOLATION, f"sent {HOSTILE}")
            result = dataclasses.replace(summary.result, faults=(*summary.faults, hostile))
            summary = dataclasses.replace(summary, result=result)
            stderr_path(log, 0).write_text(f"alpha's own stderr {HOSTILE}\n")
            stderr_path(log, 1).write_text(f"beta's own stderr {HOSTILE}\n")
        row = ResultRow(
            leg.match_id,
            LADDER,
            summary.winner,
            summary.end,
            "done",
            summary,
            str(log),
            (leg.seat0, leg.seat1),
            leg.duplicate_of,
        )
        assert store.record_result(row)
        played.append(leg.match_id)
    store.add_ratings(
        [
            RatingPoint("alpha@1.0", 1000.0 + i, 10.0 * i, 10.0 * i - 50, 10.0 * i + 50, i)
            for i in range(4)
        ]
    )
    store.set_entrant("gamma@1.0", EntrantState.SUSPENDED, f"suspended: {HOSTILE}")
    store.close()
    return Home(home, tokens, played, legs[4].match_id)


class FakeIntake:
    """Takes uploads without checking them (the intake's own tests check that)."""

    def __init__(self, service: ArenaService) -> None:
        self.service = service
        self.received: list[bytes] = []

    def receive(self, author: str, data: bytes) -> str:
        self.received.append(data)
        submission = f"sub-{len(self.received)}"
        self.service.store.add_submission(submission, author)
        return submission

    async def run(self) -> None:
        await trio.sleep_forever()


@dataclasses.dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def cookie(self, name: str) -> str | None:
        found = re.search(rf"{name}=([^;]*)", self.headers.get("set-cookie", ""))
        return None if found is None else found.group(1)


class Site:
    """The served app: its address, its service, and requests made from a worker thread."""

    def __init__(self, host: str, port: int, service: ArenaService, app: Any) -> None:
        self.host, self.port, self.service, self.app = host, port, service, app

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _fetch(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
            found: dict[str, str] = {}
            for name, value in response.getheaders():
                key = name.lower()
                found[key] = f"{found[key]}, {value}" if key in found else value
            return Reply(response.status, found, data)
        finally:
            connection.close()

    async def get(self, path: str, /, **headers: str) -> Reply:
        return await trio.to_thread.run_sync(self._fetch, "GET", path, None, _headers(headers))

    async def post(self, path: str, body: bytes = b"", /, **headers: str) -> Reply:
        return await trio.to_thread.run_sync(self._fetch, "POST", path, body, _headers(headers))

    async def form(
        self, path: str, fields: dict[str, str], cookie: str = "", origin: str | None = None
    ) -> Reply:
        headers = {
            "content-type": "application/x-www-form-urlencoded",
            "origin": self.origin if origin is None else origin,
        }
        if cookie:
            headers["cookie"] = cookie
        return await self.post(path, urlencode(fields).encode(), **headers)

    async def login(self, token: str) -> str:
        """Log in through the form; returns the session's ``Cookie`` header."""
        page = await self.get("/login")
        nonce = page.cookie("gin_login")
        assert nonce
        csrf = _csrf(page.text)
        reply = await self.form(
            "/login", {"token": token, "csrf": csrf}, cookie=f"gin_login={nonce}"
        )
        assert reply.status == 303, reply.text
        session = reply.cookie(SESSION_COOKIE)
        assert session
        return f"{SESSION_COOKIE}={session}"


def _headers(given: dict[str, str]) -> dict[str, str]:
    return {name.replace("_", "-"): value for name, value in given.items()}


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]*)"', html)
    assert found, html
    return found.group(1)


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def _page(ident: str) -> str:
    return quote(ident, safe="@~")


def run_site(built: Home, tmp_path: Path, check: Callable[[Site], Awaitable[None]]) -> None:
    """Serve a copy of the built home and run ``check`` against it."""
    home = tmp_path / "home"
    shutil.copytree(built.path, home)
    serve_home(home, check)


def serve_home(home: Path, check: Callable[[Site], Awaitable[None]]) -> None:
    """Serve the home at ``home`` (its published tree as it is) and run ``check`` against it;
    the publishing thread is stopped after."""

    async def main() -> None:
        arena = Arena(home)
        store = ArenaStore(arena.store_path)
        service = ArenaService(arena, store, ladder=False)
        service.intake = cast(Any, FakeIntake(service))
        async with trio.open_nursery() as nursery:
            await nursery.start(service.run)
            app = cast(Any, create_app(service))
            config = server_config("127.0.0.1", 0)
            door = partial(serve_door, app, app, config, shutdown_trigger=trio.sleep_forever)
            binds = await nursery.start(door)  # the door before Hypercorn, as gin arena serve
            host, _, port = binds[0].removeprefix("http://").rpartition(":")
            with trio.fail_after(30):
                while not service.board.at:
                    await trio.sleep(0.02)
            await check(Site(host, int(port), service, app))
            nursery.cancel_scope.cancel()
        if isinstance(service.publisher, Published):
            service.publisher.close()
        store.close()

    trio.run(main)


@pytest.fixture
def site(built: Home, tmp_path: Path) -> Callable[[Callable[[Site], Awaitable[None]]], None]:
    return lambda check: run_site(built, tmp_path, check)


def assert_escaped(text: str) -> None:
    """No hostile markup got through as markup."""
    assert "<script>alert" not in text
    assert "<img src=x" not in text
    assert "onerror=alert(2)>" not in text.replace("&gt;", "")  # not as a live attribute


# --- pages ----------------------------------------------------------------------------------------


def test_a_first_leg_shows_no_deals_while_its_mirror_is_to_play(site: Any, built: Home) -> None:
    """The two legs of a pair are dealt the same cards: the first's log and replay (its seed,
    every deck) wait until the second has its result, then are served as any other."""
    first, second = built.played[:2]

    async def check(site: Site) -> None:
        store = site.service.store
        row = store.db.execute("SELECT * FROM results WHERE match_id = ?", (second,)).fetchone()
        store.db.execute("DELETE FROM results WHERE match_id = ?", (second,))
        store.db.execute("UPDATE matches SET state = 'running' WHERE match_id = ?", (second,))
        page = _page(first)
        for path in (f"/matches/{page}/log.jsonl", f"/matches/{page}/replay?seat=0"):
            held = await site.get(path)
            assert held.status == 404, path
            assert "held until the other leg of its pair" in held.text
        match = await site.get(f"/matches/{page}")
        assert match.status == 200
        assert "held until the other leg of its pair" in match.text
        assert "waiting for its mirror leg" in match.text
        assert f"/matches/{page}/log.jsonl" not in match.text
        assert "games won by" not in match.text  # nor its result, faults or stderr
        assert "<h2>Faults</h2>" not in match.text
        assert (await site.get(f"/matches/{_page(second)}")).status == 200
        store.db.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", tuple(row))
        store.db.execute("UPDATE matches SET state = 'done' WHERE match_id = ?", (second,))
        assert (await site.get(f"/matches/{page}/log.jsonl")).status == 200
        assert (await site.get(f"/matches/{page}/replay")).status == 200
        released = (await site.get(f"/matches/{page}")).text
        assert f"/matches/{page}/log.jsonl" in released
        assert "games won by" in released

    site(check)


def test_every_page_renders_and_escapes_hostile_text(site: Any, built: Home) -> None:
    first = built.played[0]

    async def check(site: Site) -> None:
        board = await site.get("/")
        assert board.status == 200
        assert "alpha@1.0" in board.text
        assert "beta@1.0" in board.text
        assert ESCAPED in board.text  # the hostile author and the suspension's reason, shown
        assert_escaped(board.text)
        assert "suspended" in board.text

        beta = await site.get("/bots/beta@1.0")
        assert beta.status == 200
        assert f"the beta bot {ESCAPED}" in beta.text  # its description
        assert_escaped(beta.text)

        alpha = await site.get("/bots/alpha@1.0")
        assert alpha.status == 200
        assert "<svg" in alpha.text
        assert "<polyline" in alpha.text
        assert f"sent {ESCAPED}" in alpha.text  # its fault's detail
        assert "beta@1.0" in alpha.text  # a line against its opponent
        assert_escaped(alpha.text)

        match = await site.get(f"/matches/{_page(first)}")
        assert match.status == 200
        assert f"sent {ESCAPED}" in match.text  # the fault's detail
        assert ESCAPED in match.text  # beta's hello name
        assert 'sandbox="allow-scripts"' in match.text
        assert "stderr" not in match.text.lower().replace("/stderr/", "")  # no one logged in
        assert_escaped(match.text)

        pending = await site.get(f"/matches/{_page(built.pending)}")
        assert pending.status == 200
        assert "Not played yet: pending" in pending.text

        for path in ("/live", "/login", "/standings.csv", "/standings.json", "/api/leaderboard"):
            reply = await site.get(path)
            assert reply.status == 200, path
        assert '<script src="/static/live.js"' in (await site.get("/live")).text

    site(check)


def test_the_owner_alone_sees_a_seats_stderr_escaped(site: Any, built: Home) -> None:
    first = built.played[0]  # alpha (alice) in seat 0, beta (the hostile author) in seat 1

    async def check(site: Site) -> None:
        cookie = await site.login(built.tokens[EVIL_AUTHOR])
        page = await site.get(f"/matches/{_page(first)}", cookie=cookie)
        assert f"beta&#39;s own stderr {ESCAPED}" in page.text
        assert "alpha&#39;s own stderr" not in page.text
        assert_escaped(page.text)

        mine = await site.get(f"/api/matches/{_page(first)}/stderr/1", cookie=cookie)
        assert mine.status == 200
        assert mine.headers["content-type"].startswith("text/plain")
        theirs = await site.get(f"/api/matches/{_page(first)}/stderr/0", cookie=cookie)
        assert theirs.status == 403
        by_token = await site.get(
            f"/api/matches/{_page(first)}/stderr/0", **_bearer(built.tokens["bob"])
        )
        assert by_token.status == 403
        assert "stderr" not in by_token.text.replace("stderr/", "")
        owner = await site.get(
            f"/api/matches/{_page(first)}/stderr/0", **_bearer(built.tokens["alice"])
        )
        assert owner.status == 200
        assert "alpha's own stderr" in owner.text
        anonymous = await site.get(f"/api/matches/{_page(first)}/stderr/0")
        assert anonymous.status == 401

    site(check)


def test_the_replay_pages_have_their_own_policy_and_a_seat_sees_its_view(
    site: Any, built: Home
) -> None:
    first = built.played[0]

    async def check(site: Site) -> None:
        referee = await site.get(f"/matches/{_page(first)}/replay")
        assert referee.status == 200
        assert referee.headers["content-security-policy"] == REPLAY_CSP
        seat = await site.get(f"/matches/{_page(first)}/replay?seat=0")
        assert seat.status == 200
        assert seat.body != referee.body
        again = await site.get(f"/matches/{_page(first)}/replay?seat=0")
        assert again.body == seat.body  # the cache gives the same page
        assert (await site.get(f"/matches/{_page(first)}/replay?seat=2")).status == 404
        assert (await site.get(f"/matches/{_page(built.pending)}/replay")).status == 404
        log = await site.get(f"/matches/{_page(first)}/log.jsonl")
        assert log.status == 200
        assert log.body.startswith(b"{")

    site(check)


def test_every_response_has_the_security_headers(site: Any, built: Home, tmp_path: Path) -> None:
    async def check(site: Site) -> None:
        paths = ["/", "/live", "/login", "/bots/alpha@1.0", "/static/arena.css", "/nowhere"]
        replies = [await site.get(path) for path in paths]
        replies.append(await site.get("/api/leaderboard"))
        replies.append(await site.post("/"))  # 405
        replies.append(await site.post("/api/bots"))  # 401
        # a broken log: the server's error page, without a traceback
        (tmp_path / "home" / "logs" / LADDER / f"{built.played[1]}.jsonl").write_text("x")
        broken = await site.get(f"/matches/{_page(built.played[1])}/replay")
        assert broken.status == 500
        assert "Traceback" not in broken.text
        assert "File " not in broken.text
        replies.append(broken)
        assert [r.status for r in replies[5:9]] == [404, 200, 405, 401]
        for reply in replies:
            assert reply.headers["x-content-type-options"] == "nosniff"
            assert reply.headers["x-frame-options"] == "SAMEORIGIN"
            assert "referrer-policy" in reply.headers
            assert reply.headers["content-security-policy"] == CSP
        assert "Traceback" not in replies[5].text

    site(check)


# --- sessions, CSRF, ownership ------------------------------------------------------------------


def test_logging_in_gives_a_hardened_cookie_and_a_forged_one_is_nobody(
    site: Any, built: Home
) -> None:
    async def check(site: Site) -> None:
        page = await site.get("/login")
        reply = await site.form(
            "/login",
            {"token": built.tokens["alice"], "csrf": _csrf(page.text)},
            cookie=f"gin_login={page.cookie('gin_login')}",
        )
        assert reply.status == 303
        cookie = reply.headers["set-cookie"]
        assert "HttpOnly" in cookie
        assert "SameSite=strict" in cookie.replace("Strict", "strict")
        assert "Secure" not in cookie  # plain http here
        session = f"{SESSION_COOKIE}={reply.cookie(SESSION_COOKIE)}"
        assert "logged in as" in (await site.get("/", cookie=session)).text
        forged = session[:-3] + ("AAA" if not session.endswith("AAA") else "BBB")
        assert "logged in as" not in (await site.get("/", cookie=forged)).text
        wrong = await site.form(
            "/login",
            {"token": new_token(), "csrf": _csrf(page.text)},
            cookie=f"gin_login={page.cookie('gin_login')}",
        )
        assert wrong.status == 401
        assert SESSION_COOKIE not in wrong.headers.get("set-cookie", "")

    site(check)


def test_forms_without_the_csrf_token_or_from_elsewhere_are_refused(site: Any, built: Home) -> None:
    async def check(site: Site) -> None:
        alice = await site.login(built.tokens["alice"])
        bob = await site.login(built.tokens["bob"])
        page = await site.get("/bots/alpha@1.0", cookie=alice)
        assert "Retire" in page.text
        token = _csrf(page.text)
        bobs = _csrf((await site.get("/", cookie=bob)).text)
        retire = "/bots/alpha@1.0/retire"
        assert (await site.form(retire, {}, cookie=alice)).status == 403
        assert (await site.form(retire, {"csrf": bobs}, cookie=alice)).status == 403
        elsewhere = await site.form(retire, {"csrf": token}, alice, origin="http://evil.example")
        assert elsewhere.status == 403
        login_page = await site.get("/login")
        no_csrf = await site.form(
            "/login",
            {"token": built.tokens["alice"]},
            cookie=f"gin_login={login_page.cookie('gin_login')}",
        )
        assert no_csrf.status == 403
        assert (await site.form("/logout", {}, cookie=alice)).status == 403
        assert site.service.store.entrant("alpha@1.0").state == EntrantState.ACTIVE  # type: ignore[union-attr]
        done = await site.form(retire, {"csrf": token}, cookie=alice)
        assert done.status == 303
        assert site.service.store.entrant("alpha@1.0").state == EntrantState.RETIRED  # type: ignore[union-attr]
        out = await site.form("/logout", {"csrf": token}, cookie=alice)
        assert out.status == 303
        assert f'{SESSION_COOKIE}=""' in out.headers["set-cookie"]

    site(check)


def test_another_author_cannot_retire_your_bot(site: Any, built: Home) -> None:
    async def check(site: Site) -> None:
        bob = await site.login(built.tokens["bob"])
        page = await site.get("/bots/alpha@1.0", cookie=bob)
        assert "Retire" not in page.text
        by_form = await site.form("/bots/alpha@1.0/retire", {"csrf": _csrf(page.text)}, bob)
        assert by_form.status == 403
        by_api = await site.post("/api/bots/alpha@1.0/retire", **_bearer(built.tokens["bob"]))
        assert by_api.status == 403
        assert "error" in json.loads(by_api.body)
        assert site.service.store.entrant("alpha@1.0").state == EntrantState.ACTIVE  # type: ignore[union-attr]
        unknown = await site.post("/api/bots/nobody@1.0/retire", **_bearer(built.tokens["bob"]))
        assert unknown.status == 404
        mine = await site.post("/api/bots/alpha@1.0/retire", **_bearer(built.tokens["alice"]))
        assert mine.status == 200
        assert json.loads(mine.body) == {"bot": "alpha@1.0", "state": "retired"}

    site(check)


def test_a_revoked_token_is_refused_and_its_sessions_end(site: Any, built: Home) -> None:
    async def check(site: Site) -> None:
        token = built.tokens["alice"]
        session = await site.login(token)
        assert "logged in as" in (await site.get("/", cookie=session)).text
        assert (await site.get("/api/submissions/none", **_bearer(token))).status == 404
        site.service.store.revoke_tokens("alice")
        assert (await site.get("/api/submissions/none", **_bearer(token))).status == 401
        assert (await site.post("/api/bots/alpha@1.0/retire", **_bearer(token))).status == 401
        assert "logged in as" not in (await site.get("/", cookie=session)).text
        page = await site.get("/bots/alpha@1.0", cookie=session)
        assert "Retire" not in page.text
        retire = await site.form("/bots/alpha@1.0/retire", {"csrf": "x"}, cookie=session)
        assert retire.status == 401

    site(check)


def test_logging_out_ends_the_session_and_the_old_cookie_is_nobody(site: Any, built: Home) -> None:
    async def check(site: Site) -> None:
        session = await site.login(built.tokens["alice"])
        other = await site.login(built.tokens["alice"])  # another browser of hers
        page = await site.get("/bots/alpha@1.0", cookie=session)
        assert "logged in as" in page.text
        token = _csrf(page.text)
        out = await site.form("/logout", {"csrf": token}, cookie=session)
        assert out.status == 303
        assert f'{SESSION_COOKIE}=""' in out.headers["set-cookie"]
        # a copy of the cookie kept elsewhere is nobody now: the server ended the session
        assert "logged in as" not in (await site.get("/", cookie=session)).text
        retire = await site.form("/bots/alpha@1.0/retire", {"csrf": token}, cookie=session)
        assert retire.status == 401
        assert site.service.store.entrant("alpha@1.0").state == EntrantState.ACTIVE  # type: ignore[union-attr]
        assert "logged in as" in (await site.get("/", cookie=other)).text  # only that one ended
        again = await site.form("/logout", {"csrf": token}, cookie=session)
        assert again.status == 303  # an ended session: the cookie is cleared, nothing else

    site(check)


def test_a_session_cannot_be_made_from_what_the_store_holds(site: Any, built: Home) -> None:
    async def check(site: Site) -> None:
        session = await site.login(built.tokens["alice"])
        value = session.removeprefix(f"{SESSION_COOKIE}=")
        assert len(value) >= 43  # secrets.token_urlsafe(32)
        store = site.service.store
        rows = store.db.execute("SELECT * FROM sessions").fetchall()
        assert rows
        assert all(value not in str(tuple(row)) for row in rows)  # only its digest is kept
        guesses = [
            secrets.token_urlsafe(32),
            value[:-3] + ("AAA" if not value.endswith("AAA") else "BBB"),
            *(str(row["digest"]) for row in rows),
            *(str(row["token"]) for row in rows),
            "x" * 10_000,
        ]
        # the old signed cookie, made with the key the store holds: no longer a session
        body = base64.urlsafe_b64encode(
            json.dumps(["alice", token_digest(built.tokens["alice"]), int(time.time())]).encode()
        )
        body_text = body.decode().rstrip("=")
        mac = hmac.new(store.secret("web"), f"session:{body_text}".encode(), hashlib.sha256)
        guesses.append(f"{body_text}.{base64.urlsafe_b64encode(mac.digest()).decode().rstrip('=')}")
        for guess in guesses:
            page = await site.get("/", cookie=f"{SESSION_COOKIE}={guess}")
            assert page.status == 200
            assert "logged in as" not in page.text, guess
        assert "logged in as" in (await site.get("/", cookie=session)).text

    site(check)


# --- the API ------------------------------------------------------------------------------------


def test_uploads_and_submissions_are_the_authors_own(site: Any, built: Home) -> None:
    async def check(site: Site) -> None:
        body = b"\x1f\x8b fake tar"
        headers = {"content_type": "application/gzip", **_bearer(built.tokens["alice"])}
        reply = await site.post("/api/bots", body, **headers)
        assert reply.status == 202
        answer = json.loads(reply.body)
        assert answer["state"] == "queued"
        assert answer["url"] == f"/api/submissions/{answer['id']}"
        assert cast(FakeIntake, site.service.intake).received == [body]
        mine = await site.get(answer["url"], **_bearer(built.tokens["alice"]))
        assert mine.status == 200
        assert json.loads(mine.body)["state"] == "queued"
        theirs = await site.get(answer["url"], **_bearer(built.tokens["bob"]))
        assert theirs.status == 404
        anonymous = await site.post("/api/bots", body, content_type="application/gzip")
        assert anonymous.status == 401
        board = json.loads((await site.get("/api/leaderboard")).body)
        assert {"at", "series", "approximate", "bots"} <= set(board)
        assert board["series"] == 4

    site(check)


def _raw_post(site: Site, path: str, head: dict[str, str], sent: bytes) -> bytes:
    """Send a request's head and only ``sent`` of its body; what the server answered."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {site.host}:{site.port}"]
    lines += [f"{name}: {value}" for name, value in head.items()]
    with socket.create_connection((site.host, site.port), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + sent)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


def test_an_oversized_body_is_refused_before_it_is_read(site: Any, built: Home) -> None:
    async def check(site: Site) -> None:
        head = {
            "Authorization": f"Bearer {built.tokens['alice']}",
            "Content-Type": "application/gzip",
            "Content-Length": str(200 * 1024 * 1024),
        }
        answer = await trio.to_thread.run_sync(_raw_post, site, "/api/bots", head, b"\x00" * 65536)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert cast(FakeIntake, site.service.intake).received == []
        # a form streamed in chunks (no length given) is cut off where it passes the limit
        chunks = iter([b"token=" + b"a" * 1024] * (FORM_BYTES // 1024 + 2))
        reply = await trio.to_thread.run_sync(
            _chunked, site, "/login", chunks, {"content-type": "application/x-www-form-urlencoded"}
        )
        assert reply == 413

    site(check)


def test_a_body_sent_slowly_is_refused_and_its_connection_let_go(
    site: Any, built: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slowloris body (10 of 100 bytes, then nothing) gets 408 at its deadline, not after the
    client gives up; a form that needs no body (logging out without a session) is answered
    without waiting for one: 800 slow bodies to /logout held every connection for 60 s."""
    monkeypatch.setattr("tournaments.arena.web._hardening.BODY_GRACE_S", 1.0)
    head = {"Content-Type": "application/x-www-form-urlencoded", "Content-Length": "100"}

    async def check(site: Site) -> None:
        start = time.monotonic()
        answer = await trio.to_thread.run_sync(_raw_post, site, "/login", head, b"token=aaaa")
        took = time.monotonic() - start
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert 0.9 < took < 10, took
        start = time.monotonic()
        answer = await trio.to_thread.run_sync(_raw_post, site, "/logout", head, b"token=aaaa")
        assert answer.startswith(b"HTTP/1.1 303"), answer[:200]
        assert time.monotonic() - start < 0.9

    site(check)


def test_a_client_gone_mid_upload_is_one_line_of_the_log(
    site: Any, built: Home, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that hangs up with its upload half sent leaves one info line, no traceback
    (each wrote about 85 lines before)."""
    head = {
        "Host": "x",
        "Authorization": f"Bearer {built.tokens['alice']}",
        "Content-Type": "application/gzip",
        "Content-Length": "100000",
    }

    def hang_up(site: Site) -> None:
        lines = ["POST /api/bots HTTP/1.1", *(f"{k}: {v}" for k, v in head.items())]
        with socket.create_connection((site.host, site.port), timeout=30) as sock:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + b"\x1f\x8b" * 500)
            time.sleep(0.2)  # the server is reading the body when the client goes

    async def check(site: Site) -> None:
        with caplog.at_level(logging.INFO, logger="gin.arena.web"):
            await trio.to_thread.run_sync(hang_up, site)
            with trio.fail_after(10):
                while not any("client gone" in r.getMessage() for r in caplog.records):
                    await trio.sleep(0.05)
        assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
        assert cast(FakeIntake, site.service.intake).received == []

    site(check)


def _chunked(site: Site, path: str, chunks: Iterator[bytes], headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection(site.host, site.port, timeout=30)
    try:
        connection.request("POST", path, body=chunks, headers=headers, encode_chunked=True)
        return connection.getresponse().status
    finally:
        connection.close()


async def assert_limited(send: Callable[[], Awaitable[Reply]], per_minute: int, ok: int) -> Reply:
    """Send until refused: the first refusal is a 429 after ``per_minute`` answers ``ok`` (and
    the few the bucket refilled meanwhile); returns it."""
    start = time.monotonic()
    replies: list[Reply] = []
    while len(replies) < 2 * per_minute + 5:
        replies.append(await send())
        if replies[-1].status != ok:
            break
    refilled = (time.monotonic() - start) * per_minute / 60
    assert replies[-1].status == 429, [reply.status for reply in replies]
    assert per_minute <= len(replies) - 1 <= per_minute + math.ceil(refilled)
    return replies[-1]


def test_requests_over_the_rate_limits_get_429(site: Any, built: Home) -> None:
    async def check(site: Site) -> None:
        headers = {"content_type": "application/gzip", **_bearer(built.tokens["bob"])}
        limited = await assert_limited(
            partial(site.post, "/api/bots", b"x", **headers), UPLOADS_PER_MINUTE, 202
        )
        assert int(limited.headers["retry-after"]) >= 1
        assert limited.headers["content-type"] == "application/json"
        other = {"content_type": "application/gzip", **_bearer(built.tokens["alice"])}
        assert (await site.post("/api/bots", b"x", **other)).status == 202  # per token
        await assert_limited(partial(site.form, "/login", {"token": "x"}), LOGINS_PER_MINUTE, 403)
        # (refused for its CSRF token: not a failed login, so the limit of all logins holds)

        async def guess() -> Reply:
            return await site.post("/api/bots", b"x", **_bearer(new_token()))

        await assert_limited(guess, UPLOADS_PER_MINUTE, 401)  # guessing tokens is limited too
        alice = _bearer(built.tokens["alice"])
        asked = partial(site.get, "/api/submissions/none", **alice)
        await assert_limited(asked, API_PER_MINUTE, 404)  # (the leaderboard is a file: not)
        # with a session cookie, the leaderboard is the app's, and counted per address
        counted = partial(site.get, "/api/leaderboard", cookie="gin_session=forged")
        await assert_limited(counted, API_PER_MINUTE, 200)

    site(check)


def test_no_path_reaches_the_servers_files(site: Any) -> None:
    async def check(site: Site) -> None:
        assert (await site.get("/static/arena.css")).status == 200
        attempts = [
            "/static/../web.py",
            "/static/../../arena/web.py",
            "/static/%2e%2e/web.py",
            "/static/%2e%2e%2fweb.py",
            "/static/..%2f..%2fservice.py",
            "/static/arena.css/../../web.py",
            "/static/web.py",
            "/static/%2fetc%2fpasswd",
            "/static/templates/base.html",
            "/templates/base.html",
        ]
        for path in attempts:
            reply = await site.get(path)
            assert reply.status == 404, path
            assert b"def " not in reply.body, path
            assert b"{%" not in reply.body, path

    site(check)


def test_a_live_page_listener_sees_published_events(site: Any) -> None:
    async def check(site: Site) -> None:
        def listen() -> list[str]:
            connection = http.client.HTTPConnection(site.host, site.port, timeout=30)
            connection.request("GET", "/events")
            response = connection.getresponse()
            assert response.status == 200
            assert response.getheader("content-type", "").startswith("text/event-stream")
            lines = []
            while True:
                line = response.readline().decode()
                lines.append(line)
                if line.startswith("data:") and "published" in line:
                    connection.close()
                    return lines
                if line.startswith(": live"):
                    trio.from_thread.run_sync(
                        site.service.events.publish, "finished", {"match": "published<x>"}
                    )

        lines = await trio.to_thread.run_sync(listen)
        assert "event: finished\n" in lines
        data = next(line for line in lines if line.startswith("data:"))
        assert json.loads(data.removeprefix("data:")) == {"match": "published<x>"}
        assert any(line.startswith("id: ") for line in lines)

    site(check)


def test_one_address_cannot_hold_every_event_stream(site: Any) -> None:
    async def check(site: Site) -> None:
        def request(source: str) -> socket.socket:
            held = socket.create_connection((site.host, site.port), 30, (source, 0))
            held.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
            return held

        def status_of(source: str) -> tuple[int, str | None]:
            connection = http.client.HTTPConnection(
                site.host, site.port, timeout=30, source_address=(source, 0)
            )
            try:
                connection.request("GET", "/events")
                response = connection.getresponse()
                return response.status, response.getheader("retry-after")
            finally:
                connection.close()

        async def listeners_reach(count: int) -> None:
            with trio.fail_after(20):
                while site.service.events.listeners != count:
                    await trio.sleep(0.02)

        held = [request("127.0.0.1") for _ in range(STREAMS_PER_CLIENT)]  # never read
        try:
            await listeners_reach(STREAMS_PER_CLIENT)
            status, retry = await trio.to_thread.run_sync(status_of, "127.0.0.1")
            assert status == 429
            assert retry is not None
            assert int(retry) >= 1
            assert site.service.events.listeners == STREAMS_PER_CLIENT
            assert (await trio.to_thread.run_sync(status_of, "127.0.0.2"))[0] == 200
            held.pop().close()  # a stream closed gives its place back
            await listeners_reach(STREAMS_PER_CLIENT - 1)
            with trio.fail_after(20):
                while (await trio.to_thread.run_sync(status_of, "127.0.0.1"))[0] != 200:
                    await trio.sleep(0.05)
        finally:
            for one in held:
                one.close()

    site(check)


def test_a_class_of_60_behind_one_address_logs_in_and_watches(
    site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 students behind one NAT (one address): each logs in and opens the live page, which
    a limit per address (10 logins a minute, 6 streams) refused after the sixth. Visitors from
    that address still get 6 streams; visitors from anywhere get their share of all streams
    (here 3) and no more, and an author gets in past it; an address that fails 10 logins a
    minute is stopped before its form is read, a valid token and all."""
    monkeypatch.setattr("tournaments.arena.web._auth.VISITOR_STREAMS", 3)

    def stream(source: str, cookie: str = "") -> socket.socket:
        held = socket.create_connection((site_of.host, site_of.port), 30, (source, 0))
        extra = f"Cookie: {cookie}\r\n" if cookie else ""
        held.sendall(f"GET /events HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
        return held

    def status(held: socket.socket) -> int:
        head = b""
        while b"\r\n" not in head:
            chunk = held.recv(1024)
            if not chunk:
                break
            head += chunk
        return int(head.split(b" ")[1])

    site_of: Site

    async def check(site: Site) -> None:
        nonlocal site_of
        site_of = site
        store = site.service.store
        tokens = []
        for index in range(60):
            store.add_author(f"student{index:02d}")
            tokens.append(new_token())
            store.add_token(f"student{index:02d}", token_digest(tokens[-1]))
        cookies = [await site.login(token) for token in tokens]  # 60 logins in a few seconds
        held: list[socket.socket] = []
        try:
            for cookie in cookies:
                held.append(await trio.to_thread.run_sync(stream, "127.0.0.1", cookie))
                assert await trio.to_thread.run_sync(status, held[-1]) == 200
            assert site.service.events.listeners == 60
            visitors = [await trio.to_thread.run_sync(stream, f"127.0.0.{n}") for n in (2, 3, 4)]
            held += visitors
            assert [await trio.to_thread.run_sync(status, one) for one in visitors] == [200] * 3
            late = await trio.to_thread.run_sync(stream, "127.0.0.5")
            held.append(late)
            assert await trio.to_thread.run_sync(status, late) == 503  # the visitors' share
            author = await trio.to_thread.run_sync(stream, "127.0.0.5", cookies[0])
            held.append(author)
            assert await trio.to_thread.run_sync(status, author) == 200  # an author's 2nd
        finally:
            for one in held:
                one.close()
        for _ in range(FAILED_LOGINS_PER_MINUTE):
            page = await site.get("/login")
            fields = {"token": new_token(), "csrf": _csrf(page.text)}
            nonce = f"gin_login={page.cookie('gin_login')}"
            assert (await site.form("/login", fields, cookie=nonce)).status == 401
        page = await site.get("/login")
        fields = {"token": tokens[0], "csrf": _csrf(page.text)}
        nonce = f"gin_login={page.cookie('gin_login')}"
        assert (await site.form("/login", fields, cookie=nonce)).status == 429

    site(check)


def test_an_ipv6_client_counts_by_its_slash_64(site: Any) -> None:
    async def check(site: Site) -> None:
        statuses: dict[str, list[int]] = {}

        async def stream(client: str) -> None:
            scope = {
                "type": "http",
                "asgi": {"version": "3.0"},
                "http_version": "1.1",
                "method": "GET",
                "scheme": "http",
                "path": "/events",
                "raw_path": b"/events",
                "query_string": b"",
                "root_path": "",
                "headers": [(b"host", b"arena.example")],
                "client": (client, 5000),
                "server": ("arena.example", 80),
            }

            async def receive() -> dict[str, Any]:
                await trio.sleep_forever()
                raise AssertionError  # never reached

            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    statuses.setdefault(client, []).append(message["status"])

            await site.app(scope, receive, send)

        async def answered(count: int) -> None:
            with trio.fail_after(20):
                while sum(len(found) for found in statuses.values()) < count:
                    await trio.sleep(0.01)

        async with trio.open_nursery() as nursery:
            for index in range(STREAMS_PER_CLIENT):
                nursery.start_soon(stream, f"2001:db8::{index + 1:x}")
            await answered(STREAMS_PER_CLIENT)
            nursery.start_soon(stream, "2001:db8::ffff:1")  # the same /64
            await answered(STREAMS_PER_CLIENT + 1)
            assert statuses["2001:db8::ffff:1"] == [429]
            nursery.start_soon(stream, "2001:db8:0:1::1")  # another /64
            await answered(STREAMS_PER_CLIENT + 2)
            assert statuses["2001:db8:0:1::1"] == [200]
            nursery.cancel_scope.cancel()

    site(check)


async def _asgi_get(app: Any, path: str, scheme: str) -> list[tuple[bytes, bytes]]:
    """Call the app directly (as a TLS-terminating server would); the response's headers."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"arena.example")],
        "client": ("127.0.0.1", 5000),
        "server": ("arena.example", 443),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return list(sent[0]["headers"])


def test_cookies_are_secure_over_https(site: Any) -> None:
    async def check(site: Site) -> None:
        over_https = await _asgi_get(site.app, "/login", "https")
        cookie = dict(over_https)[b"set-cookie"].decode()
        assert "Secure" in cookie
        assert "HttpOnly" in cookie
        over_http = await _asgi_get(site.app, "/login", "http")
        assert "Secure" not in dict(over_http)[b"set-cookie"].decode()

    site(check)


def test_the_live_page_shows_matches_in_flight_and_a_bots_name_finds_its_latest(
    site: Any, built: Home
) -> None:
    async def check(site: Site) -> None:
        running = LiveMatch(built.pending, ("beta@1.0", "gamma@1.0"), time.time())
        site.service.live = lambda: [running]  # type: ignore[method-assign]
        live = await site.get("/live")
        assert live.status == 200
        assert f'href="/matches/{_page(built.pending)}"' in live.text
        assert "No match is being played" not in live.text
        latest = await site.get("/bots/alpha")
        assert latest.status == 200
        assert "<h1>alpha@1.0</h1>" in latest.text
        assert (await site.get("/bots/nobody@1.0")).status == 404
        assert (await site.get("/matches/nothing")).status == 404

    site(check)


def test_the_event_stream_pings_and_resumes_after_the_last_event_seen(
    site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tournaments.arena.web._live as live_module  # noqa: PLC0415 - to shorten the ping

    monkeypatch.setattr(live_module, "PING_S", 0.05)

    async def check(site: Site) -> None:
        missed = site.service.events.publish("pair", {"matches": ["m1"], "seats": ["a", "b"]})

        def resume() -> list[str]:
            connection = http.client.HTTPConnection(site.host, site.port, timeout=30)
            headers = {"last-event-id": str(missed.id - 1)}
            connection.request("GET", "/events", headers=headers)
            response = connection.getresponse()
            lines: list[str] = []
            while not lines or lines[-1] != ": ping\n":
                lines.append(response.readline().decode())
            connection.close()
            return lines

        lines = await trio.to_thread.run_sync(resume)
        assert "event: pair\n" in lines
        assert f"id: {missed.id}\n" in lines

    site(check)


def test_a_stopped_ladder_is_said_on_every_page(site: Any) -> None:
    async def check(site: Site) -> None:
        site.service.ladder_error = f"the ladder stopped: the disk is full {HOSTILE}"
        for path in ("/", "/live", "/bots/alpha@1.0"):
            page = await site.get(path)
            assert page.status == 200
            assert f"the ladder stopped: the disk is full {ESCAPED}" in page.text
            assert_escaped(page.text)

    site(check)


def _with_evidence(log: Path, secret: str) -> None:
    """Put in place of a match's log a real one whose seat-0 faults have ``secret`` in their
    evidence (in the fault records and the result alike, as the referee writes them)."""
    golden = Path(__file__).resolve().parent / "golden" / "format3-strikes.jsonl"
    lines = []
    for line in golden.read_text().splitlines():
        record = json.loads(line)
        faults = [record] if record["type"] == "fault" else record.get("faults", [])
        if record["type"] in ("fault", "result"):
            for fault in faults:
                if fault["seat"] == 0:
                    fault["evidence"] = {**fault["evidence"], "stderr_tail": secret}
        lines.append(json.dumps(record, separators=(",", ":")))
    log.write_text("\n".join(lines) + "\n")


def test_fault_evidence_is_the_seat_owners_alone_in_the_log_and_the_replay(
    site: Any, built: Home
) -> None:
    """The log download and the replay are public, but a fault's evidence (its stderr tail)
    is shown only to the owner of that seat's bot."""
    first = built.played[0]  # alpha (alice) in seat 0 faults; beta in seat 1
    secret = "PRIVATE-STDERR my_password=hunter2"

    async def check(site: Site) -> None:
        result = site.service.store.result(first)
        assert result is not None
        _with_evidence(Path(result.log_path), secret)
        log, replay = f"/matches/{_page(first)}/log.jsonl", f"/matches/{_page(first)}/replay"
        for headers in ({}, _bearer(built.tokens["bob"]), _bearer(built.tokens[EVIL_AUTHOR])):
            for path in (log, replay):
                page = await site.get(path, **headers)
                assert page.status == 200
                assert secret not in page.text
        assert "fault" in (await site.get(log)).text
        owner = await site.get(log, **_bearer(built.tokens["alice"]))
        assert secret in owner.text
        cookie = await site.login(built.tokens["alice"])
        assert secret in (await site.get(replay, cookie=cookie)).text
        assert secret not in (await site.get(replay)).text  # not the owner's page, cached

    site(check)


def test_the_leaderboard_kept_for_visitors_follows_the_board_and_the_troubles(
    site: Any, built: Home
) -> None:
    async def check(site: Site) -> None:
        first = await site.get("/")
        assert (await site.get("/")).text == first.text
        before = json.loads((await site.get("/api/leaderboard")).text)
        site.service.board = dataclasses.replace(site.service.board, at=2e9)
        after = json.loads((await site.get("/api/leaderboard")).text)
        assert (before["at"], after["at"]) == (pytest.approx(before["at"]), 2e9)
        assert before["at"] != 2e9
        moved = await site.get("/")
        assert moved.text != first.text
        assert "2033-05-18" in moved.text  # the new board's time
        site.service.ladder_error = "the ladder stopped: a test"
        assert "the ladder stopped: a test" in (await site.get("/")).text
        cookie = await site.login(built.tokens["alice"])
        mine = await site.get("/", cookie=cookie)
        assert "logged in as" in mine.text
        assert "logged in as" not in (await site.get("/")).text

    site(check)


def test_the_store_keeps_only_live_sessions(tmp_path: Path) -> None:
    """A login lets go of the sessions ended or opened too long ago: one row per live one."""
    store = ArenaStore(Arena(tmp_path / "home").store_path)
    store.add_author("ada")
    token = new_token()
    store.add_token("ada", token_digest(token))
    store.add_session("ended", "ada", token_digest(token))
    store.add_session("old", "ada", token_digest(token))
    store.add_session("live", "ada", token_digest(token))
    store.end_session("ended")
    with store.transaction() as db:
        db.execute("UPDATE sessions SET created_at = 0 WHERE digest = 'old'")
    store.add_session("new", "ada", token_digest(token))
    kept = {row["digest"] for row in store.db.execute("SELECT digest FROM sessions")}
    assert kept == {"live", "new"}
    assert store.session_author("live", 3600) == "ada"
