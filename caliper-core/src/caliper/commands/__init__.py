"""The `caliper` subcommands, one module each, imported only when used."""
