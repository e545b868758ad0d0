"""Results: cells, run records, the leaderboard, plots, the paper tables and the error analysis."""
