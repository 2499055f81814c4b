"""Reading and verifying match logs: golden logs, hand-made corruptions, the seat views."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.faults import BotCrashed, StartupFailure
from referee.matchlog import LOG_FORMAT, hand_salt, seed_commitment
from referee.replay import (
    BadRecord,
    LogNotFound,
    LogReadError,
    Replay,
    StepKind,
    VerifyStatus,
    build_replay,
    find_log,
    known_formats,
    load_replay,
    read_log,
    verify_log,
)
from referee.rules import (
    CardSet,
    RandomPolicy,
    dealt_deck,
    deck_commitment,
    greedy_policy,
    patient_policy,
    shuffled_deck,
)
from referee.seats import Decision, InProcessSeat
from tests.replay_logs import (
    Blunders,
    play_golden_bank,
    play_golden_strikes,
    play_log,
    write_log,
)
from tournaments.views.words import step_text

GOLDEN = Path(__file__).parent / "golden"
STRIKES = GOLDEN / "format1-strikes.jsonl"
"""In-process seats, seed 12: two illegal answers (strikes, referee substitutes), forced draws,
knocks, undercuts, layoffs and a hand drawn when the stock ran out."""
SANDBOXED = GOLDEN / "format1-sandboxed.jsonl"
"""Real sandboxed bot processes (greedy vs random, seed 5) with real decision times."""
STRIKES2 = GOLDEN / "format2-strikes.jsonl"
"""Format 2 (salted commitments, dealt by dealer): ``tests.replay_logs.play_golden_strikes`` as
the referee played it before format 3."""
BANK = GOLDEN / "format2-bank.jsonl"
"""A seat that spends its time bank, then times out: see ``tests.replay_logs.play_golden_bank``."""
STRIKES3 = GOLDEN / "format3-strikes.jsonl"
"""Today's format (dealt by seat): ``play_golden_strikes`` as the referee plays it now."""
BANK3 = GOLDEN / "format3-bank.jsonl"
"""``play_golden_bank`` in today's format (both its hands dealt by seat 1, where the two dealings
agree: the same records as ``BANK`` but the format)."""

Records = list[dict[str, Any]]


def records(path: Path = STRIKES) -> Records:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write(tmp_path: Path, lines: Records, name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(record) + "\n" for record in lines))
    return path


def first(lines: Records, test: Callable[[dict[str, Any]], bool], start: int = 0) -> int:
    """The index (0-based) of the first record from ``start`` that passes ``test``."""
    return next(index for index in range(start, len(lines)) if test(lines[index]))


def failed_at(path: Path) -> BadRecord:
    report = verify_log(path)
    assert report.status is VerifyStatus.FAILED, report.summary()
    assert report.problem is not None
    return report.problem


# --- golden logs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [STRIKES, SANDBOXED, STRIKES2, BANK, STRIKES3, BANK3],
    ids=[
        "strikes",
        "sandboxed",
        "format2-strikes",
        "format2-bank",
        "format3-strikes",
        "format3-bank",
    ],
)
def test_golden_logs_read_and_verify(path: Path) -> None:
    report = verify_log(path)
    assert report.status is VerifyStatus.VERIFIED, report.summary()
    assert report.ok
    assert report.problem is None
    assert report.records == len(path.read_text().splitlines())
    assert report.hands == records(path)[-1]["hands"]
    assert report.format == records(path)[0]["format"]
    assert "verified" in report.summary()


def test_the_golden_log_is_written_in_todays_format() -> None:
    # If the writer moves to a new format, keep this golden log (and its reader) and add one
    # for the new version: old logs must stay readable.
    assert records(STRIKES3)[0]["format"] == LOG_FORMAT == 3
    assert LOG_FORMAT in known_formats()
    assert {1, 2} <= set(known_formats())  # unsalted format 1 and dealt-by-dealer format 2 too


def test_the_format3_golden_log_is_what_the_referee_writes(tmp_path: Path) -> None:
    fresh, golden = records(play_golden_strikes(tmp_path / "g.jsonl")), records(STRIKES3)
    for line in (fresh[0], golden[0]):
        line.pop("started_at")
    assert fresh == golden, (
        "the log changed: regenerate tests/golden/format3-strikes.jsonl with play_golden_strikes "
        "(the format-2 golden stays as it is)"
    )


def test_the_bank_golden_log_is_what_the_referee_writes(tmp_path: Path) -> None:
    fresh, golden = records(play_golden_bank(tmp_path / "b.jsonl")), records(BANK3)
    for line in (fresh[0], golden[0]):
        line.pop("started_at")
    assert fresh == golden, (
        "the log changed: regenerate tests/golden/format3-bank.jsonl with play_golden_bank "
        "(the format-2 golden stays as it is)"
    )


def seat0_requests(lines: Records) -> list[int]:
    return [i for i, line in enumerate(lines) if line["type"] == "request" and line["seat"] == 0]


def test_the_bank_golden_log_spends_the_bank() -> None:
    lines = records(BANK)
    limits = [lines[index]["limit_ms"] for index in seat0_requests(lines)]
    assert limits == [310.0, 250.0, 190.0, 130.0, 110.0, 110.0]


def test_a_tampered_decision_time_breaks_the_bank(tmp_path: Path) -> None:
    lines = records(BANK)
    first_answer = first(lines, lambda r: r["type"] == "action" and r["seat"] == 0)
    lines[first_answer]["ms"] = 100.0  # as if it had not touched the bank
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == seat0_requests(lines)[1] + 1
    assert problem.reason == (
        "limit_ms is 250, but the time control and seat 0's time bank give 310"
    )


def test_a_tampered_limit_is_caught(tmp_path: Path) -> None:
    lines = records(BANK)
    index = seat0_requests(lines)[3]
    lines[index]["limit_ms"] = 190.0  # the bank charged once too few
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert "seat 0's time bank give 130" in problem.reason


def test_a_timeout_claimed_within_the_limit_is_caught(tmp_path: Path) -> None:
    lines = records(BANK)
    index = next(i for i, line in enumerate(lines) if line.get("kind") == "timeout")
    limit = next(line["limit_ms"] for line in reversed(lines[:index]) if line["type"] == "request")
    assert lines[index]["elapsed_ms"] >= limit  # as the referee wrote it
    lines[index]["elapsed_ms"] = 5.0  # a seat made to look as if it had timed out
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert problem.reason == f"a timeout after 5.0 ms, within the limit of {limit} ms"


@pytest.mark.parametrize(
    ("kind", "name", "value"),
    [
        ("action", "ms", -250.0),
        ("action", "ms", float("nan")),
        ("request", "limit_ms", float("nan")),
    ],
    ids=["negative", "nan", "nan-limit"],
)
def test_a_decision_time_below_zero_or_not_a_number_is_unreadable(
    tmp_path: Path, kind: str, name: str, value: float
) -> None:
    lines = records(STRIKES2)
    index = first(lines, lambda r: r["type"] == kind and r["seat"] == 1)
    lines[index][name] = value
    if value < 0:  # the seat's mean agrees with the tampered time: only the time itself is wrong
        decisions = lines[-1]["stats"][1]["decisions"]
        lines[-1]["stats"][1]["mean_ms"] = round(value / decisions, 3)
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert problem.record_type == kind
    assert problem.reason == f"field {name!r} must be a time of 0 ms or more, not {value!r}"


def test_a_tampered_timing_statistic_is_caught(tmp_path: Path) -> None:
    lines = records(BANK)
    lines[-1]["stats"][0]["mean_ms"] = 160.0
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == len(lines)
    assert problem.reason == "seat 0's mean_ms is 160.0, the log gives 138.333"


def test_a_tampered_tally_in_the_result_is_caught(tmp_path: Path) -> None:
    lines = records(BANK)
    lines[-1]["faults"][0]["elapsed_ms"] = 100.0
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == len(lines)
    assert problem.reason.startswith("faults list 3, the log records 3")
    lines = records(BANK)
    lines[-1]["stats"][0]["faults"] = {"timeout": 2}
    problem = failed_at(write(tmp_path, lines, "strikes.jsonl"))
    assert problem.reason == "seat 0's faults is {'timeout': 2}, the log gives {'timeout': 3}"


def test_result_statistics_of_the_wrong_type_are_unreadable(tmp_path: Path) -> None:
    lines = records(BANK)
    lines[-1]["stats"][0]["decisions"] = "6"
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == len(lines)
    assert problem.reason == "field 'decisions' must be a whole number, not '6'"


def test_the_format2_golden_log_is_salted() -> None:
    lines = records(STRIKES2)
    header, result = lines[0], lines[-1]
    salt = bytes.fromhex(result["salt"])
    assert header["seed_commitment"] == seed_commitment(result["seed"], salt)
    assert header["seed_commitment"] != seed_commitment(result["seed"])
    starts = [line for line in lines if line["type"] == "hand_start"]
    ends = {line["hand"]: line for line in lines if line["type"] == "hand_end"}
    for start in starts:
        deck = shuffled_deck(result["seed"], start["hand"])
        assert start["commitment"] != deck_commitment(deck)  # unsalted: a guess could be tested
        assert ends[start["hand"]]["salt"] == hand_salt(salt, start["hand"]).hex()
        assert start["commitment"] == deck_commitment(deck, hand_salt(salt, start["hand"]))


def test_the_format3_golden_log_is_dealt_by_seat() -> None:
    lines = records(STRIKES3)
    seed = lines[-1]["seed"]
    starts = [line for line in lines if line["type"] == "hand_start"]
    ends = {line["hand"]: line for line in lines if line["type"] == "hand_end"}
    assert {start["dealer"] for start in starts} == {0, 1}
    for start in starts:
        deck = dealt_deck(seed, start["hand"], start["dealer"])
        assert [str(card) for card in deck] == ends[start["hand"]]["deck"]
        shuffle = shuffled_deck(seed, start["hand"])
        assert (deck == shuffle) == (start["dealer"] == 1)  # seat 0 dealing swaps the pairs


def relabelled(path: Path, version: int) -> tuple[Records, int]:
    """A golden log with its header's format changed; and the index of its first hand dealt by
    seat 0 (under either dealing seat 1's deal is the shuffle, so it cannot tell them apart)."""
    lines = records(path)
    lines[0]["format"] = version
    start = first(lines, lambda r: r["type"] == "hand_start" and r["dealer"] == 0)
    return lines, start


@pytest.mark.parametrize(
    ("path", "version", "dealing"),
    [(STRIKES2, 3, "by seat"), (STRIKES3, 2, "by dealer")],
    ids=["format3-dealt-by-dealer", "format2-dealt-by-seat"],
)
def test_a_log_dealt_by_the_other_formats_rule_fails(
    tmp_path: Path, path: Path, version: int, dealing: str
) -> None:
    """Every commitment holds (the decks are the ones dealt): only the dealing rule of the
    header's format tells the log is wrong."""
    lines, start = relabelled(path, version)
    hand = lines[start]["hand"]
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == first(lines, lambda r: r["type"] == "hand_end" and r["hand"] == hand) + 1
    assert problem.reason == (
        f"the deck revealed for hand {hand + 1} is not the one the seed deals "
        f"(format {version} deals {dealing})"
    )


def test_the_golden_log_covers_every_record_and_chooser() -> None:
    lines = records()
    assert {line["type"] for line in lines} == {
        "header", "hand_start", "request", "action", "fault", "hand_end", "result"
    }  # fmt: skip
    assert {line["by"] for line in lines if line["type"] == "action"} == {
        "bot", "referee", "forced"
    }  # fmt: skip
    ends = {line["end"] for line in lines if line["type"] == "hand_end"}
    assert {"knock", "undercut", "stock_exhausted"} <= ends


def test_a_fresh_log_verifies(tmp_path: Path) -> None:
    path = write_log(tmp_path / "m.jsonl", 4, (patient_policy, RandomPolicy(3)))
    assert verify_log(path).ok


class CrashingSeat(InProcessSeat):
    """Plays greedily, then crashes at its ``at``-th decision."""

    def __init__(self, at: int) -> None:
        super().__init__(greedy_policy, "crasher")
        self.at = at
        self.asked = 0

    async def decide(self, decision: Decision) -> Any:
        self.asked += 1
        if self.asked >= self.at:
            raise BotCrashed("exit 9")
        return await super().decide(decision)


def test_a_forfeit_mid_hand_verifies_with_the_deck_from_the_seed(tmp_path: Path) -> None:
    path = play_log(tmp_path / "crash.jsonl", 6, (InProcessSeat(greedy_policy), CrashingSeat(30)))
    lines = records(path)
    assert lines[-1]["end"] == "forfeit"
    assert lines[-2]["type"] == "fault"
    assert lines[-3]["type"] == "request"  # the hand never ended: its deck is not in the log
    report = verify_log(path)
    assert report.ok, report.summary()


def test_a_hand_that_never_ended_is_dealt_by_the_formats_rule(tmp_path: Path) -> None:
    """The deck of the forfeited hand comes from the seed in the result, dealt by the header's
    format: seed 6's hands 0 and 1 are dealt by seat 1 (both dealings agree), hand 2 by seat 0."""
    path = play_log(tmp_path / "crash.jsonl", 6, (InProcessSeat(greedy_policy), CrashingSeat(30)))
    lines = records(path)
    starts = [line for line in lines if line["type"] == "hand_start"]
    assert [start["dealer"] for start in starts] == [1, 1, 0]
    assert lines[-1]["end"] == "forfeit"
    assert not any(line["type"] == "hand_end" and line["hand"] == 2 for line in lines)
    assert verify_log(path).ok
    lines[0]["format"] = 2
    problem = failed_at(write(tmp_path, lines, "format2.jsonl"))
    assert problem.line == len(lines)  # the result, whose seed revealed the deck
    assert problem.reason == (
        f"the deck revealed for hand 3 does not match its commitment "
        f"(line {lines.index(starts[2]) + 1})"
    )


# --- hand-made corruptions: each names the first bad record --------------------------------------


def test_a_changed_discard_card_is_an_illegal_action(tmp_path: Path) -> None:
    lines = records()
    # A discard right after the seat drew from the stock; its card becomes the pile's top card,
    # which the seat cannot hold.
    index = first(
        lines,
        lambda r: r["type"] == "action" and r["action"]["kind"] == "discard" and r["by"] == "bot",
        start=first(lines, lambda r: r["type"] == "action" and r["action"]["kind"] == "draw_stock"),
    )
    previous = first(lines, lambda r: r["type"] == "action" and r["action"]["kind"] == "discard")
    pile_top = lines[previous]["action"]["card"]
    assert previous < index
    lines[index]["action"]["card"] = pile_top
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert problem.record_type == "action"
    assert f"'discard {pile_top}' is not legal" in problem.reason
    assert "is not in seat" in problem.reason


def test_a_discard_changed_to_another_held_card_is_caught_later(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "action" and r["action"]["kind"] == "discard")
    deck = lines[first(lines, lambda r: r["type"] == "hand_end")]["deck"]
    seat = lines[index]["seat"]
    dealer = lines[1]["dealer"]
    # The seat's dealt cards: every other card of the first 20, the non-dealer first.
    dealt = deck[0:20:2] if seat != dealer else deck[1:20:2]
    other = next(card for card in dealt if card != lines[index]["action"]["card"])
    lines[index]["action"]["card"] = other
    report = verify_log(write(tmp_path, lines))
    assert report.status is VerifyStatus.FAILED
    assert report.problem is not None
    assert report.problem.line > index + 1


def test_a_tampered_deck_does_not_match(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "hand_end" and r["hand"] == 2)
    deck = lines[index]["deck"]
    start = first(lines, lambda r: r["type"] == "hand_start" and r["hand"] == 2)
    deck[30], deck[40] = deck[40], deck[30]
    problem = failed_at(write(tmp_path, lines))
    # Checked before the hand's actions are replayed; the record that revealed it is named.
    assert problem.line == index + 1
    assert problem.record_type == "hand_end"
    assert problem.reason == (
        f"the deck revealed for hand 3 does not match its commitment (line {start + 1})"
    )


def test_a_tampered_deck_in_an_incomplete_log_fails_its_commitment(tmp_path: Path) -> None:
    lines = records()[:-1]  # no result: the seed is unknown, decks come from the reveals
    index = first(lines, lambda r: r["type"] == "hand_end" and r["hand"] == 1)
    start = first(lines, lambda r: r["type"] == "hand_start" and r["hand"] == 1)
    deck = lines[index]["deck"]
    deck[0], deck[51] = deck[51], deck[0]
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert f"does not match its commitment (line {start + 1})" in problem.reason


def test_a_tampered_commitment_is_caught_at_its_hand_start(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "hand_start" and r["hand"] == 3)
    lines[index]["commitment"] = "0" * 64
    problem = failed_at(write(tmp_path, lines))
    # The deck comes from the hand's end record; it no longer matches the commitment.
    end = first(lines, lambda r: r["type"] == "hand_end" and r["hand"] == 3)
    assert problem.line == end + 1
    assert f"(line {index + 1})" in problem.reason


def test_a_wrong_hand_score(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "hand_end" and r["winner"] is not None)
    points = lines[index]["points"]
    lines[index]["points"] = points + 1
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert problem.reason == f"points is {points + 1}, but the rules give {points}"


def test_wrong_totals_in_the_result(tmp_path: Path) -> None:
    lines = records()
    lines[-1]["totals"][1][0] += 5
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == len(lines)
    assert problem.record_type == "result"
    assert problem.reason.startswith("totals is ")


def test_a_wrong_winner_in_the_result(tmp_path: Path) -> None:
    lines = records()
    lines[-1]["winner"] = 1 - lines[-1]["winner"]
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == len(lines)
    assert problem.reason.startswith("winner is ")


def test_an_illegal_knock(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "action" and r["action"]["kind"] == "discard")
    lines[index]["action"]["kind"] = "knock"
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert "cannot knock: deadwood after discarding" in problem.reason


def test_a_draw_out_of_turn(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "action" and r["action"]["kind"] == "draw_stock")
    lines[index]["seat"] = 1 - lines[index]["seat"]
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert "is to move" in problem.reason


def test_a_tampered_referee_substitute(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "action" and r["by"] == "referee")
    assert lines[index - 1]["type"] == "fault"
    lines[index]["by"] = "bot"
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert "the bot's answer was a fault" in problem.reason


def test_a_fault_that_should_have_forfeited(tmp_path: Path) -> None:
    lines = records()
    lines[0]["fault_policy"]["strikes"] = 1
    index = first(lines, lambda r: r["type"] == "fault")
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert "the fault policy gives strikes=1, forfeited=true" in problem.reason


def test_a_wrong_seed(tmp_path: Path) -> None:
    lines = records()
    lines[-1]["seed"] += 1
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == len(lines)
    assert "does not match the header's seed commitment" in problem.reason


def test_a_wrong_dealer(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "hand_start" and r["hand"] == 1)
    lines[index]["dealer"] = 1 - lines[index]["dealer"]
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert "but the rules give seat" in problem.reason


def test_a_record_after_the_result(tmp_path: Path) -> None:
    lines = records()
    lines.append(dict(lines[-1]))
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == len(lines)
    assert "after the result" in problem.reason


def test_a_missing_action(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "action" and r["by"] == "bot", start=10)
    del lines[index]
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1  # the next request: the last one was never answered
    assert "was never answered" in problem.reason


# --- damaged files: a clear message, never a traceback -------------------------------------------


def test_a_log_truncated_mid_line(tmp_path: Path) -> None:
    text = STRIKES.read_text()
    lines = text.splitlines(keepends=True)
    cut = "".join(lines[:200]) + lines[200][:37]
    path = tmp_path / "cut.jsonl"
    path.write_text(cut)
    report = verify_log(path)
    assert report.status is VerifyStatus.INCOMPLETE
    assert report.problem is not None
    assert report.problem.line == 201
    assert "cut off mid-line: the log was truncated" in report.problem.reason
    assert report.records == 200
    assert "the result: the log was cut off before it" in report.unchecked


def test_a_log_that_stops_mid_hand(tmp_path: Path) -> None:
    lines = records()[:150]
    report = verify_log(write(tmp_path, lines))
    assert report.status is VerifyStatus.INCOMPLETE
    assert report.problem is not None
    assert report.problem.line == 150
    assert "without a result record" in report.problem.reason
    summary = report.summary()
    assert "its deck is unknown" in summary
    assert "could not be checked" in summary


def test_a_log_without_its_result(tmp_path: Path) -> None:
    report = verify_log(write(tmp_path, records()[:-1]))
    assert report.status is VerifyStatus.INCOMPLETE
    assert report.hands == records()[-1]["hands"]  # every hand still checked: decks revealed


def test_a_line_that_is_not_json(tmp_path: Path) -> None:
    text = STRIKES.read_text().splitlines()
    text[99] = "this is not json"
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(text) + "\n")
    problem = failed_at(path)
    assert problem.line == 100
    assert problem.reason.startswith("not a JSON record")


def test_a_record_with_a_missing_field(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "request")
    del lines[index]["seat"]
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == index + 1
    assert problem.reason == "field 'seat' is missing"


def test_an_unknown_record_type(tmp_path: Path) -> None:
    lines = records()
    lines.insert(5, {"type": "gossip"})
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == 6
    assert problem.reason == "unknown record type 'gossip'"


def test_an_unknown_format_version(tmp_path: Path) -> None:
    lines = records()
    lines[0]["format"] = 99
    path = write(tmp_path, lines)
    problem = failed_at(path)
    assert problem.line == 1
    assert problem.reason == "log format 99 is not known: this gin reads format 1, 2, 3"
    with pytest.raises(LogReadError, match="log format 99 is not known"):
        read_log(path)


def test_a_missing_header(tmp_path: Path) -> None:
    problem = failed_at(write(tmp_path, records()[1:]))
    assert problem.line == 1
    assert "a log starts with a header record, but this one starts with 'hand_start'" in str(
        problem
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "the log is empty"),
        (b"\xff\xfe garbage\n", "not UTF-8 text"),
        (b'{"type": "header", "format": 1}\n', "field 'seats' is missing"),
        (b"[1, 2]\n", "a record must be a JSON object"),
    ],
)
def test_unreadable_files(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    problem = failed_at(path)
    assert reason in problem.reason


def test_a_missing_file_is_a_report_not_an_exception(tmp_path: Path) -> None:
    problem = failed_at(tmp_path / "nope.jsonl")
    assert "cannot read" in problem.reason


# --- finding a log -------------------------------------------------------------------------------


def test_find_log_by_path_or_match_id(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "league-a").mkdir(parents=True)
    log = runs / "league-a" / "m-7.jsonl"
    log.write_text("")
    assert find_log(str(log), runs) == log
    assert find_log("m-7", runs) == log
    with pytest.raises(LogNotFound, match="no match 'm-8' under"):
        find_log("m-8", runs)


# --- replays and what each seat sees ------------------------------------------------------------

CARD = re.compile(r"\b[A2-9TJQK][cdhs]\b")


def check_seat_views(replay: Replay) -> None:
    """A seat's view never shows a card that seat could not have seen at that step.

    What a seat could see is worked out from the referee's view: the cards it held, every card
    that reached the discard pile this hand, and, after a knock, both hands (the showdown).
    """
    seen: list[set[int]] = [set(), set()]
    hand_number = None
    for step in replay.steps:
        referee = step.table(None)
        if referee is None:
            continue
        if step.hand_number != hand_number:
            hand_number = step.hand_number
            seen = [set(), set()]
        showdown = referee.showdown
        for seat in (0, 1):
            own = referee.hands[seat].cards
            assert own is not None
            seen[seat] |= set(own) | set(referee.discard_pile)
            if showdown is not None and showdown.knocker is not None:
                opponent = referee.hands[1 - seat].cards
                assert opponent is not None
                seen[seat] |= set(opponent)
            table = step.table(seat)
            assert table is not None
            assert table.stock is None, "a seat never sees the stock"
            shown = set(table.cards_shown())
            assert shown <= seen[seat], (
                step.index,
                seat,
                CardSet.of_mask(sum(1 << c for c in shown - seen[seat])),
            )
            hidden = table.hands[1 - seat]
            if showdown is None or showdown.knocker is None:
                assert hidden.cards is None
                assert set(hidden.known) <= seen[seat]
            if step.kind is not StepKind.FAULT:  # a fault's detail is sent to both seats as is
                named = {str(card) for card in seen[seat]}
                text = step_text(step, seat, replay.names)
                assert set(CARD.findall(text)) <= named, (step.index, text)


def test_seat_views_of_the_golden_log_show_no_hidden_card() -> None:
    check_seat_views(load_replay(STRIKES))
    check_seat_views(load_replay(SANDBOXED))


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32), policy_seed=st.integers(0, 100))
def test_seat_views_never_show_hidden_cards(tmp_path: Path, seed: int, policy_seed: int) -> None:
    path = tmp_path / f"{seed}-{policy_seed}.jsonl"
    path.unlink(missing_ok=True)
    write_log(path, seed, (RandomPolicy(policy_seed), Blunders(greedy_policy, [2])))
    replay = load_replay(path)
    assert replay.report.ok, replay.report.summary()
    check_seat_views(replay)


def test_replay_steps_follow_the_log() -> None:
    replay = load_replay(STRIKES)
    lines = records()
    kinds = [step.kind for step in replay.steps]
    assert kinds.count(StepKind.DEAL) == lines[-1]["hands"]
    assert kinds.count(StepKind.SHOWDOWN) == lines[-1]["hands"]
    assert kinds.count(StepKind.FAULT) == sum(line["type"] == "fault" for line in lines)
    assert kinds.count(StepKind.ACTION) == sum(line["type"] == "action" for line in lines)
    assert kinds[-1] is StepKind.RESULT
    assert [step.index for step in replay.steps] == list(range(len(replay.steps)))
    assert len(replay.hand_starts()) == lines[-1]["hands"]
    final = replay.steps[-1].table(None)
    assert final is not None
    assert [list(seat) for seat in final.totals] == lines[-1]["totals"]


def test_a_replay_of_a_bad_log_ends_with_a_note(tmp_path: Path) -> None:
    lines = records()
    index = first(lines, lambda r: r["type"] == "hand_end" and r["winner"] is not None)
    lines[index]["points"] += 1
    replay = build_replay(read_log(write(tmp_path, lines)))
    note = replay.steps[-1]
    assert note.kind is StepKind.NOTE
    assert note.line == index + 1
    assert "points is" in step_text(note, 0, replay.names)
    assert replay.steps[-2].line < index + 1


class NoShowSeat(InProcessSeat):
    """Never starts."""

    async def connect(self, seat: int) -> Any:
        raise StartupFailure("no hello")


def test_a_startup_failure_verifies(tmp_path: Path) -> None:
    path = play_log(
        tmp_path / "noshow.jsonl", 3, (InProcessSeat(greedy_policy), NoShowSeat(greedy_policy))
    )
    assert [line["type"] for line in records(path)] == ["header", "fault", "result"]
    report = verify_log(path)
    assert report.ok, report.summary()
    replay = load_replay(path)
    assert [step.kind for step in replay.steps] == [StepKind.FAULT, StepKind.RESULT]
    assert replay.steps[0].table(None) is None


def test_a_wrong_first_dealer(tmp_path: Path) -> None:
    lines = records()
    lines[0]["first_dealer"] = 1 - lines[0]["first_dealer"]
    problem = failed_at(write(tmp_path, lines))
    assert problem.line == 1
    assert "but the seed (revealed in the result) makes seat" in problem.reason


def test_verify_counts_hands_from_1_as_every_viewer_does(tmp_path: Path) -> None:
    """The first hand is hand 1 in a verifier's message, as in the replay and the transcripts
    (it said "hand 0")."""
    lines = records()
    index = first(lines, lambda r: r["type"] == "hand_end" and r["hand"] == 0)
    lines[index]["deck"][30], lines[index]["deck"][40] = (
        lines[index]["deck"][40],
        lines[index]["deck"][30],
    )
    problem = failed_at(write(tmp_path, lines))
    assert problem.reason.startswith("the deck revealed for hand 1 does not match")
