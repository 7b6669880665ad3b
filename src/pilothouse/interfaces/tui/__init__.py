"""The terminal UI (Textual): chat, tool and context activity, approvals, conversations."""

from pilothouse.interfaces.tui.app import PilothouseApp, run_tui, tui_app

__all__ = ["PilothouseApp", "run_tui", "tui_app"]
