"""Reading JSON and TOML that a bot or a user wrote, with its nesting and its numbers bounded.

Python's readers recurse once per level of nesting and turn any run of digits into an integer:
a line of 100,000 brackets is a ``RecursionError``, a 5,000-digit number a ``ValueError`` from
the interpreter's own digit limit, neither of them an error a reader expects. Every reader of
text from outside (match logs, league files, bot manifests, the store's stored summaries) goes
through :func:`loads_json` or :func:`loads_toml`, which refuse such text first with a
:class:`TooComplex` that says what and where.
"""

from __future__ import annotations

import json
import re
import tomllib
from itertools import accumulate
from typing import Any, Final, TypeAlias

JsonValue: TypeAlias = Any  # type: ignore[explicit-any]
"""A JSON value as decoded, before it is checked: the project's one free-form type. Every reader
of a document (a log record, a stored summary, a manifest, a league file, an API answer) takes
this and checks each field it reads into a typed record; nothing else is typed ``Any``
(``disallow_any_explicit``)."""
JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object as decoded, or as built to be encoded (``to_dict``'s and ``to_json``'s form)."""

MAX_DEPTH: Final = 64
"""The deepest nesting of arrays and objects (tables) read; the project writes at most 6."""
MAX_DIGITS: Final = 100
"""The most digits in one number read; the project's largest numbers (seeds) have 20."""

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_TOML_STRING = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'', re.DOTALL
)
_TOML_COMMENT = re.compile(r"#[^\n]*")
_DIGITS = re.compile(r"\d(?:_?\d)*")


class TooComplex(ValueError):  # noqa: N818 - named for what the text is
    """Text nested deeper than :data:`MAX_DEPTH`, or with a number longer than
    :data:`MAX_DIGITS` digits."""


def _check_depth(text: str, strings: re.Pattern[str] = _JSON_STRING) -> None:
    """Refuse text whose brackets (outside strings) nest deeper than :data:`MAX_DEPTH`.

    Raises:
        TooComplex: too deep.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return  # the common case: too few brackets to be too deep, whatever their order
    brackets = re.sub(r"[^\[\]{}]", "", strings.sub("", text))
    steps = (1 if bracket in "[{" else -1 for bracket in brackets)
    if max(accumulate(steps, initial=0)) > MAX_DEPTH:
        raise TooComplex(f"nested deeper than {MAX_DEPTH} levels")


def _json_int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_DIGITS:
        raise TooComplex(f"a number of {len(text)} digits (at most {MAX_DIGITS} are read)")
    return int(text)


check_json_depth: Final = _check_depth
"""Refuse JSON text nested deeper than :data:`MAX_DEPTH` (raises :class:`TooComplex`): for a
reader that runs :data:`DECODER`'s scanner itself, on a hot path."""
DECODER: Final = json.JSONDecoder(parse_int=_json_int)
"""A JSON decoder that refuses whole numbers longer than :data:`MAX_DIGITS` digits (not deep
nesting: :func:`check_json_depth` first)."""


def loads_json(text: str | bytes) -> JsonValue:
    """Decode JSON, refusing nesting deeper than :data:`MAX_DEPTH` and whole numbers longer
    than :data:`MAX_DIGITS` digits.

    >>> loads_json('{"seed": 12, "deck": [[1], [2]]}')
    {'seed': 12, 'deck': [[1], [2]]}
    >>> for text in ("[" * 100_000, "9" * 5000):
    ...     try:
    ...         loads_json(text)
    ...     except TooComplex as error:
    ...         print(error)
    nested deeper than 64 levels
    a number of 5000 digits (at most 100 are read)

    Raises:
        TooComplex: too deep, or a number too long.
        json.JSONDecodeError: not JSON.
    """
    decoded = text.decode("utf-8") if isinstance(text, bytes) else text
    _check_depth(decoded, _JSON_STRING)
    try:
        return DECODER.decode(decoded)
    except RecursionError:  # a bound below MAX_DEPTH (a small stack): still a clear refusal
        raise TooComplex("nested too deep to read") from None


def loads_toml(text: str) -> JsonObject:
    """Decode TOML, refusing nesting deeper than :data:`MAX_DEPTH` and numbers longer than
    :data:`MAX_DIGITS` digits (outside strings and comments).

    >>> loads_toml('name = "a[[["\\nseed = 1_000')
    {'name': 'a[[[', 'seed': 1000}
    >>> try:
    ...     loads_toml("x = " + "1" * 5000)
    ... except TooComplex as error:
    ...     print(error)
    a number of 5000 digits (at most 100 are read)

    Raises:
        TooComplex: too deep, or a number too long.
        tomllib.TOMLDecodeError: not TOML.
    """
    bare = _TOML_COMMENT.sub("", _TOML_STRING.sub('""', text))
    _check_depth(bare, _TOML_STRING)
    for run in _DIGITS.finditer(bare):
        digits = len(run.group()) - run.group().count("_")
        if digits > MAX_DIGITS:
            raise TooComplex(f"a number of {digits} digits (at most {MAX_DIGITS} are read)")
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise TooComplex("nested too deep to read") from None
