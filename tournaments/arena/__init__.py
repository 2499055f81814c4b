"""The hosted arena (``gin arena serve``): authors upload bots over HTTP, a ladder of duplicate
pairs plays day and night, and anyone watches in a browser.

- ``accounts``: authors and their API tokens (kept hashed, revocable);
- ``intake``: uploads unpacked safely, checked by the conformance kit, registered;
- ``ladder``: the continuous ladder (a league scheduled one pair at a time);
- ``board``: the leaderboard, recomputed after each pair (in a process of its own on a big
  ladder: ``child``);
- ``replays``: a recorded match's replay pages, rendered in a process of their own;
- ``service``: what the web app asks of the arena (one object over the store, the ladder, the
  intake and the events of the live pages);
- ``web``: the Starlette app (pages, API, downloads, hardening);
- ``server``: Hypercorn under trio, with the ladder and the intake in the same process;
- ``client``: ``gin bot submit DIR --arena URL``.
"""

__all__: list[str] = []
