"""Eval specs: the model (``model``), loading and validation (``load``), skill sources."""
