"""The ``strong`` sample bot."""
