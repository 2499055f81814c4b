"""Benchmarks that measure our rules engine side by side with other Gin Rummy engines.

Run ``python -m benchmarks.rules_bench`` (``make bench`` installs the peers first).
"""
