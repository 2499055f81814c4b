"""A sample bot on the pipe peer's wire: ``python -m benchmarks.bots.pipe_bot greedy``.

The adapter of ``benchmarks.pipe_referee`` around the same bot classes the sandboxed league runs
(``sample_bots.*``): it reads one JSON line per message from stdin and writes one per answer to
stdout. It says hello, takes the rules from the welcome, keeps the hand's history
from the events each request brings, rebuilds the observation and asks the bot's ``decide``
(through ``as_policy()``, as the in-process floor does). No SDK, no gRPC, no sandbox. Its one
argument names the sample bot: greedy, strong or random.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from benchmarks.bots.pipe_wire import action_in, action_out, event_in, view_in
from protocol.sdk import Bot
from referee.rules import PublicEvent, RuleParams


def make_bot(name: str) -> Bot:
    """A fresh instance of the sample bot ``name``.

    Raises:
        ValueError: no such sample bot.
    """
    if name == "greedy":
        from sample_bots.greedy.bot import GreedyBot  # noqa: PLC0415 - one bot's imports only

        return GreedyBot()
    if name == "strong":
        from sample_bots.strong.bot import StrongBot  # noqa: PLC0415

        return StrongBot()
    if name == "random":
        from sample_bots.random.bot import RandomBot  # noqa: PLC0415

        return RandomBot()
    raise ValueError(f"no pipe adapter for the sample bot {name!r} (greedy, strong or random)")


def serve(bot: Bot, lines: IO[str], out: IO[str]) -> int:
    """Answer the referee's lines until it says ``end``; how many decisions it asked for."""
    policy = bot.as_policy()
    params = RuleParams()
    history: list[PublicEvent] = []
    hand_number = -1
    decisions = 0
    out.write('{"hello": "%s"}\n' % (bot.name or "bot"))
    out.flush()
    for line in lines:
        message: dict[str, Any] = json.loads(line)
        kind = message["type"]
        if kind == "welcome":
            params = RuleParams.from_dict(message["params"])
        elif kind == "request":
            view = message["view"]
            if view["hand_number"] != hand_number:  # a new hand: a new history
                hand_number, history = view["hand_number"], []
            history.extend(event_in(event) for event in message["events"])
            legal = [action_in(action) for action in message["legal"]]
            action = policy(view_in(view, tuple(history), params), legal)
            out.write(json.dumps({"action": action_out(action)}) + "\n")
            out.flush()
            decisions += 1
        elif kind == "end":
            break
    return decisions


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python -m benchmarks.bots.pipe_bot greedy|strong|random", file=sys.stderr)
        return 2
    try:
        bot = make_bot(sys.argv[1])
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    serve(bot, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
