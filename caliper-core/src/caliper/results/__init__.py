"""Saved results: the schema (``models``), scoring (``scoring``) and the store (``store``)."""
