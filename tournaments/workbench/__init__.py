"""The bot author's workbench: a training environment over the rules engine, policies made into
bot folders, and in-process series written as logs that replay and verify like a referee's.

Nothing here is imported by the referee; the environment needs the ``workbench`` extra
(``pip install 'hollywood-gin-arena[workbench]'``: PettingZoo and Gymnasium).
"""

__all__: list[str] = []
