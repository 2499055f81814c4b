"""``gin bot submit DIR --arena URL``: upload a bot folder to a hosted arena and wait for its
verdict (stdlib ``urllib`` only).

Every failure is one line (:class:`ArenaClientError`): a bad folder before anything is sent, an
arena that cannot be reached, a token refused (401), an upload too big (413), too many uploads
(429, with when to retry), no verdict in time.
"""

from __future__ import annotations

import json
import os
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from protocol.bounded import JsonObject
from protocol.manifest import ManifestError, load_manifest
from referee.local import bot_files
from tournaments.arena.intake import MAX_UPLOAD_BYTES
from tournaments.executors.packing import pack_bot

__all__ = ["TOKEN_ENV", "ArenaClientError", "ArenaVerdict", "find_token", "submit_to_arena"]


TOKEN_ENV: Final = "GIN_ARENA_TOKEN"
"""The environment variable an arena token may be given in."""
WAIT_S: Final = 600.0
"""How long :func:`submit_to_arena` waits for a verdict, by default."""
REQUEST_TIMEOUT_S: Final = 30.0
"""How long one request may take."""
_USER_AGENT: Final = "gin-bot-submit/1"


class ArenaClientError(RuntimeError):
    """A submission that could not be made or followed; the message is one line."""


@dataclass(frozen=True, slots=True)
class ArenaVerdict:
    """An upload's state as the arena reports it (``GET /api/submissions/{id}``)."""

    id: str
    state: str
    """``queued``, ``checking``, ``accepted`` or ``rejected``."""
    bot: str | None
    message: str
    checklist: JsonObject | None
    """The conformance checklist (``CheckReport.to_dict()``), when the kit ran."""

    @property
    def done(self) -> bool:
        """Whether this is the verdict (accepted or rejected)."""
        return self.state in ("accepted", "rejected")

    @property
    def accepted(self) -> bool:
        """Whether the arena took the bot."""
        return self.state == "accepted"


def config_path() -> Path:
    """``$XDG_CONFIG_HOME/gin/arena.toml`` (``~/.config/gin/arena.toml`` by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gin" / "arena.toml"


def find_token(url: str, token_file: Path | None = None) -> str:
    """The token for the arena at ``url``: from ``token_file``, else ``$GIN_ARENA_TOKEN``, else
    the config file (``[arenas."URL"] token``, else its top-level ``token``).

    Raises:
        ArenaClientError: none of the three has one, or the file named cannot be read.
    """
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise ArenaClientError(f"cannot read the token file {token_file}: {error}") from None
        if not token:
            raise ArenaClientError(f"the token file {token_file} is empty")
        return token
    if os.environ.get(TOKEN_ENV, "").strip():
        return os.environ[TOKEN_ENV].strip()
    path = config_path()
    found = _config_token(path, url)
    if found:
        return found
    raise ArenaClientError(
        f'no arena token: give --token-file FILE, or set {TOKEN_ENV}, or put token = "..." in '
        f'{path} (or under [arenas."{url}"])'
    )


def _config_token(path: Path, url: str) -> str | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ArenaClientError(f"cannot read {path}: {error}") from None
    arenas = data.get("arenas")
    if isinstance(arenas, dict):
        for key in (url, url.rstrip("/"), url.rstrip("/") + "/"):
            entry = arenas.get(key)
            if isinstance(entry, dict) and isinstance(entry.get("token"), str):
                return str(entry["token"]).strip() or None
    token = data.get("token")
    return token.strip() or None if isinstance(token, str) else None


def pack_upload(folder: Path) -> bytes:
    """The bot folder checked (as ``gin bot check`` reads it) and packed for the arena.

    Raises:
        ArenaClientError: the folder is not a valid bot folder, holds a symlink (an upload holds
            only files and folders), or packs to more than the arena takes.
    """
    try:
        load_manifest(folder)
    except ManifestError as error:
        raise ArenaClientError(
            f"{folder} is not a valid bot folder: {'; '.join(error.problems)}"
        ) from None
    links = [path.relative_to(folder) for path in bot_files(folder) if path.is_symlink()]
    if links:
        raise ArenaClientError(
            f"{folder / links[0]} is a symlink: an arena upload holds only files and folders"
        )
    data = pack_bot(folder)
    if len(data) > MAX_UPLOAD_BYTES:
        raise ArenaClientError(
            f"{folder} packs to {len(data)} bytes, more than the arena takes "
            f"({MAX_UPLOAD_BYTES // (1024 * 1024)} MiB): leave out what the bot does not need"
        )
    return data


def submit_to_arena(
    folder: Path,
    url: str,
    token: str,
    *,
    wait_s: float = WAIT_S,
    poll_s: float = 1.0,
    on_state: Callable[[ArenaVerdict], None] | None = None,
) -> ArenaVerdict:
    """Upload a bot folder to the arena at ``url`` and wait for its verdict.

    The folder is checked locally first (a bad manifest fails before any upload). ``on_state``
    hears each new state (queued, checking, the verdict). A rejection is a verdict, returned.

    Raises:
        ArenaClientError: the folder, the arena, the token or the wait failed (one line).
    """
    base = _base_url(url)
    data = pack_upload(folder)
    answer = _request(
        base + "/api/bots",
        token,
        data=data,
        content_type="application/gzip",
    )
    submission_id = answer.get("id")
    if not isinstance(submission_id, str) or not submission_id:
        raise ArenaClientError(f"{base} is not a Hollywood Gin arena (no upload id in its answer)")
    where = base + "/api/submissions/" + urllib.parse.quote(submission_id, safe="")
    verdict = ArenaVerdict(submission_id, str(answer.get("state", "queued")), None, "", None)
    if on_state is not None:
        on_state(verdict)
    deadline = time.monotonic() + wait_s
    delay = min(0.25, poll_s)
    seen = verdict.state
    while True:
        verdict = _verdict(submission_id, _request(where, token))
        if verdict.state != seen or verdict.done:
            seen = verdict.state
            if on_state is not None:
                on_state(verdict)
        if verdict.done:
            return verdict
        if time.monotonic() + delay > deadline:
            raise ArenaClientError(
                f"no verdict after {wait_s:.0f} s (upload {submission_id} is {verdict.state}); "
                f"ask again later: GET {where}"
            )
        time.sleep(delay)
        delay = min(delay * 2, poll_s)


def _base_url(url: str) -> str:
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ArenaClientError(f"not an arena address: {url!r} (give http://HOST:PORT)") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ArenaClientError(f"not an arena address: {url!r} (give http://HOST:PORT)")
    return url.rstrip("/")


def _verdict(submission_id: str, answer: JsonObject) -> ArenaVerdict:
    checklist = answer.get("checklist")
    bot = answer.get("bot")
    return ArenaVerdict(
        str(answer.get("id", submission_id)),
        str(answer.get("state", "")),
        bot if isinstance(bot, str) else None,
        str(answer.get("message", "")),
        checklist if isinstance(checklist, dict) else None,
    )


def _request(
    url: str, token: str, *, data: bytes | None = None, content_type: str = ""
) -> JsonObject:
    """One API request; its JSON answer.

    Raises:
        ArenaClientError: unreachable, refused, or not JSON (one line).
    """
    headers = {"Authorization": f"Bearer {token}", "User-Agent": _USER_AGENT}
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
            body = response.read()
    except urllib.error.HTTPError as error:
        raise ArenaClientError(_refusal(error)) from None
    except urllib.error.URLError as error:
        raise ArenaClientError(f"cannot reach the arena at {url}: {error.reason}") from None
    except TimeoutError:
        raise ArenaClientError(
            f"the arena at {url} did not answer within {REQUEST_TIMEOUT_S:.0f} s"
        ) from None
    except OSError as error:
        raise ArenaClientError(f"cannot reach the arena at {url}: {error}") from None
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ArenaClientError(f"{url} did not answer as an arena does (not a JSON object)")
    return answer


def _refusal(error: urllib.error.HTTPError) -> str:
    """What an HTTP error of the arena means, in one line."""
    try:
        said = json.loads(error.read()).get("error", "")
    except (ValueError, AttributeError, OSError):
        said = ""
    said = " ".join(str(said).split())[:300]
    status = error.code
    if status == 401:
        return (
            "the arena refused the token (401: unknown or revoked"
            + (f": {said}" if said else "")
            + "): ask the organiser for a new one"
        )
    if status == 404:
        path = urllib.parse.urlsplit(error.url or "").path
        return (
            f"no arena API at {path or '/'} (404): give the arena's own address, "
            "http://HOST:PORT with no path"
        )
    if status == 413:
        return f"the upload is too big for the arena (413){': ' + said if said else ''}"
    if status == 429:
        retry = (error.headers.get("Retry-After") or "").strip()
        when = f"retry in {retry} s" if retry.isdigit() else "retry later"
        return f"too many uploads (429): {when}"
    return f"the arena refused the upload (HTTP {status}){': ' + said if said else ''}"
