"""How the pages write a time, a number, a URL path and a text a bot or an author gave: the
templates' filters (``when``, ``num``, ``path``, ``bot``)."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import quote

from referee.bot_text import shown

__all__ = ["bot_text", "num", "url_path", "when"]


def when(at: float | None) -> str:
    """A moment in UTC, to the second (a dash for none).

    >>> when(86_400.5), when(None)
    ('1970-01-02 00:00:00 UTC', '—')
    """
    if not at:
        return "—"
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def url_path(text: str) -> str:
    """A text as one segment of a URL's path (a bot's ``name@version`` kept readable).

    >>> url_path("alpha@1.0"), url_path("a/b c")
    ('alpha@1.0', 'a%2Fb%20c')
    """
    return quote(text, safe="@~")


def bot_text(text: object, limit: int = 500) -> str:
    """A text a bot or an author gave, its control characters shown and cut at ``limit``."""
    return shown(str(text), limit)


def num(value: float | None, digits: int = 0) -> str:
    """A number to ``digits`` places (a dash for none).

    >>> num(1512.46, 1), num(None)
    ('1512.5', '—')
    """
    if value is None:
        return "—"
    return f"{value:.{digits}f}"
