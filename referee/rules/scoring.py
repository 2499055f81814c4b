"""Scoring one hand, and the Hollywood score sheet (three games at once)."""

from __future__ import annotations

from typing import Literal

from referee.rules.params import RuleParams

DEFAULT_PARAMS = RuleParams()


def score_hand(
    knocker_deadwood: int,
    defender_deadwood: int,
    gin: bool,
    params: RuleParams = DEFAULT_PARAMS,
) -> tuple[Literal["knocker", "defender"], int]:
    """Who scores a knocked hand, and how many points.

    >>> score_hand(0, 31, gin=True)            # gin: 25 + D
    ('knocker', 56)
    >>> score_hand(7, 20, gin=False)           # knock: D - K
    ('knocker', 13)
    >>> score_hand(8, 3, gin=False)            # undercut: 10 + (K - D)
    ('defender', 15)
    >>> score_hand(6, 6, gin=False)            # a tie is an undercut
    ('defender', 10)
    >>> score_hand(0, 0, gin=True, params=RuleParams(gin_bonus=20))
    ('knocker', 20)

    Raises:
        ValueError: a negative deadwood, or gin with knocker deadwood above 0.
    """
    if knocker_deadwood < 0 or defender_deadwood < 0:
        raise ValueError("deadwood cannot be negative")
    if gin:
        if knocker_deadwood != 0:
            raise ValueError(f"gin needs knocker deadwood 0, not {knocker_deadwood}")
        return "knocker", params.gin_bonus + defender_deadwood
    if knocker_deadwood < defender_deadwood:
        return "knocker", defender_deadwood - knocker_deadwood
    if knocker_deadwood == defender_deadwood and not params.undercut_on_tie:
        return "knocker", 0
    return "defender", params.undercut_bonus + knocker_deadwood - defender_deadwood


class HollywoodScore:
    """The score sheet of one series: three games (one in plain Gin Rummy), scored at once.

    A player's wins are entered in every still-open game they have already entered, and each win
    also opens the lowest still-open game they have not entered yet. With no game ended this is
    the classic first win → game 1, second → games 1-2, third and later → all three; if a game
    ends before a player's first win there, the win goes to the next open game (the shut-out
    ruling). The sources' worked example:

    >>> sheet = HollywoodScore()
    >>> [sheet.record(seat, points) for seat, points in [(1, 10), (0, 18), (1, 30), (1, 4)]]
    [(0,), (0,), (0, 1), (0, 1, 2)]
    >>> sheet.totals(0), sheet.totals(1)
    ((18, 0, 0), (44, 34, 4))
    >>> sheet.games_over, sheet.game_winners, sheet.winner
    ((False, False, False), (None, None, None), None)

    Raises:
        ValueError: from :meth:`record`, on a bad seat, negative points or a finished series.
    """

    def __init__(self, params: RuleParams = DEFAULT_PARAMS) -> None:
        self.params = params
        self._totals = [[0] * params.games for _ in range(2)]
        self._entered = [[False] * params.games for _ in range(2)]
        self._winners: list[int | None] = [None] * params.games
        self._closed = [False] * params.games

    def record(self, seat: int, points: int) -> tuple[int, ...]:
        """Enter one won hand for ``seat`` (0 or 1); returns the games (0-based) it went into.

        A drawn hand is not recorded. Points are never entered into an ended game.

        Raises:
            ValueError: a seat other than 0 or 1, negative points, or every game already over.
        """
        if seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, not {seat!r}")
        if points < 0:
            raise ValueError(f"points cannot be negative: {points}")
        if all(self._closed):
            raise ValueError("every game of this series is already over")
        games = self._games_for(seat)
        for game in games:
            self._entered[seat][game] = True
            self._totals[seat][game] += points
            if self._totals[seat][game] >= self.params.game_target:
                self._closed[game] = True
                self._winners[game] = seat
        return games

    def _games_for(self, seat: int) -> tuple[int, ...]:
        entered = self._entered[seat]
        open_games = [game for game in range(self.params.games) if not self._closed[game]]
        games = [game for game in open_games if entered[game]]
        fresh = [game for game in open_games if not entered[game]]
        if fresh:
            games.append(fresh[0])
        return tuple(sorted(games))

    def close_capped(self) -> None:
        """End every open game at the hand cap: the leader wins it, a tie leaves it unwon."""
        for game in range(self.params.games):
            if self._closed[game]:
                continue
            self._closed[game] = True
            first, second = self._totals[0][game], self._totals[1][game]
            if first != second:
                self._winners[game] = 0 if first > second else 1

    def totals(self, seat: int) -> tuple[int, ...]:
        """The seat's total in each game (three ints, or one in plain Gin Rummy)."""
        return tuple(self._totals[seat])

    @property
    def games_over(self) -> tuple[bool, ...]:
        """Whether each game has ended."""
        return tuple(self._closed)

    @property
    def game_winners(self) -> tuple[int | None, ...]:
        """The seat that won each game (``None``: still open, or unwon at the hand cap)."""
        return tuple(self._winners)

    @property
    def games_won(self) -> tuple[int, int]:
        """How many games each seat has won."""
        return (self._winners.count(0), self._winners.count(1))

    @property
    def winner(self) -> int | None:
        """The seat that has won a majority of the games (two of three), else ``None``."""
        need = self.params.games // 2 + 1
        for seat in (0, 1):
            if self._winners.count(seat) >= need:
                return seat
        return None

    @property
    def over(self) -> bool:
        """Whether every game has ended."""
        return all(self._closed)

    def __repr__(self) -> str:
        return f"HollywoodScore(totals={self._totals}, winners={self._winners})"
