"""The foundation: seven-tag format, units, formulas (and their store), prompts, models, the method table.

Imports nothing above it (nothing of verifiers/, eval/, results/, apps/)."""
