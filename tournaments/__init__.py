"""Leagues, the registry, the store, standings, and the ``gin`` command line."""

__all__: list[str] = []
