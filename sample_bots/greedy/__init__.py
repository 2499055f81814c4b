"""The ``greedy`` sample bot."""
