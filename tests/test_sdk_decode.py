"""The SDK's fast request decoder gives exactly what the plain conversion gives.

Requests come from whole series written by the referee's own encoder (every phase, knocks, new
hands, opponent actions carried in requests), then from the same requests altered the ways a
message may legally or illegally differ: other spellings of a card, cards listed twice, bad
cards, unknown kinds, a missing score sheet, legal actions with extra fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import hollywood_gin_pb2 as pb
from protocol.convert import (
    RequestDecoder,
    action_from_pb,
    action_to_pb,
    observation_from_pb,
    public_event_from_pb,
)
from protocol.wire import RequestEncoder
from referee.rules import (
    Action,
    GreedyPolicy,
    Knock,
    Observation,
    PublicEvent,
    RandomPolicy,
    RuleParams,
    Scoring,
    SeriesState,
    observation,
    parse_cards,
    public_view,
)

Plain = tuple[Observation, list[Action]] | str
"""What the plain conversion gives: the observation and legal actions, or its error."""


def recorded_requests(
    seed: int, greedy: bool, params: RuleParams | None = None, limit: int = 400
) -> Iterator[tuple[int, pb.RefereeMessage]]:
    """``(seat, message)`` for each decision request of a series, as a bot receives it."""
    rules = params or RuleParams()
    series = SeriesState(seed, rules)
    policies: tuple[Callable[[Observation, list[Action]], Action], ...] = (
        (GreedyPolicy(knock_at=10), GreedyPolicy(knock_at=4))
        if greedy
        else (RandomPolicy(seed), RandomPolicy(seed + 1))
    )
    encoders = (RequestEncoder(), RequestEncoder())
    held: tuple[list[PublicEvent], list[PublicEvent]] = ([], [])
    for request_id in range(1, limit):
        if series.result is not None:
            return
        seat = series.to_move
        view = observation(series, seat)
        legal = series.legal_actions()
        data = encoders[seat].encode(
            request_id, view, legal, time_left_ms=900, bank_left_ms=request_id, events=held[seat]
        )
        held[seat].clear()
        yield seat, pb.RefereeMessage.FromString(data)
        event = series.apply(policies[seat](view, legal))
        held[1 - seat].append(public_view(event, 1 - seat))


def plain(request: pb.DecisionRequest, seat: int, params: RuleParams) -> Plain:
    try:
        view = observation_from_pb(request.observation, request.kind, seat, params)
        return view, [action_from_pb(action) for action in request.legal_actions]
    except ValueError as error:
        return str(error)


def fast(
    decoder: RequestDecoder, request: pb.DecisionRequest, seat: int, params: RuleParams
) -> Plain:
    try:
        return decoder.decode(request, seat, params)
    except ValueError as error:
        return str(error)


def assert_same(got: Plain, want: Plain) -> None:
    """Equal values and the same types, field by field and element by element."""
    assert got == want
    if isinstance(got, str) or isinstance(want, str):
        return
    (view, legal), (plain_view, plain_legal) = got, want
    for field in dataclasses.fields(Observation):
        mine, theirs = getattr(view, field.name), getattr(plain_view, field.name)
        assert mine == theirs, field.name
        assert type(mine) is type(theirs), field.name
        if isinstance(mine, tuple):
            assert [type(item) for item in mine] == [type(item) for item in theirs], field.name
    for event, plain_event in zip(view.history, plain_view.history, strict=True):
        assert type(event.action) is type(plain_event.action)
        assert type(event.card) is type(plain_event.card)
    assert [type(action) for action in legal] == [type(action) for action in plain_legal]
    assert type(legal) is type(plain_legal)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.booleans())
def test_decoder_equals_the_plain_conversion_over_whole_series(
    seed: int, greedy: bool, plain_gin: bool
) -> None:
    params = RuleParams(scoring=Scoring.PLAIN) if plain_gin else RuleParams()
    decoders = (RequestDecoder(), RequestDecoder())
    count = 0
    for seat, message in recorded_requests(seed, greedy, params):
        request = message.request
        assert_same(fast(decoders[seat], request, seat, params), plain(request, seat, params))
        for event in request.events:
            opponent = event.opponent_action
            assert decoders[seat].public_event(opponent) == public_event_from_pb(opponent)
        count += 1
    assert count > 20


CARD_TEXTS = st.sampled_from(["As", "td", " Kd", "Kd ", "7C", "Qx", "", "10h", "Ah", "2c"])


@st.composite
def alterations(draw: st.DrawFn) -> Callable[[pb.DecisionRequest], None]:
    """One change to a request, legal (another spelling) or not (a bad card, a duplicate)."""
    text = draw(CARD_TEXTS)
    index = draw(st.integers(0, 12))
    kind = draw(st.sampled_from(range(15)))

    def in_list(field: str) -> Callable[[pb.DecisionRequest], None]:
        def change(request: pb.DecisionRequest) -> None:
            values = getattr(request.observation, field)
            if index < len(values):
                values[index] = text
            else:
                values.append(text)

        return change

    def duplicate(field: str) -> Callable[[pb.DecisionRequest], None]:
        def change(request: pb.DecisionRequest) -> None:
            values = getattr(request.observation, field)
            if values:
                values.append(values[index % len(values)])

        return change

    def history(request: pb.DecisionRequest) -> None:
        entries = request.observation.history
        if entries:
            entry = entries[index % len(entries)]
            entry.kind = kind  # type: ignore[assignment]
            entry.card = text

    def taken(request: pb.DecisionRequest) -> None:
        request.observation.taken_this_turn = text

    def request_kind(request: pb.DecisionRequest) -> None:
        request.kind = kind  # type: ignore[assignment]

    def no_score(request: pb.DecisionRequest) -> None:
        request.observation.ClearField("score")

    def one_seat_score(request: pb.DecisionRequest) -> None:
        del request.observation.score.totals[1:]

    def score_value(request: pb.DecisionRequest) -> None:
        totals = request.observation.score.totals
        if totals and totals[0].games:
            totals[0].games[0] += index + 1

    def legal_extra(request: pb.DecisionRequest) -> None:
        legal = request.legal_actions
        if legal:
            legal[index % len(legal)].request_id = index + 1

    def legal_card(request: pb.DecisionRequest) -> None:
        request.legal_actions.add().discard.card = text

    def legal_melds(request: pb.DecisionRequest) -> None:
        melds = (parse_cards("7c 7d 7h"), parse_cards("As 2s 3s"))
        knock = Knock(next(iter(parse_cards("Kd"))), melds)
        request.legal_actions.append(action_to_pb(knock))

    def legal_empty(request: pb.DecisionRequest) -> None:
        request.legal_actions.add()

    changes = [
        *(in_list(field) for field in ("hand", "discard_pile", "opponent_took", "opponent_known")),
        *(duplicate(field) for field in ("hand", "opponent_known", "discard_pile")),
        history,
        taken,
        request_kind,
        no_score,
        one_seat_score,
        score_value,
        legal_extra,
        legal_card,
        legal_melds,
        legal_empty,
    ]
    return draw(st.sampled_from(changes))


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10_000),
    st.lists(st.tuples(st.integers(0, 60), alterations()), min_size=1, max_size=6),
)
def test_decoder_equals_the_plain_conversion_on_altered_requests(
    seed: int, changes: list[tuple[int, Callable[[pb.DecisionRequest], None]]]
) -> None:
    """Altered requests among plain ones, through one decoder: its caches never answer for a
    message they did not see, and every error is the plain conversion's."""
    params = RuleParams()
    decoder = RequestDecoder()
    altered = dict(changes)
    for number, (_, message) in enumerate(recorded_requests(seed, greedy=False, limit=61)):
        request = message.request
        if number in altered:
            altered[number](request)
        assert_same(fast(decoder, request, 0, params), plain(request, 0, params))


def test_decoder_sees_a_message_changed_after_it_was_decoded() -> None:
    """The score sheet is kept as a copy: changing the caller's message in place is seen."""
    params = RuleParams()
    decoder = RequestDecoder()
    _, message = next(recorded_requests(3, greedy=True))
    request = message.request
    assert_same(decoder.decode(request, 0, params), plain(request, 0, params))
    request.observation.score.totals[0].games[1] = 77
    request.observation.score.game_winners[2] = 1
    view, _ = decoder.decode(request, 0, params)
    assert view.totals[0][1] == 77
    assert view.game_winners[2] == 1
    assert_same((view, decoder.decode(request, 0, params)[1]), plain(request, 0, params))


def test_decoder_with_its_caches_cleared_all_the_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("protocol.convert._CACHE_KEPT", 1)
    params = RuleParams()
    decoders = (RequestDecoder(), RequestDecoder())
    for seat, message in recorded_requests(11, greedy=False):
        request = message.request
        assert_same(fast(decoders[seat], request, seat, params), plain(request, seat, params))
        for event in request.events:
            opponent = event.opponent_action
            assert decoders[seat].public_event(opponent) == public_event_from_pb(opponent)


def test_public_event_errors_are_the_plain_ones() -> None:
    decoder = RequestDecoder()
    bad = pb.PublicEvent(seat=1, kind=pb.PublicEvent.KIND_DISCARD)
    with pytest.raises(ValueError, match="a discard or knock names its card"):
        decoder.public_event(bad)
    with pytest.raises(ValueError, match="unknown kind 9"):
        decoder.public_event(pb.PublicEvent(seat=1, kind=9))  # type: ignore[arg-type]
