"""Caliper backend plugin for the codex agent CLI."""
