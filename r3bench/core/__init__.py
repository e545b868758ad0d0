"""r3bench's foundation: prompts, models (short names -> local folders), data fetching, the method table.

Built on verifiers/ (the seven-tag format, units and the formula corpus live there); imports nothing
above it (nothing of procgen/, pde/, eval/, results/, apps/, trainers/)."""
