"""Duplicate deals mirror: in the two legs of a pair (one seed, the seats swapped) each bot holds,
hand by hand, the ten cards its opponent held in the other leg, and never its own cards again,
whoever deals (``docs/rules.md``, the deal).

The legs are played in-process by the sample policies. They soon differ (another bot wins a
hand, so another bot deals the next); the tests check that they did, so that the rule was put to
the test where the old dealing (by dealer) gave a bot that dealt the same hand in both legs the
same cards twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from referee.rules import (
    CardSet,
    Dealing,
    Policy,
    SeriesState,
    greedy_policy,
    observation,
    patient_policy,
)
from sample_bots.strong.strategy import StrongPolicy

Factory = Callable[[], Policy]


def greedy() -> Policy:
    return greedy_policy


def patient() -> Policy:
    return patient_policy


def strong() -> Policy:
    return StrongPolicy()


@dataclass(frozen=True)
class Dealt:
    """One hand as dealt: its dealer and each seat's ten cards."""

    dealer: int
    hands: tuple[CardSet, CardSet]


def play_dealt(first: Policy, second: Policy, seed: int, dealing: Dealing) -> list[Dealt]:
    """Play one series, ``first`` in seat 0; every hand as it was dealt."""
    series = SeriesState(seed, dealing=dealing)
    policies = (first, second)
    dealt = [Dealt(series.hand.dealer, series.hand.hands)]
    while not series.is_over:
        seat = series.to_move
        series.apply(policies[seat](observation(series, seat), series.legal_actions()))
        if not series.is_over and len(dealt) == series.hand_number:
            dealt.append(Dealt(series.hand.dealer, series.hand.hands))
    return dealt


@dataclass
class PairDeals:
    """What the hands played in both legs of pairs showed, counted from bot A's side."""

    aligned: int = 0
    """Hand numbers played in both legs."""
    same_dealer: int = 0
    """Of those, hands the same bot dealt in both legs (where dealing by dealer replicates)."""
    replicas: int = 0
    """Hands in which a bot held the same ten cards in both legs."""
    mirrored: int = 0
    """Hands in which each bot held, in leg 2, its opponent's cards of leg 1."""


def pair_deals(a: Factory, b: Factory, seeds: range, dealing: Dealing) -> PairDeals:
    """Play the duplicate pair of each seed (A in seat 0, then A in seat 1) and compare."""
    counts = PairDeals()
    for seed in seeds:
        first = play_dealt(a(), b(), seed, dealing)
        second = play_dealt(b(), a(), seed, dealing)
        for one, other in zip(first, second, strict=False):
            a_first, b_first = one.hands  # leg 1: A in seat 0
            b_second, a_second = other.hands  # leg 2: A in seat 1
            counts.aligned += 1
            counts.same_dealer += one.dealer != other.dealer  # seat 0 of leg 1 is seat 1 of leg 2
            counts.replicas += a_first == a_second or b_first == b_second
            counts.mirrored += a_second == b_first and b_second == a_first
    return counts


def assert_mirrored(counts: PairDeals) -> None:
    assert counts.replicas == 0, f"{counts.replicas} of {counts.aligned} hands dealt twice"
    assert counts.mirrored == counts.aligned
    assert counts.same_dealer >= counts.aligned // 5, "the legs never diverged: nothing tested"


def test_in_every_pair_each_bot_holds_its_opponents_cards_of_the_other_leg() -> None:
    assert_mirrored(pair_deals(greedy, patient, range(12), Dealing.BY_SEAT))


def test_dealing_by_dealer_deals_a_bot_the_same_cards_in_both_legs() -> None:
    """The control: the old rule (log formats 1 and 2) fails the check above."""
    counts = pair_deals(greedy, patient, range(8), Dealing.BY_DEALER)
    assert counts.same_dealer > 0
    assert counts.replicas == counts.same_dealer  # exactly the hands the same bot dealt twice
    assert counts.mirrored == counts.aligned - counts.same_dealer


def test_a_series_deals_by_seat_unless_told_otherwise() -> None:
    assert SeriesState(1).dealing is Dealing.BY_SEAT


@pytest.mark.slow
@pytest.mark.parametrize(("a", "b"), [(strong, greedy), (strong, patient)], ids=["sg", "sp"])
def test_pairs_of_the_strong_policy_mirror(a: Factory, b: Factory) -> None:
    assert_mirrored(pair_deals(a, b, range(16), Dealing.BY_SEAT))
