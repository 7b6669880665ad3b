"""The web UI: one server-rendered page, a small vanilla-JS client and a stylesheet.

Everything is served from this package (no CDN, no build step). The page itself carries no
conversation data, so it needs no API key; the client fetches data with the key the person
enters, and a strict Content-Security-Policy allows only our own scripts and styles.
"""

from __future__ import annotations

import html
from pathlib import Path
from string import Template

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from pilothouse import __version__

WEB_DIR = Path(__file__).parent
STATIC_DIR = WEB_DIR / "static"
PAGE = Template((WEB_DIR / "templates" / "index.html").read_text(encoding="utf-8"))

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def render_page(request: Request) -> str:
    """The chat page with the agent's name, model and window filled in (HTML-escaped).

    `app.state.agent_info` is the API's description of its agent (`describe_agent`).
    """
    info = getattr(request.app.state, "agent_info", None) or {}
    window = info.get("window")
    values = {
        "agent": info.get("name") or "pilothouse",
        "model": info.get("model") or "model starting",
        "window": f"{window:,} token window" if window else "",
        "tools": str(len(info.get("tools") or [])),
        "auth": "key" if request.app.state.api_keys else "local",
        "version": __version__,
    }
    return PAGE.substitute({k: html.escape(v, quote=True) for k, v in values.items()})


def mount_web_ui(app: FastAPI) -> None:
    """Serve the chat page at `/` and its assets under `/static`."""
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(render_page(request), headers={
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
        })
