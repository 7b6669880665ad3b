"""Test support shipped with the package: the scripted model (the only fake)."""
