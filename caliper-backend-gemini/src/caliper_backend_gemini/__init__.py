"""Caliper backend plugin for the gemini agent CLI."""
