"""energy-index: rebuild the energy-per-output-token index from the ML.ENERGY Leaderboard."""

__version__ = "1.0.0"
