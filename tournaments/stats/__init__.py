"""The statistics of a league, from its stored results and nothing else: the duplicate pairs
(:mod:`~tournaments.stats.pairs`), the t and Elo arithmetic (:mod:`~tournaments.stats.inference`),
the sequential test (:mod:`~tournaments.stats.sprt`), the counts and tables
(:mod:`~tournaments.stats.standings`), and the Bradley-Terry fits: dense
(:mod:`~tournaments.stats.ratings`) and sparse (:mod:`~tournaments.stats.sparse`).

Pure functions of rows: the statistics import the store's row types (``tournaments.store.rows``)
and never its database, so they run on results from anywhere.
"""

__all__: list[str] = []
