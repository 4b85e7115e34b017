"""Caliper judge plugin: the LLM judge for `expect:`."""
