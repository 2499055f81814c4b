"""Checks that a bot program written in another language starts each series of a sitting afresh.

The Node and Go sample bots share these: each runs as its own process against the scripted fake
referee (:mod:`tests.fake_referee`), so what is checked is only what crosses the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from protocol import hollywood_gin_pb2 as pb
from referee.rules import RuleParams, SeriesState
from tests.fake_referee import FakeReferee, request, sitting_script, welcome

RunBot = Callable[[dict[str, str]], tuple[int, str, str]]

# The first series lets a knock leave at most 1 point of deadwood, the second the standard 10:
# a bot that kept the first series' knock limit never knocks with 2 to 10 in the second.
TIGHT = RuleParams(knock_limit=1)
STANDARD = RuleParams()


def assert_starts_each_series_afresh(tmp_path: Path, run_bot: RunBot, label: str) -> None:
    """Two series on one stream, the bot in seat 1 under a knock limit of 1, then in seat 0 under
    the standard limit of 10. The second series finishes only if the bot took its new seat from
    the second Welcome (the sample bots refuse a request for another seat than their Welcome's),
    and it knocks there with more than 1 point of deadwood only if it took the new rules too."""
    log, script = sitting_script((11, 12), seats=(1, 0), rules=(TIGHT, STANDARD))
    with FakeReferee(tmp_path, script) as referee:
        code, out, err = run_bot({"GIN_REFEREE": referee.address, "GIN_TOKEN": "secret-token"})
    assert code == 0, f"the {label} bot exited {code}:\n{err}"
    assert out == ""
    assert log.said_goodbye
    assert len(log.series) == 2, f"the {label} bot does not play on"
    first, second = log.series
    assert first.result is not None, err
    assert second.result is not None, err
    assert second.echoed_ids == second.sent_ids
    assert min(second.sent_ids) > max(first.sent_ids)
    knocks = [
        hand.outcome.knocker_layout.deadwood
        for hand in second.hands
        if hand.outcome.knocker == 0 and hand.outcome.knocker_layout is not None
    ]
    assert any(deadwood > TIGHT.knock_limit for deadwood in knocks), (
        f"the {label} bot kept the first series' knock limit: its knocks left {knocks}"
    )


def assert_refuses_a_request_for_another_seat(tmp_path: Path, run_bot: RunBot) -> None:
    """Welcomed to seat 1, then asked to decide for seat 0: the bot says so on stderr (with the
    request id) and exits 1, rather than play a series it has lost track of."""

    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome(seat=1)
        yield request(SeriesState(1), 42)  # (seat 0 moves first in this series)
        next(incoming, None)

    with FakeReferee(tmp_path, script) as referee:
        code, out, err = run_bot({"GIN_REFEREE": referee.address, "GIN_TOKEN": "t"})
    assert code == 1
    assert out == ""
    assert "error on request 42" in err
    assert "the request is for seat 0, but this series' welcome gave seat 1" in err
