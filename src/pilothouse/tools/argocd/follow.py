"""Follow an application's health after a change until it settles, or a time limit passes.

After a rollback or a resource action a person wants to know whether it worked: the app is
polled until no operation runs and its health is Healthy or Degraded (seen after at least one
moment of change, so a reading from before the rollout started is not taken as its result),
or until `timeout` seconds pass; the answer says which, and every health seen on the way.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pilothouse.errors import PilothouseError
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.errors import AppSubject

SETTLED = ("Healthy", "Degraded")
MAX_FOLLOW_SECONDS = 300
_MIN_POLLS = 3


async def follow_health(client: ArgoCDClient, name: str, *, project: str | None,
                        limit_seconds: float, interval: float = 0.5) -> dict[str, Any]:
    """Poll until settled or `limit_seconds`; report the final health and the way there."""
    timeout = max(0.0, min(limit_seconds, MAX_FOLLOW_SECONDS))
    params = {"project": project} if project else {}
    started = time.monotonic()
    seen: list[str] = []
    polls, moved = 0, False
    health, phase = "Unknown", None
    while True:
        try:
            doc = await client.get(f"/api/v1/applications/{name}", params,
                                   subject=AppSubject(name))
        except PilothouseError as error:  # the change was made; say what is unknown, not fail
            return {"health": health, "settled": False, "observed": seen[:10],
                    "note": f"Could not follow the health ({error.message}); check it with "
                            "get_application."}
        status = doc.get("status") or {}
        health = (status.get("health") or {}).get("status") or "Unknown"
        phase = (status.get("operationState") or {}).get("phase")
        running = bool(doc.get("operation")) or phase == "Running"
        moved = moved or running or health not in SETTLED
        polls += 1
        if not seen or seen[-1] != health:
            seen.append(health)
        settled = not running and health in SETTLED and (moved or polls >= _MIN_POLLS)
        waited = time.monotonic() - started
        if settled or waited >= timeout:
            break
        await asyncio.sleep(interval)
    answer: dict[str, Any] = {"health": health, "settled": settled,
                              "waited_seconds": round(waited, 1), "observed": seen[:10]}
    if phase:
        answer["operation_phase"] = phase
    if not settled:
        answer["note"] = (f"Still {health} after {round(waited)} s; check again with "
                          "get_application.")
    return answer
