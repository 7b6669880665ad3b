"""The REST API (FastAPI + server-sent events) that also serves the web UI."""

from pilothouse.interfaces.api.app import create_api_app

__all__ = ["create_api_app"]
