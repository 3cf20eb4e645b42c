"""experiments."""
