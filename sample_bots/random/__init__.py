"""The ``random`` sample bot."""
