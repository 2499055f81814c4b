"""The defender's layoffs: chains, broken melds, the knocker's layout, and a brute force."""

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import knock_layout, lay_off, parse_cards
from referee.rules.layoffs import no_layoffs
from referee.rules.melds import MELDS_BY_MASK
from tests.brute import brute_deadwood


def laid(knocker: list[str], defender: str) -> tuple[int, list[str]]:
    result = lay_off(knocker, defender)
    return result.deadwood, sorted(str(layoff.cards) for layoff in result.laid_off)


def test_chains_at_both_ends_of_a_run() -> None:
    assert laid(["6h 7h 8h"], "4h 5h 9h Th Kc") == (10, ["4h 5h 9h Th"])


def test_chain_needs_the_near_card_first() -> None:
    assert laid(["Ac 2c 3c"], "4c 5c Kd") == (10, ["4c 5c"])
    # Without the 4c, the 5c cannot be laid off.
    assert laid(["Ac 2c 3c"], "5c Kd") == (15, [])


def test_fourth_card_onto_a_set_but_nothing_onto_four() -> None:
    assert laid(["9c 9d 9h"], "9s 2c") == (2, ["9s"])
    assert laid(["9c 9d 9h 9s"], "Tc 2c") == (12, [])


def test_breaking_own_meld_to_lay_off_when_it_helps() -> None:
    # Keeping the jack set leaves 9c Tc Qh (29); laying Jh Qh onto 8h-Th dissolves it, and Jc
    # joins 9c Tc in a run: only Jd is left (10).
    assert laid(["8h 9h Th"], "Jc Jd Jh Qh 9c Tc") == (10, ["Jh Qh"])
    # Peeling 8h off four eights: the three left still meld, and 9h follows it (0, not 9).
    assert laid(["5h 6h 7h"], "8c 8d 8h 8s 9h") == (0, ["8h 9h"])


def test_own_meld_kept_when_breaking_it_hurts() -> None:
    # 8h would fit the knocker's eights, but it belongs to the defender's own run.
    result = lay_off(["8c 8d 8s"], "8h 9h Th 2c")
    assert result.deadwood == 2
    assert result.laid_off == ()
    assert [str(meld) for meld in result.melds] == ["8h 9h Th"]


def test_card_fitting_a_set_and_a_run_goes_on_the_run_so_the_next_can_follow() -> None:
    # Th fits the ten set and the 7h-9h run; only on the run can Jh follow.
    assert laid(["Tc Td Ts", "7h 8h 9h"], "Th Jh 2c") == (2, ["Th Jh"])


def test_same_card_cannot_extend_two_melds() -> None:
    # 7c is the fourth seven and extends 4c-6c: it goes on one of them only.
    result = lay_off(["7d 7h 7s", "4c 5c 6c"], "7c Kd")
    assert result.deadwood == 10
    assert len(result.laid_off) == 1


def test_knockers_layout_changes_the_defenders_layoffs() -> None:
    knocker = parse_cards("5c 6c 7c 5d 6d 7d 5h 6h 7h")
    defender = "4c 8d 5s Kd"
    as_sets = ["5c 5d 5h", "6c 6d 6h", "7c 7d 7h"]
    as_runs = ["5c 6c 7c", "5d 6d 7d", "5h 6h 7h"]
    assert laid(as_sets, defender) == (22, ["5s"])
    assert laid(as_runs, defender) == (15, ["4c", "8d"])
    # The referee's own layout of these cards is the one that leaves fewer spots: sets.
    layout = knock_layout(knocker | parse_cards("Ks"))
    assert sorted(str(meld) for meld in layout.melds) == as_sets


def test_no_layoffs_against_gin() -> None:
    result = no_layoffs("4h 5h 9h Th Kc")
    assert result.laid_off == ()
    assert result.deadwood == 4 + 5 + 9 + 10 + 10


def brute_layoff(knocker: list[int], defender: int) -> int:
    """Try every assignment of every subset of defender cards onto the knocker's melds."""
    best = brute_deadwood(defender)
    cards = [card for card in range(52) if defender >> card & 1]
    for size in range(1, min(len(cards), 5) + 1):
        for subset in itertools.combinations(cards, size):
            for targets in itertools.product(range(len(knocker)), repeat=size):
                grown = list(knocker)
                for card, target in zip(subset, targets, strict=True):
                    grown[target] |= 1 << card
                if all(meld in MELDS_BY_MASK for meld in grown):
                    rest = defender & ~sum(1 << card for card in subset)
                    best = min(best, brute_deadwood(rest))
    return best


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False))
def test_lay_off_equals_brute_force(rng: random.Random) -> None:
    # A knocker layout from a meld-rich 10-card hand, a defender from the cards left near it.
    pool = [suit * 13 + rank for suit in range(4) for rank in range(2, 10)]
    rng.shuffle(pool)
    knocker_cards = sum(1 << card for card in pool[:10])
    melds = list(knock_layout(pool[:10]).melds)
    if not melds:
        return
    defender = sum(1 << card for card in pool[10:17])
    result = lay_off(melds, pool[10:17])
    assert result.deadwood == brute_layoff([meld.mask for meld in melds], defender)
    assert not knocker_cards & defender
