"""The REST API (FastAPI + server-sent events) that also serves the web UI."""

from pilothouse.interfaces.api.app import create_api_app
from pilothouse.interfaces.api.server import assistant_app, serve_api

__all__ = ["assistant_app", "create_api_app", "serve_api"]
