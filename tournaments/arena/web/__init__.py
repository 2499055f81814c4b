"""The arena's web app: server-rendered pages (the leaderboard, a bot, a match, the live page),
the JSON API of ``docs`` (uploads, submissions, retiring, stderr, the leaderboard) and the
downloads, hardened for the open internet.

Threads: pages and other reads are plain (``def``) endpoints, which Starlette runs in its thread
pool; they read through :meth:`ArenaService.reader` (one store connection per thread). Writes
(uploads, retiring, logging in) are ``async`` endpoints on the trio thread, through the service's
own store. The leaderboard is the service's snapshot (``service.board``): no request computes
standings. A visitor's pages (no session cookie) are not rendered per request: they come from the
published tree, which any static server can serve too (docs/arena.md).

Hardening: a strict Content Security Policy and the usual headers on every response; sessions
kept by the server: the cookie (HttpOnly, SameSite=Strict, Secure over https) holds a random
session id, the store only its SHA-256 digest, looked up on each request (logging out ends the
session, and so does revoking the token it was opened with); a CSRF token (an HMAC of the session
id) on every form plus an Origin/Referer check on every form post; request bodies capped while
they are read (413); token buckets per API token, per client address for anonymous API calls and
for ``/login`` (all, and failed ones before the form is read; 429 with ``Retry-After``); at
most :data:`STREAMS_PER_CLIENT` live-page streams per logged-in author or visitor's address
(429), and :data:`VISITOR_STREAMS` for visitors in all (503); static files from a fixed map
held in memory (no path reaches the server's files); every text a bot or an author gave escaped
(Jinja2's autoescape, and :func:`referee.bot_text.shown` for control characters); error pages
without tracebacks.

The modules, each endpoint a function of its own that finds the app's parts in
``request.app.state.web``:

- ``_app``: the routes table, the error pages and :func:`create_app`;
- ``_state``: the app's parts (the service, the templates, the limits, the caches);
- ``_pages``: the pages (the leaderboard, a bot, a match, a replay); ``_plot``: a bot's rating
  over time;
- ``_front``: a visitor's published pages answered before Starlette, as nginx answers them;
  ``_wire``: the HTTP door that answers them on the connection, before Hypercorn;
- ``_publish``: a visitor's pages published when they change (a board computed, a match
  recorded), kept by ``_tree`` as files under ``<home>/public`` with their ``.gz`` and the
  ETag nginx would give them, and served from there (304, gzip);
- ``_forms``: logging in and out, and retiring a bot from its page;
- ``_live``: the live page and its event stream;
- ``_api``: the JSON API; ``_downloads``: a match's log, the standings and the static files;
- ``_auth``: sessions, CSRF tokens, API tokens and the rate limits;
- ``_hardening``: the security headers and policies, and request bodies capped;
- ``_filters``: how the pages write times, numbers, paths and a bot's texts; ``_errors``: the
  answer that refuses a request.
"""

from tournaments.arena.web._app import ROUTES, create_app
from tournaments.arena.web._auth import (
    API_PER_MINUTE,
    FAILED_LOGINS_PER_MINUTE,
    LOGINS_PER_MINUTE,
    SESSION_COOKIE,
    SESSION_S,
    STREAMS_PER_CLIENT,
    UPLOADS_PER_MINUTE,
    VISITOR_STREAMS,
)
from tournaments.arena.web._front import Front
from tournaments.arena.web._hardening import CSP, FORM_BYTES, REPLAY_CSP
from tournaments.arena.web._live import PING_S
from tournaments.arena.web._pages import RECENT_MATCHES, STDERR_SHOWN
from tournaments.arena.web._publish import MATCH_PAGES, REPLAYS, Published
from tournaments.arena.web._state import REPLAY_CACHE
from tournaments.arena.web._tree import (
    MEMORY_BYTES,
    PUBLIC,
    TEMPORARY_S,
    Page,
    Tree,
    stamped_files,
    tree_stamp,
)
from tournaments.arena.web._wire import serve_door

__all__ = [
    "API_PER_MINUTE",
    "CSP",
    "FAILED_LOGINS_PER_MINUTE",
    "FORM_BYTES",
    "LOGINS_PER_MINUTE",
    "MATCH_PAGES",
    "MEMORY_BYTES",
    "PING_S",
    "PUBLIC",
    "RECENT_MATCHES",
    "REPLAYS",
    "REPLAY_CACHE",
    "REPLAY_CSP",
    "ROUTES",
    "SESSION_COOKIE",
    "SESSION_S",
    "STDERR_SHOWN",
    "STREAMS_PER_CLIENT",
    "TEMPORARY_S",
    "UPLOADS_PER_MINUTE",
    "VISITOR_STREAMS",
    "Front",
    "Page",
    "Published",
    "Tree",
    "create_app",
    "serve_door",
    "stamped_files",
    "tree_stamp",
]
