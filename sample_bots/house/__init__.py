"""The ``house`` sample bot: determinized Monte Carlo search over the hidden cards."""
