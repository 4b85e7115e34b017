"""Test-only fake agent backend."""
