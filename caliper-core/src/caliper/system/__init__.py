"""The operating-system layer: child processes, the temporary-file ledger, atomic output files,
skill folders on disk, text made safe to show, OS errors described, and the stop policy.

Modules here import nothing of Caliper above :mod:`caliper.errors`."""
