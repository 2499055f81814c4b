"""Our rules engine against OpenSpiel and RLCard, side by side in one process and one run.

    python -m benchmarks.rules_bench [--quick] [--runs N] [--json FILE] [--seed S]

Three measurements, each with its variants interleaved round-robin over the runs (see
:mod:`benchmarks.harness`):

1. ``min_deadwood`` of random 10-card hands.
2. The best discard of random 11-card hands (least deadwood after one discard).
3. Whole hands of uniform-random play, driven from Python.

Hands are drawn once from the seed, fresh for each run (the same hands for every variant of that
run) and turned into each library's own card form before any timing. After timing, every engine
is asked the same questions about the timed hands and any disagreement is printed with its hand.
A peer that is not installed is skipped with the reason; ``make bench`` installs them.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from rich.console import Console

from benchmarks.agreement import Agreement, Judge, compare
from benchmarks.harness import (
    OURS,
    Variant,
    environment,
    loadavg,
    round_robin,
)
from benchmarks.peers import KNOCK_LIMIT, OpenSpiel, RLCard, Skipped, load_openspiel, load_rlcard
from benchmarks.play import PlayStats, play_openspiel, play_ours
from benchmarks.report import Section, play_notes, print_section, section_json
from referee.rules import Card, CardSet, best_discards, card_set, min_deadwood, parse_cards

T = TypeVar("T")
Hands = list[list[Card]]
"""One batch of hands, each a list of our cards in the order drawn."""

WARM_HANDS = 200
WARM_GAMES = 3


@dataclass(frozen=True)
class Config:
    """What to run."""

    runs: int
    seed: int
    hands10: int
    hands11: int
    games: int
    check_hands: int
    quick: bool
    json_path: Path | None


@dataclass
class Peers:
    """The peers that loaded, and the ones skipped."""

    openspiel: OpenSpiel | None
    rlcard: RLCard | None
    skipped: list[Skipped]


# --- command line ------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> Config:
    """Read the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.rules_bench",
        description="Time our Gin rules against OpenSpiel and RLCard, interleaved, in one run.",
    )
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke test")
    parser.add_argument("--runs", type=int, help="interleaved runs (default 5, quick 2)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    parser.add_argument("--seed", type=int, default=2024, help="seed of all hands (default 2024)")
    parser.add_argument("--hands10", type=int, help="10-card hands per run (default 20000)")
    parser.add_argument("--hands11", type=int, help="11-card hands per run (default 10000)")
    parser.add_argument("--games", type=int, help="random-play hands per run (default 300)")
    parser.add_argument(
        "--check-hands", type=int, help="meld-rich hands for the untimed cross-checks (20000)"
    )
    args = parser.parse_args(argv)
    quick = bool(args.quick)

    def pick(given: int | None, smoke: int, full: int) -> int:
        if given is not None:
            return given
        return smoke if quick else full

    config = Config(
        runs=pick(args.runs, 2, 5),
        seed=args.seed,
        hands10=pick(args.hands10, 500, 20000),
        hands11=pick(args.hands11, 300, 10000),
        games=pick(args.games, 10, 300),
        check_hands=pick(args.check_hands, 300, 20000),
        quick=quick,
        json_path=args.json,
    )
    if min(config.runs, config.hands10, config.hands11, config.games, config.check_hands) < 1:
        parser.error("--runs, --hands10, --hands11, --games and --check-hands must be at least 1")
    return config


def load_peers() -> Peers:
    """Import every peer that is installed."""
    openspiel = load_openspiel()
    rlcard = load_rlcard()
    skipped = [peer for peer in (openspiel, rlcard) if isinstance(peer, Skipped)]
    return Peers(
        openspiel if isinstance(openspiel, OpenSpiel) else None,
        rlcard if isinstance(rlcard, RLCard) else None,
        skipped,
    )


# --- inputs ------------------------------------------------------------------------------------


def draw_batches(seed: int, size: int, runs: int, count: int) -> list[Hands]:
    """One batch of ``count`` random hands of ``size`` cards per run, then a small warm-up batch.

    Each batch comes from its own generator, so run ``r`` gets the same hands whatever the other
    counts are.
    """
    batches = []
    for index in range(runs + 1):
        rng = random.Random(f"hands/{seed}/{size}/{index}")
        amount = count if index < runs else min(count, WARM_HANDS)
        batches.append([[Card(n) for n in rng.sample(range(52), size)] for _ in range(amount)])
    return batches


def convert(batches: list[Hands], to_native: Callable[[list[Card]], T]) -> list[list[T]]:
    """Every hand of every batch in a library's own form."""
    return [[to_native(cards) for cards in batch] for batch in batches]


def timed_calls(
    function: Callable[[T], object],
    batches: list[list[T]],
    *,
    key: str,
    library: str,
    call: str,
    returns: str,
) -> Variant:
    """A variant that calls ``function`` once per hand of the run's batch."""

    def run(index: int) -> int:
        hands = batches[index]
        for hand in hands:
            function(hand)
        return len(hands)

    return Variant(key, library, call, returns, run, functools.partial(run, len(batches) - 1))


def timed_hands(batches: list[Hands]) -> list[list[Card]]:
    """Every hand that was timed (the warm-up batch left out)."""
    return [cards for batch in batches[:-1] for cards in batch]


def our_hand(cards: list[Card]) -> CardSet:
    """Our native form: a card set."""
    return card_set(cards)


def random_meld(rng: random.Random) -> list[int]:
    """Card numbers (``suit * 13 + rank``) of a random set or run of 3 to 5 cards."""
    if rng.random() < 0.5:  # sets and runs equally often
        rank = rng.randrange(13)
        return [suit * 13 + rank for suit in rng.sample(range(4), rng.choice((3, 4)))]
    length = rng.choice((3, 4, 5))
    suit, start = rng.randrange(4), rng.randrange(14 - length)
    return [suit * 13 + rank for rank in range(start, start + length)]


def meld_rich_hand(rng: random.Random, size: int) -> list[Card]:
    """Up to three random disjoint melds, filled up with random cards, in shuffled order."""
    chosen: set[int] = set()
    for _ in range(rng.randint(1, 3)):
        meld = random_meld(rng)
        if chosen.isdisjoint(meld) and len(chosen) + len(meld) <= size:
            chosen.update(meld)
    chosen.update(rng.sample(sorted(set(range(52)) - chosen), size - len(chosen)))
    cards = [Card(n) for n in chosen]
    rng.shuffle(cards)
    return cards


def meld_rich_hands(config: Config, size: int) -> list[list[Card]]:
    """Untimed extra hands for the cross-checks: random hands seldom hold several melds."""
    rng = random.Random(f"meld-rich/{config.seed}/{size}")
    return [meld_rich_hand(rng, size) for _ in range(config.check_hands)]


# --- 1. min_deadwood ---------------------------------------------------------------------------


def deadwood_variants(batches: list[Hands], peers: Peers) -> list[Variant]:
    """The 10-card minimum-deadwood calls of each library."""
    variants = [
        timed_calls(
            min_deadwood,
            convert(batches, our_hand),
            key="ours",
            library=OURS,
            call="referee.rules.min_deadwood(CardSet)",
            returns="Arrangement: min deadwood and one best set of melds",
        )
    ]
    if peers.openspiel is not None:
        variants.append(
            timed_calls(
                peers.openspiel.min_deadwood,
                convert(batches, peers.openspiel.hand),
                key="openspiel",
                library=OpenSpiel.library,
                call="pyspiel.gin_rummy.GinRummyUtils(13, 4, 10).min_deadwood(list[int])",
                returns="int: min deadwood (C++ search over all meld groups)",
            )
        )
    if peers.rlcard is not None:
        variants.append(
            timed_calls(
                peers.rlcard.min_deadwood,
                convert(batches, peers.rlcard.hand),
                key="rlcard",
                library=RLCard.library,
                call=(
                    "melding.get_best_meld_clusters(hand)[0] (or []) then "
                    "utils.get_deadwood_count(hand, cluster)"
                ),
                returns="int: min deadwood (as RLCard's own scoring step computes it)",
            )
        )
    return variants


def deadwood_judges(peers: Peers) -> dict[str, Judge]:
    """Who answers "least deadwood of these 10 cards"."""
    judges: dict[str, Judge] = {OURS: lambda cards: min_deadwood(card_set(cards)).deadwood}
    if (openspiel := peers.openspiel) is not None:
        judges[openspiel.library] = lambda cards: openspiel.min_deadwood(openspiel.hand(cards))
    if (rlcard := peers.rlcard) is not None:
        judges[rlcard.library] = lambda cards: rlcard.min_deadwood(rlcard.hand(cards))
    return judges


def bench_min_deadwood(config: Config, peers: Peers, progress: Callable[[str], None]) -> Section:
    """Measurement 1."""
    batches = draw_batches(config.seed, 10, config.runs, config.hands10)
    measured = round_robin(deadwood_variants(batches, peers), config.runs, progress)
    judges = deadwood_judges(peers)
    agreements = [
        compare("[timed random hands] min deadwood of 10 cards", timed_hands(batches), judges),
        compare("[meld-rich hands] min deadwood of 10 cards", meld_rich_hands(config, 10), judges),
    ]
    return Section(
        "min_deadwood", "1. min_deadwood, random 10-card hands", "calls", measured, agreements
    )


# --- 2. best discard ---------------------------------------------------------------------------


def discard_variants(batches: list[Hands], peers: Peers) -> list[Variant]:
    """The 11-card best-discard calls of each library."""
    variants = [
        timed_calls(
            best_discards,
            convert(batches, our_hand),
            key="ours",
            library=OURS,
            call="referee.rules.best_discards(CardSet)",
            returns="exact min deadwood after a discard, and every discard reaching it",
        )
    ]
    if peers.openspiel is not None:
        variants.extend(openspiel_discard_variants(peers.openspiel, batches))
    if peers.rlcard is not None:
        variants.extend(rlcard_discard_variants(peers.rlcard, batches))
    return variants


def openspiel_discard_variants(openspiel: OpenSpiel, batches: list[Hands]) -> list[Variant]:
    """OpenSpiel has no exact best-discard call: three ways of asking it."""
    hands = convert(batches, openspiel.hand)
    return [
        timed_calls(
            openspiel.min_over_discards,
            hands,
            key="openspiel_min_over_discards",
            library=openspiel.library,
            call="min over the 11 discards of GinRummyUtils.min_deadwood(10 cards), Python loop",
            returns="exact min deadwood after a discard (value only)",
        ),
        timed_calls(
            openspiel.min_deadwood,
            hands,
            key="openspiel_min_deadwood_11",
            library=openspiel.library,
            call="GinRummyUtils.min_deadwood(11 cards)",
            returns="heuristic: meld first, drop the highest leftover (not always the min)",
        ),
        timed_calls(
            openspiel.legal_discards,
            hands,
            key="openspiel_legal_discards",
            library=openspiel.library,
            call=f"GinRummyUtils.legal_discards(11 cards, {KNOCK_LIMIT})",
            returns=f"discards leaving deadwood <= {KNOCK_LIMIT} (no min value)",
        ),
    ]


def rlcard_discard_variants(rlcard: RLCard, batches: list[Hands]) -> list[Variant]:
    """RLCard has no best-discard call either: two ways of asking it."""
    hands = convert(batches, rlcard.hand)
    return [
        timed_calls(
            rlcard.min_after_discard,
            hands,
            key="rlcard_cluster_min",
            library=rlcard.library,
            call=(
                "min over melding.get_meld_clusters(11 cards) and no melds of "
                "(unmelded value - largest unmelded card)"
            ),
            returns="exact min deadwood after a discard (value only)",
        ),
        timed_calls(
            rlcard.going_out_cards,
            hands,
            key="rlcard_going_out_cards",
            library=rlcard.library,
            call=f"judge.get_going_out_cards(11 cards, {KNOCK_LIMIT})",
            returns=f"(knock cards, gin cards): discards leaving deadwood <= {KNOCK_LIMIT}",
        ),
    ]


TIE_BREAK_HAND = "3c 6s 3s 7d Ac 4s 3h 9d 8d 2c 5s"
"""Random hands rarely expose OpenSpiel's 11-card shortcut; this one does (true minimum 0)."""


def our_knock_discards(cards: list[Card]) -> frozenset[str]:
    """Our discards that leave a knockable hand, from ``min_deadwood`` of each keep."""
    hand = card_set(cards)
    return frozenset(
        str(card)
        for card in cards
        if min_deadwood(hand - CardSet(card.bit)).deadwood <= KNOCK_LIMIT
    )


HEURISTIC = "OpenSpiel min_deadwood(11 cards) against the exact minimum"


def discard_questions(peers: Peers) -> dict[str, tuple[dict[str, Judge], str]]:
    """Each 11-card question: who answers it, and what to expect if they differ."""
    exact: dict[str, Judge] = {OURS: lambda cards: best_discards(card_set(cards))[0]}
    which: dict[str, Judge] = {
        OURS: lambda cards: frozenset(map(str, best_discards(card_set(cards))[1]))
    }
    knock: dict[str, Judge] = {OURS: our_knock_discards}
    heuristic: dict[str, Judge] = {OURS: exact[OURS]}
    if (openspiel := peers.openspiel) is not None:
        name = openspiel.library
        exact[name] = lambda cards: openspiel.min_over_discards(openspiel.hand(cards))
        which[name] = lambda cards: frozenset(
            map(openspiel.card_name, openspiel.best_discards(openspiel.hand(cards))[1])
        )
        knock[name] = lambda cards: frozenset(
            map(openspiel.card_name, openspiel.legal_discards(openspiel.hand(cards)))
        )
        heuristic[f"{name} min_deadwood(11)"] = lambda cards: openspiel.min_deadwood(
            openspiel.hand(cards)
        )
    if (rlcard := peers.rlcard) is not None:
        exact[rlcard.library] = lambda cards: rlcard.min_after_discard(rlcard.hand(cards))
        knock[rlcard.library] = lambda cards: rlcard.going_out_names(rlcard.hand(cards))
    knock_question = (
        f"discards leaving deadwood <= {KNOCK_LIMIT} (ours; legal_discards; get_going_out_cards)"
    )
    return {
        "exact min deadwood after one discard": (exact, ""),
        "set of best discards (ours vs OpenSpiel brute force)": (which, ""),
        knock_question: (knock, ""),
        HEURISTIC: (heuristic, "OpenSpiel's 11-card shortcut is a known heuristic"),
    }


def discard_agreements(label: str, hands: list[list[Card]], peers: Peers) -> list[Agreement]:
    """Cross-check the 11-card answers of every engine on some hands."""
    return [
        compare(f"[{label}] {question}", hands, judges, expected)
        for question, (judges, expected) in discard_questions(peers).items()
    ]


def tie_break_agreement(peers: Peers) -> Agreement:
    """OpenSpiel's 11-card shortcut on a hand known to fool it."""
    judges, _ = discard_questions(peers)[HEURISTIC]
    return compare(
        "[fixed hand] OpenSpiel min_deadwood(11 cards), where throwing a three goes gin",
        [list(parse_cards(TIE_BREAK_HAND))],
        judges,
        "expected: melding first and dropping the highest leftover misses it",
    )


def bench_best_discards(config: Config, peers: Peers, progress: Callable[[str], None]) -> Section:
    """Measurement 2."""
    batches = draw_batches(config.seed, 11, config.runs, config.hands11)
    measured = round_robin(discard_variants(batches, peers), config.runs, progress)
    return Section(
        "best_discards",
        "2. best discard, random 11-card hands",
        "calls",
        measured,
        [
            *discard_agreements("timed random hands", timed_hands(batches), peers),
            *discard_agreements("meld-rich hands", meld_rich_hands(config, 11), peers),
            tie_break_agreement(peers),
        ],
    )


# --- 3. random play ----------------------------------------------------------------------------


def play_variants(config: Config, peers: Peers, stats: dict[str, PlayStats]) -> list[Variant]:
    """Whole random hands: ours, and OpenSpiel's game driven from Python."""
    seed, games = config.seed, config.games
    stats[OURS] = PlayStats()
    variants = [
        Variant(
            "ours",
            OURS,
            "HandState.deal(shuffled_deck(seed, i), dealer=0, params=RuleParams()), then "
            "legal_actions() / rng.choice / apply() until is_over",
            "a finished hand (knock layout, layoffs and score included)",
            lambda run: play_ours(seed, run * games, games, stats[OURS]),
            lambda: play_ours(seed + 1, 0, WARM_GAMES, PlayStats()),
        )
    ]
    if (openspiel := peers.openspiel) is not None:
        game = openspiel.game
        stats[openspiel.library] = PlayStats()
        variants.append(
            Variant(
                "openspiel",
                openspiel.library,
                'load_game("gin_rummy").new_initial_state(), then chance_outcomes() (uniform) '
                "or legal_actions() / rng.choice / apply_action() until is_terminal()",
                "a finished hand (knock, meld and layoff steps are separate decisions)",
                lambda run: play_openspiel(
                    game, seed, run * games, games, stats[openspiel.library]
                ),
                lambda: play_openspiel(game, seed + 1, 0, WARM_GAMES, PlayStats()),
            )
        )
    return variants


def bench_play(config: Config, peers: Peers, progress: Callable[[str], None]) -> Section:
    """Measurement 3."""
    stats: dict[str, PlayStats] = {}
    measured = round_robin(play_variants(config, peers, stats), config.runs, progress)
    return Section(
        "random_play",
        "3. whole hands, uniform-random play (both seats)",
        "hands",
        measured,
        play=stats,
    )


# --- report


def print_header(console: Console, env: dict[str, object], config: Config, peers: Peers) -> None:
    """Machine, versions, method and what was skipped."""
    load = env["loadavg_start"]
    loads = " ".join(f"{value:.2f}" for value in load) if isinstance(load, tuple) else "n/a"
    versions = env["versions"]
    console.print("[bold]Rules benchmark: ours vs OpenSpiel vs RLCard[/bold]")
    lines = [
        f"Python {env['python']} ({env['implementation']}) on {env['platform']}",
        f"CPUs: {env['cpu_count']} (usable by this process: {env['usable_cpus']}); "
        f"loadavg 1/5/15 min: {loads}",
        f"versions: {versions}",
        f"method: {config.runs} runs, variants interleaved round-robin (the first variant rotates "
        "each run); figures are medians over runs, ranges are slowest-fastest run; "
        "'ours ÷ peer' is the median of per-run rate ratios (above 1: ours is faster)",
        "wall clock (time.perf_counter), one process, one thread; garbage collected before each "
        "batch, collector left on; a small untimed warm-up batch per variant first",
        f"inputs: seed {config.seed}; per run {config.hands10} 10-card hands, "
        f"{config.hands11} 11-card hands, {config.games} random-play hands "
        "(fresh hands each run; the same hands for every variant of a run; converted to each "
        "library's native cards before timing); untimed cross-checks also on "
        f"{config.check_hands} meld-rich hands of 10 and of 11 cards",
    ]
    for line in lines:
        console.print(line, highlight=False, markup=False)
    for skipped in peers.skipped:
        console.print(
            f"SKIPPED {skipped.library}: {skipped.reason} (make bench installs it)",
            highlight=False,
            markup=False,
        )


# --- JSON --------------------------------------------------------------------------------------


def write_json(
    path: Path, env: dict[str, object], config: Config, peers: Peers, sections: list[Section]
) -> None:
    """Save everything in one file."""
    document = {
        "environment": env | {"loadavg_end": loadavg()},
        "config": {
            "runs": config.runs,
            "seed": config.seed,
            "hands10": config.hands10,
            "hands11": config.hands11,
            "games": config.games,
            "check_hands": config.check_hands,
            "quick": config.quick,
        },
        "skipped": {skipped.library: skipped.reason for skipped in peers.skipped},
        "sections": {section.key: section_json(section) for section in sections},
    }
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


# --- main --------------------------------------------------------------------------------------


def make_console() -> Console:
    """Standard output; wide enough for the tables when it is not a terminal."""
    return Console() if sys.stdout.isatty() else Console(width=180)


def progress_for(status: Console, name: str) -> Callable[[str], None]:
    """A progress callback that logs ``name: text`` to standard error."""

    def progress(text: str) -> None:
        status.log(f"{name}: {text}")

    return progress


def main(argv: Sequence[str] | None = None) -> int:
    """Run all three measurements and print the report."""
    config = parse_args(argv)
    console = make_console()
    status = Console(stderr=True, log_path=False)
    started = time.perf_counter()
    env = environment()
    peers = load_peers()
    print_header(console, env, config, peers)
    sections = []
    for bench in (bench_min_deadwood, bench_best_discards, bench_play):
        name = bench.__name__.removeprefix("bench_")
        section = bench(config, peers, progress_for(status, name))
        if section.play:
            section.notes.extend(play_notes(section))
        print_section(console, section, config.runs)
        sections.append(section)
    end_load = loadavg()
    console.print()
    console.print(
        f"loadavg at the end: {' '.join(f'{value:.2f}' for value in end_load or ())}; "
        f"total {time.perf_counter() - started:.1f} s",
        highlight=False,
        markup=False,
    )
    if config.json_path is not None:
        write_json(config.json_path, env, config, peers, sections)
        console.print(f"JSON written to {config.json_path}", highlight=False, markup=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
