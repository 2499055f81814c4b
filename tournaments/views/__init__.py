"""What a person reads of a game, shared by the command line and the arena: the words for a
hand's end and each replay step (:mod:`~tournaments.views.words`), and the self-contained HTML
replay page (:mod:`~tournaments.views.replay_html`, with its ``replay_assets``).
"""

__all__: list[str] = []
