"""The ``gin`` command line and what it shows: thin typer commands (one module per group), the
rich renderers, the live views and the replay viewers. Nothing else in the project imports it.

Importing this package imports nothing: :mod:`tournaments.cli.entry` hardens the process before
the modules that pull grpc in (:mod:`tournaments.cli.app`) are loaded.
"""

__all__: list[str] = []
