"""The ``gin`` executable: harden the process first, then run the command line.

``GRPC_ENABLE_FORK_SUPPORT=0`` only counts if it is set before grpc is imported, so the imports
that pull grpc in come after :func:`harden_referee_process`.
"""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``gin`` console script."""
    from referee.sandbox import harden_referee_process  # noqa: PLC0415 - must precede grpc

    harden_referee_process()
    from tournaments.cli.app import app  # noqa: PLC0415 - imports grpc
    from tournaments.cli.common import fail  # noqa: PLC0415 - after the hardening too
    from tournaments.executors import ExecutorError  # noqa: PLC0415
    from tournaments.store import StoreDamaged  # noqa: PLC0415

    try:
        app()
    except StoreDamaged as error:  # found in any command, wherever the damaged row was read
        raise SystemExit(fail(f"{error}; restore the store from a backup").exit_code) from None
    except ExecutorError as error:  # a full disk, a lost cluster: in a command that runs matches
        raise SystemExit(fail(str(error), 1).exit_code) from None


if __name__ == "__main__":
    main()
