"""Bot text is data: what a bot sent, made safe to show.

Hello names and versions, stderr tails, fault details and evidence come from bots, or from a
match log a bot may have shaped. :func:`shown` is the one place such text is defused for a
terminal or a page: every control character (C0, DEL, C1, and the Unicode controls that reorder
text or break lines) becomes a visible escape, so no escape sequence, bell, title or hyperlink
reaches the screen. Rich markup is the renderer's half of the job: it puts the result in a
``rich.text.Text`` or through ``rich.markup.escape``, never into a markup string as it is.
"""

from __future__ import annotations

from typing import Final

ELLIPSIS: Final = "…"
_CONTROLS: Final = (
    *range(0x20),  # C0
    0x7F,
    *range(0x80, 0xA0),  # C1
    # Unicode's format characters (category Cf: invisible, reordering, joining, tags) and its
    # line and paragraph separators (Zl, Zp); a test checks this against unicodedata.
    0xAD,
    *range(0x600, 0x606),
    0x61C,
    0x6DD,
    0x70F,
    0x890,
    0x891,
    0x8E2,
    0x180E,
    *range(0x200B, 0x2010),
    0x2028,
    0x2029,
    *range(0x202A, 0x202F),
    *range(0x2060, 0x2065),
    *range(0x2066, 0x2070),
    0xFEFF,
    *range(0xFFF9, 0xFFFC),
    0x110BD,
    0x110CD,
    *range(0x13430, 0x13441),
    *range(0x1BCA0, 0x1BCA4),
    *range(0x1D173, 0x1D17B),
    0xE0001,
    *range(0xE0020, 0xE0080),
)


_NAMED: Final = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _escape(code: int) -> str:
    if code in _NAMED:
        return _NAMED[code]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


_ONE_LINE: Final = {code: _escape(code) for code in _CONTROLS}
_LINES: Final = _ONE_LINE | {ord("\n"): "\n", ord("\t"): "\t"}


def shown(text: str, limit: int | None = None, *, lines: bool = False) -> str:
    r"""``text`` with every control character written out as an escape, cut to ``limit``.

    With ``lines``, line breaks and tabs stay (a stderr tail); every other control goes.

    >>> shown("\x1b]0;pwned\x07[bold]x")
    '\\x1b]0;pwned\\x07[bold]x'
    >>> shown("a\x9b2J\nb"), shown("a\r\nb", lines=True)
    ('a\\x9b2J\\nb', 'a\\r\nb')
    >>> shown("an-impostor", 8)
    'an-impo…'
    """
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + ELLIPSIS
    return text.translate(_LINES if lines else _ONE_LINE)
