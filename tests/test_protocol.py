"""The contract: generated code in sync with the .proto, and conversions both ways."""

import filecmp
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import hollywood_gin_pb2 as pb
from protocol.codegen import GENERATED, generate
from protocol.convert import (
    DECISION_KINDS,
    action_from_pb,
    action_to_pb,
    cards_from_pb,
    hand_ended_from_pb,
    hand_ended_to_pb,
    observation_from_pb,
    observation_to_pb,
    params_from_pb,
    params_to_pb,
    public_event_to_pb,
)
from protocol.wire import RequestEncoder, legal_actions_bytes
from referee.rules import (
    Knock,
    PublicEvent,
    RandomPolicy,
    RuleParams,
    Scoring,
    SeriesState,
    observation,
    parse_cards,
    public_view,
)

ROOT = Path(__file__).resolve().parent.parent


def test_committed_generated_code_matches_the_proto(tmp_path: Path) -> None:
    generate(ROOT, tmp_path)
    for name in GENERATED:
        fresh, committed = tmp_path / "protocol" / name, ROOT / "protocol" / name
        assert filecmp.cmp(fresh, committed, shallow=False), (
            f"protocol/{name} is out of date with hollywood_gin.proto: run `make proto`"
        )


def test_every_field_of_the_proto_is_documented() -> None:
    lines = (ROOT / "protocol" / "hollywood_gin.proto").read_text().splitlines()
    undocumented = []
    for index, line in enumerate(lines):
        text = line.strip()
        is_declaration = text.startswith(("message ", "enum ", "rpc ")) or (
            "=" in text and text.endswith(";") and not text.startswith(("//", "syntax", "package"))
        )
        if is_declaration and not text.endswith("_UNSPECIFIED = 0;"):
            documented = lines[index - 1].strip().startswith("//") or "//" in text
            if not documented:
                undocumented.append(text)
    # Self-describing fields may go without a comment; keep the count honest and small.
    assert not undocumented, undocumented


def series_states(seed: int, steps: int) -> SeriesState:
    series = SeriesState(seed, RuleParams())
    policy = RandomPolicy(seed)
    for _ in range(steps):
        if series.result is not None:
            break
        series.apply(policy(observation(series, series.to_move), series.legal_actions()))
    return series


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 400))
def test_observation_and_legal_actions_round_trip(seed: int, steps: int) -> None:
    series = series_states(seed, steps)
    if series.result is not None:
        return
    seat = series.to_move
    view = observation(series, seat)
    message = observation_to_pb(view)
    again = observation_from_pb(
        pb.Observation.FromString(message.SerializeToString()),
        DECISION_KINDS[view.phase],
        seat,
        view.params,
    )
    assert again == view
    for action in series.legal_actions():
        assert action_from_pb(action_to_pb(action, 3)) == action


def test_declared_knock_round_trips() -> None:
    melds = (parse_cards("7c 7d 7h"), parse_cards("As 2s 3s"))
    knock = Knock(next(iter(parse_cards("Kd"))), melds)
    message = action_to_pb(knock, 12)
    assert message.knock.declare_melds
    assert action_from_pb(message) == knock


@pytest.mark.parametrize(
    "params",
    [
        RuleParams(),
        RuleParams(gin_bonus=20, undercut_bonus=25, stop_when_decided=True),
        RuleParams(scoring=Scoring.PLAIN, no_rediscard=False, undercut_on_tie=False),
    ],
)
def test_rule_params_round_trip(params: RuleParams) -> None:
    assert params_from_pb(params_to_pb(params)) == params


def test_hand_outcomes_round_trip() -> None:
    series = series_states(3, 100_000)
    assert series.result is not None
    knocked = 0
    for record in series.result.hands:
        message = hand_ended_to_pb(record.outcome, record.number, None, record.games)
        again = hand_ended_from_pb(pb.HandEnded.FromString(message.SerializeToString()))
        outcome = record.outcome
        assert (again.end, again.winner, again.points, again.knocker) == (
            outcome.end,
            outcome.winner,
            outcome.points,
            outcome.knocker,
        )
        assert again.knocker_layout == outcome.knocker_layout
        assert again.defender_layout == outcome.defender_layout
        if outcome.knocker is not None:
            knocked += 1
            assert again.hands == outcome.hands
        assert list(message.games) == [game + 1 for game in record.games]
    assert knocked


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (pb.Action(request_id=1), "no choice set"),
        (pb.Action(discard=pb.Discard(card="1s")), "action.discard.card"),
        (pb.Action(draw=pb.Draw()), "unknown draw source"),
        (
            pb.Action(
                knock=pb.Knock(card="Kd", declare_melds=True, melds=[pb.Meld(cards=["Kd", "Kd"])])
            ),
            "listed twice",
        ),
    ],
)
def test_malformed_actions_are_clear_errors(message: pb.Action, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        action_from_pb(message)


def test_bad_card_lists_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"observation\.hand: bad card"):
        cards_from_pb(["As", "Qx"], "observation.hand")


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 3), st.integers(0, 2))
def test_request_encoder_writes_what_protobuf_would(seed: int, held: int, clock: int) -> None:
    """The hand-written wire bytes equal the serialized plain message, byte for byte, over whole
    series: every phase, knocks, new hands, held opponent actions, large and zero numbers."""
    assert_requests_are_protobufs(seed, held, clock)


def test_request_encoder_with_its_lane_caches_cleared_all_the_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("protocol.wire._LANES_KEPT", 1)
    assert_requests_are_protobufs(seed=11, held=1, clock=1)


def assert_requests_are_protobufs(seed: int, held: int, clock: int) -> None:
    series = SeriesState(seed)
    policy = RandomPolicy(seed)
    encoders = (RequestEncoder(), RequestEncoder())
    events: list[PublicEvent] = []
    for request_id in range(1, 700):
        if series.result is not None:
            break
        seat = series.to_move
        view = observation(series, seat)
        legal = series.legal_actions()
        time_left, bank_left = (0, 0) if clock == 0 else (request_id * 997, request_id**3)
        carried = events[-held:] if held else []
        plain = pb.RefereeMessage(
            request=pb.DecisionRequest(
                request_id=request_id if clock < 2 else 2**40 + request_id,
                kind=DECISION_KINDS[view.phase],
                observation=observation_to_pb(view),
                legal_actions=[action_to_pb(action) for action in legal],
                time_left_ms=time_left,
                time_bank_left_ms=bank_left,
                events=[pb.Event(opponent_action=public_event_to_pb(event)) for event in carried],
            )
        )
        wire = encoders[seat].encode(
            plain.request.request_id,
            view,
            legal,
            time_left_ms=time_left,
            bank_left_ms=bank_left,
            events=carried,
        )
        assert wire == plain.SerializeToString()
        events.append(public_view(series.apply(policy(view, legal)), 1 - seat))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_legal_actions_bytes_merge_into_the_same_request(seed: int) -> None:
    series = SeriesState(seed)
    policy = RandomPolicy(seed)
    for _ in range(100):
        if series.result is not None:
            break
        legal = series.legal_actions()
        merged = pb.DecisionRequest(request_id=3)
        merged.MergeFromString(legal_actions_bytes(legal))
        plain = pb.DecisionRequest(
            request_id=3, legal_actions=[action_to_pb(action) for action in legal]
        )
        assert merged.SerializeToString() == plain.SerializeToString()
        series.apply(policy(observation(series, series.to_move), legal))
