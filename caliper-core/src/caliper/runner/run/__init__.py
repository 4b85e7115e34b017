"""One run, phase by phase: compose (from the spec and options), plan, schedule on an
executor, journal, assemble the saved run, and decide how it ended."""
