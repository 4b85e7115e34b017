"""Loading and resolving plugins: entry points, the plugin host, engines, the catalogue of
first-party distributions. Plugins never import this package; the commands and the runner do."""
