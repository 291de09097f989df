"""coburst."""
