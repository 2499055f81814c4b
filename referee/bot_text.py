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
    *range(0x20),
    0x7F,
    *range(0x80, 0xA0),
    0x200E,  # left-to-right and right-to-left marks
    0x200F,
    0x2028,  # line and paragraph separators
    0x2029,
    *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
    *range(0x2066, 0x206A),  # bidirectional isolates
)


_NAMED: Final = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _escape(code: int) -> str:
    if code in _NAMED:
        return _NAMED[code]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


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
