"""The foundation: seven-tag format, units, formulas, prompts, benchmark data, models. Imports nothing above it."""
