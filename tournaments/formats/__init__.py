"""What the league machinery writes down and hands on: the records its runner, executors and
workers exchange (:mod:`~tournaments.formats.records`), a match's per-seat hand statistics
(:mod:`~tournaments.formats.hands`) and the bots' seeds (:mod:`~tournaments.formats.seeds`).

The lowest layer of ``tournaments``: it imports the referee and the rules, nothing of the store,
the statistics or the executors, which all read these records.
"""

__all__: list[str] = []
