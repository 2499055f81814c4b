"""``gin bot submit DIR --arena URL`` against a small stdlib server that speaks the arena's API.

The fake arena checks the token, takes the upload, then answers queued, checking and its verdict;
each refusal of the contract (401, 413, 429) and an arena that is not there end in one line.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import trio
from typer.testing import CliRunner

from referee.conformance import CheckItem, CheckReport, Verdict
from tournaments.arena.accounts import add_author
from tournaments.arena.client import (
    TOKEN_ENV,
    ArenaClientError,
    ArenaVerdict,
    find_token,
    submit_to_arena,
)
from tournaments.arena.intake import MAX_UPLOAD_BYTES, unpack_upload
from tournaments.arena.server import serve
from tournaments.arena.service import ArenaService
from tournaments.arena.store import ArenaStore
from tournaments.cli.app import app
from tournaments.registry import Arena

TOKEN = "gin_" + "t" * 43
runner = CliRunner()


def failed_report() -> CheckReport:
    return CheckReport(
        Path("mybot@1.0.0"),
        "mybot@1.0.0",
        (
            CheckItem("manifest is valid", Verdict.PASSED),
            CheckItem("plays only legal actions", Verdict.FAILED, "played card 99"),
        ),
        decisions=7,
        series=1,
        startup_ms=40.0,
        stderr=("Traceback (most recent call last):", "ValueError: boom"),
    )


@dataclass
class Behaviour:
    """What the fake arena does."""

    verdict: str = "accepted"
    refuse: int = 0
    """Answer the upload with this status (401, 413, 429, 400)."""
    states: list[str] = field(default_factory=lambda: ["queued", "checking"])
    bodies: list[bytes] = field(default_factory=list)
    polls: int = 0


def handler_for(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def answer(self, status: int, document: dict[str, Any], **headers: str) -> None:
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key.replace("_", "-"), value)
            self.end_headers()
            self.wfile.write(body)

        def authorised(self) -> bool:
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self.answer(401, {"error": "no such token (or revoked)"})
                return False
            return True

        def do_POST(self) -> None:
            data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if not self.authorised():
                return
            if self.path != "/api/bots":
                self.answer(404, {"error": "not found"})
            elif behaviour.refuse == 413:
                self.answer(413, {"error": "upload too big: the limit is 8 MiB"})
            elif behaviour.refuse == 429:
                self.answer(429, {"error": "too many uploads"}, Retry_After="42")
            elif behaviour.refuse:
                self.answer(behaviour.refuse, {"error": "not a gzip'd tar"})
            else:
                behaviour.bodies.append(data)
                self.answer(202, {"id": "s1", "state": "queued", "url": "/api/submissions/s1"})

        def do_GET(self) -> None:
            if not self.authorised():
                return
            if self.path != "/api/submissions/s1":
                self.answer(404, {"error": "no such upload"})
                return
            behaviour.polls += 1
            state = behaviour.states.pop(0) if behaviour.states else behaviour.verdict
            rejected = state == "rejected"
            message = {
                "rejected": "mybot@1.0.0 failed the conformance check",
                "accepted": "accepted: mybot@1.0.0 entered the ladder",
            }.get(state, "")
            self.answer(
                200,
                {
                    "id": "s1",
                    "state": state,
                    "bot": "mybot@1.0.0",
                    "message": message,
                    "checklist": failed_report().to_dict() if rejected else None,
                    "created_at": 1.0,
                    "finished_at": 2.0 if state in ("accepted", "rejected") else None,
                },
            )

    return Handler


@pytest.fixture
def behaviour() -> Behaviour:
    return Behaviour()


@pytest.fixture
def arena_url(behaviour: Behaviour) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(behaviour))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    folder = tmp_path / "mybot"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.toml").write_text(
        'name = "mybot"\nversion = "1.0.0"\ncommand = ["python", "bot.py"]\n'
    )
    (folder / "bot.py").write_text("print('hello')\n")
    (folder / "lib" / "util.py").write_text("X = 1\n")
    return folder


def test_an_accepted_bot_reports_each_state_then_the_verdict(
    bot: Path, arena_url: str, behaviour: Behaviour, tmp_path: Path
) -> None:
    seen: list[str] = []
    verdict = submit_to_arena(
        bot, arena_url + "/", TOKEN, poll_s=0.01, on_state=lambda v: seen.append(v.state)
    )
    assert verdict.accepted
    assert verdict.bot == "mybot@1.0.0"
    assert seen == ["queued", "checking", "accepted"]
    (body,) = behaviour.bodies
    destination = tmp_path / "unpacked"
    destination.mkdir()
    unpacked = unpack_upload(_written(tmp_path / "up.tgz", body), destination)  # as the arena
    files = sorted(p.relative_to(unpacked).as_posix() for p in unpacked.rglob("*"))
    assert files == ["bot.py", "bot.toml", "lib", "lib/util.py"]


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_rejected_bot_returns_the_checklist_it_failed(
    bot: Path, arena_url: str, behaviour: Behaviour
) -> None:
    behaviour.verdict = "rejected"
    verdict = submit_to_arena(bot, arena_url, TOKEN, poll_s=0.01)
    assert verdict.state == "rejected"
    assert not verdict.accepted
    assert verdict.checklist is not None
    assert CheckReport.from_dict(verdict.checklist) == failed_report()


@pytest.mark.parametrize(
    ("refuse", "said"),
    [
        (401, "refused the token (401"),
        (413, "too big for the arena (413)"),
        (429, "too many uploads (429): retry in 42 s"),
        (400, "refused the upload (HTTP 400): not a gzip'd tar"),
    ],
)
def test_a_refused_upload_is_one_line(
    bot: Path, arena_url: str, behaviour: Behaviour, refuse: int, said: str
) -> None:
    behaviour.refuse = refuse
    with pytest.raises(ArenaClientError) as caught:
        submit_to_arena(bot, arena_url, TOKEN, poll_s=0.01)
    assert said in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_bad_token_is_refused_by_the_arena(bot: Path, arena_url: str) -> None:
    with pytest.raises(ArenaClientError, match="refused the token"):
        submit_to_arena(bot, arena_url, "gin_" + "x" * 43, poll_s=0.01)


def test_an_arena_that_is_not_there_is_one_line(bot: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(ArenaClientError) as caught:
        submit_to_arena(bot, f"http://127.0.0.1:{port}", TOKEN)
    assert str(caught.value).startswith(f"cannot reach the arena at http://127.0.0.1:{port}")
    assert "\n" not in str(caught.value)


def test_no_verdict_in_time_says_where_to_ask(
    bot: Path, arena_url: str, behaviour: Behaviour
) -> None:
    behaviour.states = ["checking"] * 1000
    with pytest.raises(ArenaClientError, match=r"no verdict after 0 s .* is checking"):
        submit_to_arena(bot, arena_url, TOKEN, wait_s=0.2, poll_s=0.05)
    assert behaviour.polls >= 2


def test_a_bad_folder_fails_before_any_upload(
    tmp_path: Path, arena_url: str, behaviour: Behaviour
) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "Bad Name"\n')
    with pytest.raises(ArenaClientError, match="not a valid bot folder"):
        submit_to_arena(folder, arena_url, TOKEN)
    assert behaviour.bodies == []
    assert behaviour.polls == 0


def test_a_symlink_or_a_folder_too_big_fails_before_any_upload(
    bot: Path, arena_url: str, behaviour: Behaviour
) -> None:
    (bot / "link.py").symlink_to("bot.py")
    with pytest.raises(ArenaClientError, match="is a symlink"):
        submit_to_arena(bot, arena_url, TOKEN)
    (bot / "link.py").unlink()
    (bot / "noise.bin").write_bytes(os.urandom(MAX_UPLOAD_BYTES + 1024))
    with pytest.raises(ArenaClientError, match="more than the arena takes"):
        submit_to_arena(bot, arena_url, TOKEN)
    assert behaviour.bodies == []


def test_an_address_with_a_path_is_one_line_that_says_to_drop_it(bot: Path, arena_url: str) -> None:
    """It gave a bare "HTTP 404"."""
    with pytest.raises(ArenaClientError) as caught:
        submit_to_arena(bot, f"{arena_url}/arena/", TOKEN, poll_s=0.01)
    said = str(caught.value)
    assert said == (
        "no arena API at /arena/api/bots (404): give the arena's own address, "
        "http://HOST:PORT with no path"
    )


def test_only_http_addresses_are_arenas(bot: Path) -> None:
    with pytest.raises(ArenaClientError, match="not an arena address"):
        submit_to_arena(bot, "file:///etc/passwd", TOKEN)


# --- the token -----------------------------------------------------------------------------------


def test_the_token_comes_from_the_file_then_the_environment_then_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "https://arena.example"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(ArenaClientError) as caught:
        find_token(url)
    message = str(caught.value)
    assert "--token-file" in message
    assert TOKEN_ENV in message
    assert str(tmp_path / "config" / "gin" / "arena.toml") in message
    config = tmp_path / "config" / "gin" / "arena.toml"
    config.parent.mkdir(parents=True)
    config.write_text('token = "gin_top"\n[arenas."https://arena.example"]\ntoken = "gin_this"\n')
    assert find_token(url) == "gin_this"
    assert find_token("https://other.example") == "gin_top"
    monkeypatch.setenv(TOKEN_ENV, "gin_env")
    assert find_token(url) == "gin_env"
    token_file = tmp_path / "token"
    token_file.write_text("gin_file\n")
    assert find_token(url, token_file) == "gin_file"


# --- the command ---------------------------------------------------------------------------------


def test_the_command_prints_progress_and_the_verdict(
    bot: Path, arena_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = runner.invoke(app, ["bot", "submit", str(bot), "--arena", arena_url])
    assert result.exit_code == 0, result.output
    assert "queued" in result.output
    assert "checking" in result.output
    assert "accepted: mybot@1.0.0 entered the ladder" in result.output


def test_the_command_prints_the_checklist_of_a_rejection_and_exits_1(
    bot: Path, arena_url: str, behaviour: Behaviour, tmp_path: Path
) -> None:
    behaviour.verdict = "rejected"
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    result = runner.invoke(
        app, ["bot", "submit", str(bot), "--arena", arena_url, "--token-file", str(token_file)]
    )
    assert result.exit_code == 1, result.output
    assert "plays only legal actions: played card 99" in result.output
    assert "ValueError: boom" in result.output
    assert "rejected: mybot@1.0.0 failed the conformance check" in result.output


def test_the_command_without_a_token_says_where_to_put_one(
    bot: Path, arena_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing"))
    result = runner.invoke(app, ["bot", "submit", str(bot), "--arena", arena_url])
    assert result.exit_code == 2
    assert "no arena token" in result.output
    assert "Traceback" not in result.output


def test_the_command_with_a_revoked_token_exits_2_in_one_line(
    bot: Path, arena_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "gin_" + "r" * 43)
    result = runner.invoke(app, ["bot", "submit", str(bot), "--arena", arena_url])
    assert result.exit_code == 2
    assert "refused the token" in result.output
    assert len(result.output.strip().splitlines()) == 1


# --- against the real arena ----------------------------------------------------------------------


def test_the_client_and_the_real_arena_agree(bot: Path, tmp_path: Path) -> None:
    arena = Arena(tmp_path / "home")
    store = ArenaStore(arena.store_path)
    token = add_author(store, "a")
    other = add_author(store, "b")
    service = ArenaService(arena, store, ladder=False, checker=None)
    verdicts: list[ArenaVerdict] = []
    errors: list[str] = []

    async def main() -> None:
        bound: list[str] = []
        async with trio.open_nursery() as nursery:
            ready = trio.Event()

            def on_ready(binds: list[str]) -> None:
                bound.extend(binds)
                ready.set()

            nursery.start_soon(partial(serve, service, "127.0.0.1", 0, on_ready=on_ready))
            with trio.fail_after(20):
                await ready.wait()
                url = bound[0]
                verdicts.append(
                    await trio.to_thread.run_sync(
                        partial(submit_to_arena, bot, url, token, poll_s=0.05)
                    )
                )
                try:
                    await trio.to_thread.run_sync(
                        partial(submit_to_arena, bot, url, other, poll_s=0.05)
                    )
                except ArenaClientError as error:
                    errors.append(str(error))
                else:
                    errors.append("")
                try:
                    await trio.to_thread.run_sync(
                        partial(submit_to_arena, bot, url, "gin_" + "n" * 43, poll_s=0.05)
                    )
                except ArenaClientError as error:
                    errors.append(str(error))
            nursery.cancel_scope.cancel()

    trio.run(main)
    (accepted,) = verdicts
    assert accepted.accepted, accepted
    assert accepted.bot == "mybot@1.0.0"
    assert [entrant.ident for entrant in store.entrants()] == ["mybot@1.0.0"]
    assert errors[0] == ""  # b's upload was taken, and its verdict is a rejection (below)
    rows = store.submissions(author="b")
    assert [row.state.value for row in rows] == ["rejected"]
    assert "another author's" in rows[0].message
    assert "refused the token (401" in errors[1]
