"""Where the API and the TUI keep the conversation list.

`pilothouse serve` (interfaces/serve.py) is the one server; it mounts the API over the agents
the factory (`pilothouse.agents.factory`) built.
"""

from __future__ import annotations

from pathlib import Path

from pilothouse.config import Settings


def registry_path(settings: Settings) -> Path:
    """Where the conversation list lives: beside the checkpoints in PILOTHOUSE_HOME."""
    return settings.home / "state" / "conversations.sqlite"
