"""Pilothouse: a multi-agent assistant for platform engineers that does not fall over."""

__version__ = "0.1.0"
