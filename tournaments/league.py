"""League definitions (a TOML file) and their round-robin schedule.

```toml
name = "spring"                 # lowercase letters, digits, - and _
seed = 2026                     # optional: the same seed, the same deals in this GIN_HOME
public_deals = false            # true: deals from the seed alone (bots too can rebuild them)
bots = ["greedy", "strong@1.2.0", "random"]   # NAME (latest) or NAME@VERSION
series_per_pairing = 4          # even when duplicate is on
duplicate = true                # mirrored pairs: same decks, seats swapped
jobs = 2                        # matches at once (gin league run -j overrides)
candidates = ["strong@1.2.0"]   # optional: a gauntlet (see below)

[time_control]                  # optional; the defaults suit Python bots
move_time = "1s"                # durations ("500ms", "2min"), or move_time_ms = 1000
time_bank = "10s"

[fault_policy]
strikes = 3

[rules]                         # optional; any field of RuleParams
gin_bonus = 25
scoring = "hollywood"           # or "plain"

[sprt]                          # optional, two bots and duplicate only: a match (gin match)
elo0 = 0.0                      # the sequential test on pairs: H0 elo <= elo0, H1 elo >= elo1
elo1 = 5.0
alpha = 0.05
beta = 0.05
# or: statistic = "margin", effect0 = 0.0, effect1 = 0.3 (the margin test; docs/match.md)
```

Without ``candidates`` a league is a round robin: every bot plays every other. With
``candidates`` (some of ``bots``, as written there) it is a gauntlet: every candidate plays every
other bot (the field); the field does not play itself and candidates do not play each other. At
least one bot of ``bots`` must be left for the field. ``gin league extend`` adds series to every
pairing; the file's ``series_per_pairing`` may stay as first written (a smaller count than the
stored one removes nothing).

With ``format = "swiss"`` (and ``rounds = N``) or ``format = "knockout"`` a league is an
*event*, played round by round (``tournaments.rounds``): each round's ties (two bots playing
``series_per_pairing`` series, in duplicate pairs) are paired from the results of the rounds
before it (``tournaments.events``) and stored before they play. ``seeding`` orders the field for
the pairing: ``"order"`` (as ``bots`` lists it, strongest first: the default), ``"draw"`` (a draw
keyed by the league's secret) or ``"league:NAME"`` (by the ratings of league NAME in this
store). An event's field and settings are fixed once it is created.

Each league has a secret, made when it is created and kept in the store: random, or, when the
file gives a ``seed``, that seed keyed with the store's own secret (so the same file deals the
same again in the same ``GIN_HOME``, and a bot that knows the seed still cannot rebuild a deal).
Only ``public_deals = true`` makes the deals follow from the seed alone. Each series' deal seed
is a keyed hash of (league secret, pairing, series index), so adding a bot (to a round robin,
or to either side of a gauntlet) or series (``gin league extend``) adds matches and changes none
of the existing ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import itertools
import json
import os
import re
import secrets
import stat
import time
import tomllib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from protocol.bounded import JsonObject, TooComplex, loads_json, loads_toml
from referee.control import FaultPolicy, TimeControl, duration_ms
from referee.rules import RuleParams
from tournaments.registry import RegistryError, resolve
from tournaments.stats.margin_sprt import TestSettings, settings_from_dict
from tournaments.stats.sprt import SprtSettings
from tournaments.store import MatchRow, MatchState, Store

__all__ = [
    "EVENT_MIN_BOTS",
    "MAX_LEAGUE_MATCHES",
    "NAME_PATTERN",
    "LeagueConfig",
    "LeagueError",
    "StoredLeague",
    "create_league",
    "derive_seed",
    "extend_league",
    "league_secret",
    "load_league",
    "match_id",
    "pairings",
    "play_match_id",
    "play_seed",
    "public_seed",
    "schedule",
    "series_of",
    "stored_league",
]


MAX_LEAGUE_FILE_BYTES: Final = 1024 * 1024
MAX_LEAGUE_MATCHES: Final = 250_000
"""The most matches a league may hold (its store rows, and days of play on one machine)."""
NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
KNOWN_KEYS: Final = {
    "name",
    "seed",
    "public_deals",
    "bots",
    "series_per_pairing",
    "duplicate",
    "jobs",
    "time_control",
    "fault_policy",
    "rules",
    "candidates",
    "sprt",
    "format",
    "rounds",
    "seeding",
    "max_pairs",
}
FORMATS: Final = ("round-robin", "swiss", "knockout")
"""What ``format`` may be: a round robin (or a gauntlet, with ``candidates``), or an event."""
EVENT_MIN_BOTS: Final = {"swiss": 4, "knockout": 3}
"""The smallest field of each event (fewer: a round robin, or ``gin match``, does as well)."""


class LeagueError(ValueError):
    """A league definition that cannot be used; the message lists every problem."""


@dataclass(frozen=True, slots=True)
class LeagueConfig:
    """A checked league definition (bots still as written: NAME or NAME@VERSION)."""

    name: str
    seed: int | None
    """``None``: the league's secret is random."""
    bots: tuple[str, ...]
    series_per_pairing: int = 2
    duplicate: bool = True
    jobs: int = 2
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = field(default_factory=FaultPolicy)
    rules: RuleParams = field(default_factory=RuleParams)
    public_deals: bool = False
    """Deals from the seed alone, rebuildable by anyone (bots too): for published examples."""
    candidates: tuple[str, ...] = ()
    """Some of ``bots`` (as written): a gauntlet, each candidate against the rest; empty: a
    round robin."""
    sprt: TestSettings | None = None
    """The sequential test of a match (two bots, duplicate): the runner stops once it decides."""
    format: str = "round-robin"
    """One of :data:`FORMATS`: ``swiss`` and ``knockout`` are events, played round by round."""
    rounds: int = 0
    """A Swiss's rounds (0 for any other format)."""
    seeding: str = "order"
    """An event's seeding: ``order``, ``draw`` or ``league:NAME``."""
    max_pairs: int = 0
    """A knockout with ``sprt``: the most pairs a tie plays before the rule of an undecided tie
    decides it (0 otherwise)."""

    @property
    def event(self) -> bool:
        """Whether the league is played round by round (a Swiss or a knockout)."""
        return self.format != "round-robin"

    def to_dict(self) -> JsonObject:
        """JSON-ready form (stored with the league; a round robin without a test keeps the form
        it had before gauntlets and tests existed)."""
        data: JsonObject = {
            "name": self.name,
            "seed": self.seed,
            "bots": list(self.bots),
            "series_per_pairing": self.series_per_pairing,
            "duplicate": self.duplicate,
            "jobs": self.jobs,
            "time_control": self.time_control.to_dict(),
            "fault_policy": self.fault_policy.to_dict(),
            "rules": self.rules.to_dict(),
            "public_deals": self.public_deals,
        }
        if self.candidates:
            data["candidates"] = list(self.candidates)
        if self.sprt is not None:
            data["sprt"] = self.sprt.to_dict()
        if self.event:
            data["format"] = self.format
            data["seeding"] = self.seeding
        if self.rounds:
            data["rounds"] = self.rounds
        if self.max_pairs:
            data["max_pairs"] = self.max_pairs
        return data

    @classmethod
    def from_dict(
        cls, data: JsonObject, *, unknown_bot: Callable[[str], str | None] | None = None
    ) -> LeagueConfig:
        """Read :meth:`to_dict` output (or a parsed TOML file); ``unknown_bot`` says why a
        bot named is not one that can play (``None``: it is), so that a file's unknown bots
        are listed with its other problems.

        Raises:
            LeagueError: listing every problem found.
        """
        problems: list[str] = []
        for key in sorted(set(data) - KNOWN_KEYS):
            problems.append(f"unknown field '{key}' (known: {', '.join(sorted(KNOWN_KEYS))})")
        name = data.get("name")
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            problems.append(f"bad or missing name {name!r}: lowercase letters, digits, - and _")
        seed = data.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            problems.append(f"bad seed {seed!r}: a non-negative integer")
        public = data.get("public_deals", False)
        if not isinstance(public, bool):
            problems.append("public_deals must be true or false")
        elif public and seed is None:
            problems.append("public_deals needs a seed: the deals follow from it alone")
        bots = data.get("bots")
        if not isinstance(bots, list) or not all(isinstance(bot, str) for bot in bots):
            problems.append("bots must be a list of NAME or NAME@VERSION strings")
            bots = []
        elif len(set(bots)) != len(bots) or len(bots) < 2:
            problems.append("bots must name at least two different bots, each once")
        if unknown_bot is not None:
            problems += [why for why in map(unknown_bot, bots) if why is not None]
        series = data.get("series_per_pairing", 2)
        duplicate = data.get("duplicate", True)
        if not isinstance(series, int) or series < 1:
            problems.append("series_per_pairing must be a positive integer")
        elif duplicate and series % 2:
            problems.append("series_per_pairing must be even when duplicate is on (mirrored pairs)")
        if not isinstance(duplicate, bool):
            problems.append("duplicate must be true or false")
        jobs = data.get("jobs", 2)
        if not isinstance(jobs, int) or jobs < 1:
            problems.append("jobs must be a positive integer")
        candidates = _candidates(data.get("candidates", []), bots, problems)
        event = data.get("format") in ("swiss", "knockout")
        sprt = _sprt(data.get("sprt"), bots, duplicate, problems, event=event)
        kind = _event(data, bots, problems)
        parts = _sections(data, problems)
        if problems:
            raise LeagueError("bad league definition:\n" + "\n".join(f"  - {p}" for p in problems))
        assert isinstance(name, str)
        assert seed is None or isinstance(seed, int)
        time_control, fault_policy, rules = parts
        return cls(
            name,
            seed,
            tuple(bots),
            series,
            duplicate,
            jobs,
            time_control,
            fault_policy,
            rules,
            public,
            candidates,
            sprt,
            *kind,
        )


def _event(data: JsonObject, bots: list[str], problems: list[str]) -> tuple[str, int, str, int]:
    """A league's format, a Swiss's rounds, an event's seeding and a knockout's most pairs a
    tie, checked (problems added to ``problems``)."""
    given, rounds, seeding = (data.get(key) for key in ("format", "rounds", "seeding"))
    kind = "round-robin" if given is None else given
    if kind not in FORMATS:
        problems.append(f"format must be one of {', '.join(FORMATS)}, not {given!r}")
        return "round-robin", 0, "order", 0
    assert isinstance(kind, str)
    if kind == "round-robin":
        if rounds is not None or seeding is not None or "max_pairs" in data:
            problems.append(
                'rounds, seeding and max_pairs are for an event: format = "swiss" or "knockout"'
            )
        return kind, 0, "order", 0
    if len(bots) < EVENT_MIN_BOTS[kind]:
        problems.append(f"a {kind} needs at least {EVENT_MIN_BOTS[kind]} bots, not {len(bots)}")
    if "candidates" in data:
        problems.append(f"a {kind} has no candidates: every bot of bots plays in it")
    most = _max_pairs(kind, data, problems)
    return kind, _rounds(kind, rounds, len(bots), problems), _seeding(seeding, problems), most


def _max_pairs(kind: str, data: JsonObject, problems: list[str]) -> int:
    """An event's sequential ties' cap: given with ``[sprt]`` and only then."""
    given = data.get("max_pairs")
    if "sprt" not in data:
        if given is not None:
            problems.append("max_pairs is for an event whose ties are sequential ([sprt])")
        return 0
    if not isinstance(given, int) or isinstance(given, bool) or given < 1:
        problems.append(
            f"a {kind} with [sprt] needs max_pairs = N, at least 1: the most pairs a tie "
            f"plays (given: {given!r})"
        )
        return 0
    return given


def _rounds(kind: str, rounds: object, field: int, problems: list[str]) -> int:
    """A Swiss's rounds: at least 1, and no more than a round robin's (N - 1 for a field of N,
    N when N is odd and each round has a bye): so many that pairing method 2 pairs them all
    without a repeat while its searches end within their budgets (docs/events.md)."""
    if kind == "knockout":
        if rounds is not None:
            problems.append("a knockout has no rounds: the bracket decides how many")
        return 0
    most = field if field % 2 else field - 1
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
        problems.append(f"a swiss needs rounds = N, at least 1 (given: {rounds!r})")
        return 0
    if rounds > most:
        problems.append(f"a swiss of {field} bots has at most {most} rounds, not {rounds}")
    return rounds


def _seeding(seeding: object, problems: list[str]) -> str:
    if seeding is None:
        return "order"
    if isinstance(seeding, str) and (
        seeding in ("order", "draw")
        or (seeding.startswith("league:") and NAME_PATTERN.fullmatch(seeding[7:]))
    ):
        return seeding
    problems.append(f'seeding must be "order", "draw" or "league:NAME", not {seeding!r}')
    return "order"


def _candidates(given: object, bots: list[str], problems: list[str]) -> tuple[str, ...]:
    """A gauntlet's candidates, checked against ``bots`` (problems added to ``problems``)."""
    if not isinstance(given, list) or not all(isinstance(bot, str) for bot in given):
        problems.append("candidates must be a list of bots named as in bots")
        return ()
    strangers = [bot for bot in given if bot not in bots]
    if strangers:
        problems.append(f"candidates {', '.join(strangers)} are not among bots (name them there)")
    if len(set(given)) != len(given):
        problems.append("candidates must name each bot once")
    if given and not set(bots) - set(given):
        problems.append("a gauntlet needs at least one bot of bots that is not a candidate")
    return tuple(given)


def _sprt(
    given: object,
    bots: list[str],
    duplicate: object,
    problems: list[str],
    *,
    event: bool = False,
) -> TestSettings | None:
    """A match's sequential test (with ``event``, each tie's: a Swiss's or a knockout's),
    checked (problems added to ``problems``)."""
    if given is None:
        return None
    if not isinstance(given, dict):
        problems.append(
            '[sprt] must be a table: elo0, elo1, alpha, beta, or statistic = "margin" and '
            "effect0, effect1, alpha, beta"
        )
        return None
    if event and duplicate is not True:
        problems.append("an event's [sprt] needs duplicate on (it counts pairs)")
    elif not event and (len(bots) != 2 or duplicate is not True):
        problems.append("[sprt] needs exactly two bots and duplicate on (it counts pairs)")
    try:
        settings = settings_from_dict(given)
    except (TypeError, ValueError) as error:
        problems.append(f"[sprt]: {error}")
        return None
    if event and not isinstance(settings, SprtSettings):
        problems.append("an event's [sprt] tests the pairs' series scores: elo0, elo1 only")
        return None
    return settings


def _sections(data: JsonObject, problems: list[str]) -> tuple[TimeControl, FaultPolicy, RuleParams]:
    def table(key: str) -> JsonObject:
        section = data.get(key, {})
        if not isinstance(section, dict):
            raise TypeError("must be a table")
        return section

    def fields(
        key: str, kind: type[TimeControl | FaultPolicy], *, durations: bool = False
    ) -> JsonObject:
        """The table's fields, an unknown one (a typo) named with the known ones; with
        ``durations``, ``move_time = "1s"`` stands for ``move_time_ms = 1000``."""
        given = dict(table(key))
        known = {field.name for field in dataclasses.fields(kind)}
        if durations:
            known |= {name.removesuffix("_ms") for name in known}
        found = []
        unknown = sorted(set(given) - known)
        if unknown:
            names = ", ".join(f"'{name}'" for name in unknown)
            found.append(f"unknown field {names} (known: {', '.join(sorted(known))})")
        if durations:
            try:
                given = _durations({k: v for k, v in given.items() if k in known})
            except ValueError as error:
                found.append(str(error))
        if found:
            raise ValueError("; ".join(found))
        return given

    time_control, fault_policy, rules = TimeControl(), FaultPolicy(), RuleParams()
    try:
        time_control = TimeControl(**fields("time_control", TimeControl, durations=True))
    except (TypeError, ValueError) as error:
        problems.append(f"[time_control]: {error}")
    try:
        fault_policy = FaultPolicy(**fields("fault_policy", FaultPolicy))
    except (TypeError, ValueError) as error:
        problems.append(f"[fault_policy]: {error}")
    try:
        rules = RuleParams.from_dict(table("rules"))
    except (TypeError, ValueError) as error:
        problems.append(f"[rules]: {error}")
    return time_control, fault_policy, rules


def _durations(section: JsonObject) -> JsonObject:
    """A ``[time_control]`` table with its durations (``move_time = "1s"``) as the milliseconds
    of the ``_ms`` fields; any other key is left for the caller to judge.

    >>> _durations({"move_time": "500ms", "time_bank": "10s", "strikes": 3})
    {'strikes': 3, 'move_time_ms': 500, 'time_bank_ms': 10000}

    Raises:
        ValueError: every duration that is not one, and every limit given both ways.
    """
    found = dict(section)
    problems = []
    for name in ("move_time", "grace", "time_bank", "startup"):
        if name not in found:
            continue
        value = found.pop(name)
        if f"{name}_ms" in found:
            problems.append(f"give {name} or {name}_ms, not both")
        elif not isinstance(value, str):
            problems.append(f'{name} = {value!r}: a duration such as "1s" or "500ms"')
        else:
            try:
                found[f"{name}_ms"] = duration_ms(value)
            except ValueError as error:
                problems.append(f"{name}: {error}")
    if problems:
        raise ValueError("; ".join(problems))
    return found


def _league_file_bytes(path: Path) -> bytes:
    """A league file's bytes: a regular file of at most :data:`MAX_LEAGUE_FILE_BYTES`.

    A FIFO or a device is refused before it is read (its read would wait for a writer, or
    never end); it is opened without waiting, so even its open cannot hang.

    Raises:
        LeagueError: not a regular file, cannot be read, or too big.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise LeagueError(f"cannot read {path}: {error.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LeagueError(f"{path} is not a regular file: give a league's TOML file")
        os.set_blocking(fd, True)
        try:
            raw = handle.read(MAX_LEAGUE_FILE_BYTES + 1)
        except OSError as error:
            raise LeagueError(f"cannot read {path}: {error.strerror}") from None
    if len(raw) > MAX_LEAGUE_FILE_BYTES:
        raise LeagueError(f"{path} is over {MAX_LEAGUE_FILE_BYTES // 1024} KiB: not a league file")
    return raw


def load_league(path: Path, store: Store | None = None) -> LeagueConfig:
    """Read and check a league TOML file (with ``store``, its bots too: that they are submitted
    there, listed with every other problem).

    Raises:
        LeagueError: the file is missing, not TOML, or has problems (all listed).
    """
    raw = _league_file_bytes(path)
    try:
        data = loads_toml(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise LeagueError(f"{path} is not UTF-8 text (a TOML file is)") from None
    except tomllib.TOMLDecodeError as error:
        raise LeagueError(f"{path} is not valid TOML: {error}") from None
    except TooComplex as error:
        raise LeagueError(f"{path} is not a league file: {error}") from None
    if store is None:
        return LeagueConfig.from_dict(data)
    return LeagueConfig.from_dict(data, unknown_bot=lambda spec: _unknown(store, spec))


def _unknown(store: Store, spec: str) -> str | None:
    """Why ``spec`` names no submitted bot (``None``: it names one)."""
    try:
        resolve(store, spec)
    except RegistryError as error:
        return str(error)
    return None


def derive_seed(secret: bytes, pairing: str, index: int) -> int:
    """The deal seed of one series (or of one mirrored pair): a keyed hash of the league secret.

    >>> one = derive_seed(b"k" * 32, "a@1|b@1", 0)
    >>> one == derive_seed(b"k" * 32, "a@1|b@1", 0), one == derive_seed(b"j" * 32, "a@1|b@1", 0)
    (True, False)
    """
    message = f"hollywood-gin/league/v2/{pairing}/{index}".encode()
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big") >> 1


def public_seed(league_seed: int, pairing: str, index: int) -> int:
    """The deal seed of a league from before league secrets: the league seed alone decides it
    (kept so such leagues can still add bots)."""
    text = f"hollywood-gin/league/v1/{league_seed}/{pairing}/{index}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


def league_secret(config: LeagueConfig, home_secret: bytes) -> bytes:
    """A new league's secret: random without a seed; the seed keyed with ``home_secret`` (the
    store's own); with ``public_deals``, the seed alone (anyone can rebuild every deal).

    >>> plain, other = LeagueConfig("x", 7, ("a", "b")), LeagueConfig("y", 7, ("a", "b"))
    >>> league_secret(plain, b"h" * 32) == league_secret(plain, b"h" * 32)
    True
    >>> mine = league_secret(plain, b"h" * 32)
    >>> mine in (league_secret(plain, b"i" * 32), league_secret(other, b"h" * 32))
    False
    """
    if config.seed is None:
        return secrets.token_bytes(32)
    text = f"hollywood-gin/league-seed/v2/{config.name}/{config.seed}".encode()
    if config.public_deals:
        return hashlib.sha256(text).digest()
    return hmac.new(home_secret, text, hashlib.sha256).digest()


def _deal_seed(config: LeagueConfig, secret: bytes | None, pairing: str, deal: int) -> int:
    if secret is not None:
        return derive_seed(secret, pairing, deal)
    assert config.seed is not None, "a league without a secret has a public seed"
    return public_seed(config.seed, pairing, deal)


def match_id(league: str, first: str, second: str, index: int) -> str:
    """A readable, stable match id: ``league~first~second~index``."""
    return f"{league}~{first}~{second}~{index:03d}"


def play_match_id() -> str:
    """A fresh id for ``gin play``'s match: the time and random letters, nothing of the seed."""
    return f"play-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def play_seed(home_secret: bytes, seed: int) -> int:
    """The deal seed of ``gin play --seed``: the user's seed keyed with the store's secret.

    >>> play_seed(b"h" * 32, 7) == play_seed(b"h" * 32, 7) != play_seed(b"i" * 32, 7)
    True
    """
    message = f"hollywood-gin/play-seed/v2/{seed}".encode()
    return int.from_bytes(hmac.new(home_secret, message, hashlib.sha256).digest()[:8], "big") >> 1


def pairings(idents: Collection[str], candidates: Collection[str] = ()) -> list[tuple[str, str]]:
    """Who plays whom, each pairing in sorted order: a round robin, or with ``candidates`` (some
    of ``idents``) a gauntlet, each candidate against every other bot and nobody else.

    >>> pairings(["c", "a", "b"])
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    >>> pairings(["new", "a", "b", "next"], candidates=["new", "next"])
    [('a', 'new'), ('a', 'next'), ('b', 'new'), ('b', 'next')]
    """
    every = itertools.combinations(sorted(idents), 2)
    if not candidates:
        return list(every)
    return [pair for pair in every if (pair[0] in candidates) != (pair[1] in candidates)]


def schedule(
    config: LeagueConfig,
    idents: list[str],
    secret: bytes | None,
    candidates: Collection[str] = (),
) -> list[MatchRow]:
    """Every match between ``idents`` (resolved ``name@version``): a round robin, or with
    ``candidates`` (resolved, some of ``idents``) a gauntlet (see :func:`pairings`).

    Each pairing plays ``series_per_pairing`` series with seats alternating. With duplicate on,
    series 2k and 2k+1 share one seed: the same decks, seats swapped. Seeds derive from the
    league's ``secret`` (``None``: a league from before secrets, by its public seed), the
    pairing and the index alone, so a pairing's first series are the same whatever else the
    league holds.
    """
    rows = []
    for first, second in pairings(idents, candidates):
        rows += series_of(config, secret, first, second)
    return rows


def series_of(
    config: LeagueConfig, secret: bytes | None, first: str, second: str, start: int = 0
) -> list[MatchRow]:
    """The ``series_per_pairing`` series of one pairing (``first`` < ``second``), indices from
    ``start`` (an event's later ties of a pairing go on from its earlier ones), seats
    alternating; with duplicate on, series 2k and 2k+1 share one seed (k counted from 0, not
    from ``start``: an even ``start`` keeps the pairs aligned)."""
    pairing = f"{first}|{second}"
    rows = []
    for index in range(start, start + config.series_per_pairing):
        deal = index // 2 if config.duplicate else index
        seats = (first, second) if index % 2 == 0 else (second, first)
        mirror = None
        if config.duplicate and index % 2 == 1:
            mirror = match_id(config.name, first, second, index - 1)
        rows.append(
            MatchRow(
                match_id(config.name, first, second, index),
                config.name,
                pairing,
                index,
                seats[0],
                seats[1],
                _deal_seed(config, secret, pairing, deal),
                mirror,
                MatchState.PENDING,
                0,
                "",
            )
        )
    return rows


def create_league(store: Store, config: LeagueConfig) -> tuple[list[str], int]:
    """Resolve the bots, schedule the league, save it; returns (bots, new matches).

    Again with the same name it adds bots (to a gauntlet's field or its candidates); a
    ``series_per_pairing`` up to the stored one (grown by :func:`extend_league`) is no change.

    Raises:
        LeagueError: a bot is unknown, or an existing league of that name differs in more than
            added bots.
    """
    idents = _resolved(store, config.bots)
    stored = stored_league(store, config.name)
    _check_seeding_league(store, config, stored is not None)
    if stored is not None and (stored.config.event or config.event):
        if (stored.config, stored.resolved) != (config, tuple(idents)):
            raise LeagueError(
                f"league {config.name} exists, and an event's field and settings are fixed once "
                "it is created: create one with a new name"
            )
        return idents, 0
    if stored is not None:
        config = _settled(stored, config, idents)
    return idents, _save(store, StoredLeague(config, tuple(idents)))


def _check_seeding_league(store: Store, config: LeagueConfig, exists: bool) -> None:
    """An event seeded from another league's ratings names a league there is, not itself.

    Raises:
        LeagueError: it does not (left alone, the field was seeded in list order unsaid).
    """
    other = config.seeding.removeprefix("league:")
    if not config.event or other == config.seeding or exists:
        return
    if other == config.name or other not in store.leagues():
        raise LeagueError(
            f'seeding = "league:{other}" names no other league of the store (leagues: '
            f"{', '.join(store.leagues()) or 'none'}): give one whose ratings seed the field"
        )


def _resolved(store: Store, specs: Sequence[str]) -> list[str]:
    """The ``name@version`` of each bot a league names.

    Raises:
        LeagueError: listing every bot not submitted, and every bot named twice (a name and its
            ``name@version``, say: one bot may not play itself).
    """
    problems, idents, named = [], [], dict[str, str]()
    for spec in specs:
        try:
            ident = resolve(store, spec).ident
        except RegistryError as error:
            problems.append(str(error))
            continue
        if ident in named:
            problems.append(f"{named[ident]} and {spec} are the same bot ({ident}): name it once")
        named.setdefault(ident, spec)
        idents.append(ident)
    if len(problems) == 1:
        raise LeagueError(problems[0])
    if problems:
        raise LeagueError("bad league definition:\n" + "\n".join(f"  - {p}" for p in problems))
    return idents


def _settled(stored: StoredLeague, config: LeagueConfig, idents: list[str]) -> LeagueConfig:
    """``config`` as an existing league takes it (its stored series count, if not more).

    Raises:
        LeagueError: it differs from the stored one in more than added bots.
    """
    grown = stored.config.series_per_pairing
    if config.series_per_pairing > grown:
        raise LeagueError(
            f"league {config.name} has {grown} series per pairing: add series with "
            f"gin league extend {config.name} --series N"
        )
    config = dataclasses.replace(config, series_per_pairing=grown)
    before, after = (
        dataclasses.replace(c, bots=(), candidates=()) for c in (stored.config, config)
    )
    old = set(stored.resolved)
    again = StoredLeague(config, tuple(idents)).candidate_idents() & old
    turned = bool(config.candidates) != bool(stored.config.candidates)  # round robin <-> gauntlet
    if before != after or not old <= set(idents) or again != stored.candidate_idents() or turned:
        raise LeagueError(
            f"league {config.name} exists with other settings: only adding bots is allowed; "
            "create a league with a new name"
        )
    return config


def _save(store: Store, league: StoredLeague) -> int:
    """Schedule a league and save it (its new matches only); returns how many were new.

    Raises:
        LeagueError: the league would pass :data:`MAX_LEAGUE_MATCHES`.
    """
    config = league.config
    if config.event:  # its rounds are scheduled one at a time, as they are paired
        _check_event_size(config, len(league.resolved))
        fresh = league_secret(config, store.secret("home"))
        return store.save_league(config.name, league.to_json(), [], fresh)
    size = len(pairings(league.resolved, league.candidate_idents())) * config.series_per_pairing
    if size > MAX_LEAGUE_MATCHES:
        raise LeagueError(
            f"league {config.name} would have {size:,} matches; the limit is "
            f"{MAX_LEAGUE_MATCHES:,}: give fewer series per pairing (a league can grow later with "
            "gin league extend), or split it"
        )
    secret = store.league_secret(config.name)
    if secret is None:  # a new league, or one from before secrets: its new matches get one
        secret = league_secret(config, store.secret("home"))
    rows = schedule(config, list(league.resolved), secret, league.candidate_idents())
    return store.save_league(config.name, league.to_json(), rows, secret)


def _check_event_size(config: LeagueConfig, field: int) -> None:
    """An event's matches at the most (its rounds' ties, each of its series or, sequential, of
    its cap's pairs) within :data:`MAX_LEAGUE_MATCHES`, as a league's.

    Raises:
        LeagueError: past it.
    """
    ties = config.rounds * ((field + 1) // 2) if config.format == "swiss" else field - 1
    series = 2 * config.max_pairs if config.max_pairs else config.series_per_pairing
    if ties * series > MAX_LEAGUE_MATCHES:
        raise LeagueError(
            f"event {config.name} could have {ties * series:,} matches; the limit is "
            f"{MAX_LEAGUE_MATCHES:,}: give fewer series per tie"
            + (" or a lower max_pairs" if config.max_pairs else "")
        )


def extend_league(store: Store, name: str, series: int) -> tuple[LeagueConfig, int]:
    """Add ``series`` series to every pairing of a league, under new indices (so new seeds);
    no existing match changes. Returns the grown definition and how many matches are new.

    Raises:
        LeagueError: no such league, a count that is not positive (or odd, with duplicate on),
            or a league stored before its resolved bots were kept.
    """
    stored = stored_league(store, name)
    if stored is None:
        known = ", ".join(store.leagues()) or "none yet"
        raise LeagueError(f"no league {name!r} (leagues: {known})")
    config = stored.config
    if config.event:
        raise LeagueError(
            f"league {name} is a {config.format}: its ties have a fixed number of series, set "
            "when it was created"
        )
    if store.decision(name) is not None:
        raise LeagueError(
            f"match {name} is decided (its sequential test accepted a hypothesis): it plays no "
            "more series; start another with gin match ... --name NEW"
        )
    if series < 1 or (config.duplicate and series % 2):
        even = " and even (duplicate pairs)" if config.duplicate else ""
        raise LeagueError(f"--series must be positive{even}, not {series}")
    if len(stored.resolved) != len(config.bots):
        raise LeagueError(
            f"league {name} was stored before its bots' versions were kept: run gin league "
            "create with its file once, then extend it"
        )
    grown = dataclasses.replace(config, series_per_pairing=config.series_per_pairing + series)
    return grown, _save(store, StoredLeague(grown, stored.resolved))


@dataclass(frozen=True, slots=True)
class StoredLeague:
    """A league as the store keeps it: its definition, and the bots its names resolved to."""

    config: LeagueConfig
    resolved: tuple[str, ...]
    """``name@version`` of each bot (the definition may name the latest version only), in the
    definition's order."""

    def candidate_idents(self) -> set[str]:
        """The resolved candidates of a gauntlet (empty: a round robin)."""
        chosen = set(self.config.candidates)
        named = zip(self.config.bots, self.resolved, strict=False)  # none kept: from before
        return {ident for spec, ident in named if spec in chosen}

    def to_json(self) -> str:
        """The store's ``config`` column."""
        return json.dumps(
            {**self.config.to_dict(), "resolved": list(self.resolved)}, sort_keys=True
        )

    @classmethod
    def from_json(cls, text: str) -> StoredLeague:
        """Read :meth:`to_json`'s form (a league stored before a field existed gets its default).

        Raises:
            LeagueError: not a league definition.
        """
        try:
            data = loads_json(text)
        except ValueError as error:  # TooComplex too
            raise LeagueError(f"bad league definition: not JSON ({error})") from None
        if not isinstance(data, dict):
            raise LeagueError("bad league definition: not a JSON object")
        resolved = data.pop("resolved", [])
        return cls(LeagueConfig.from_dict(data), tuple(str(ident) for ident in resolved))


def stored_league(store: Store, name: str) -> StoredLeague | None:
    """A league as stored (``None``: there is none of that name).

    Raises:
        LeagueError: what is stored is not a league definition.
    """
    text = store.league_config(name)
    return None if text is None else StoredLeague.from_json(text)
