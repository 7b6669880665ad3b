"""Operational endpoints: the agents and their health, liveness, readiness and metrics."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from pilothouse.errors import error_body
from pilothouse.interfaces.api.runtime import ApiRuntime, describe_agent, get_runtime
from pilothouse.interfaces.api.security import current_identity

Runtime = Annotated[ApiRuntime, Depends(get_runtime)]
router = APIRouter(tags=["operations"])


class Health(BaseModel):
    """Whether a part of the service can do its work, and why not."""

    status: str
    detail: str


class AgentOut(BaseModel):
    """An agent the API serves."""

    name: str
    model: str | None
    window: int | None
    tools: list[str]
    health: Health


class AgentList(BaseModel):
    agents: list[AgentOut]


@router.get("/agents", response_model=AgentList, dependencies=[Depends(current_identity)])
async def agents(runtime: Runtime) -> dict[str, Any]:
    """The agents behind this API: model, context window, tools and health."""
    return {"agents": [{**describe_agent(runtime.agent), "health": await runtime.health()}]}


@router.get("/healthz", response_model=Health)
async def healthz() -> dict[str, str]:
    """Liveness: the process answers (no dependencies are checked)."""
    return {"status": "ok", "detail": "The API process is running."}


@router.get("/readyz", response_model=Health, responses={503: {"description": "Not ready."}})
async def readyz(request: Request) -> Any:
    """Readiness: the agent is open and its conversation store answers."""
    runtime: ApiRuntime | None = getattr(request.app.state, "runtime", None)
    if runtime is None:
        return JSONResponse(error_body("The agent is still starting.", "Retry in a few seconds."),
                            status_code=503)
    health = await runtime.health()
    if health["status"] == "unavailable":
        return JSONResponse(error_body(health["detail"],
                                       "Check PILOTHOUSE_HOME / PILOTHOUSE_DATABASE_URL and "
                                       "the server log."), status_code=503)
    return health


def metrics_router() -> APIRouter | None:
    """`GET /metrics` in Prometheus text format, or None without prometheus_client."""
    try:
        from pilothouse.interfaces.api.metrics import CONTENT_TYPE
    except ImportError:
        return None
    metrics = APIRouter(tags=["operations"])

    @metrics.get("/metrics", response_class=Response,
                 responses={200: {"content": {CONTENT_TYPE: {}}}})
    async def prometheus(request: Request) -> Response:
        """Prometheus metrics: requests, streams, streamed events, context actions."""
        return Response(request.app.state.metrics.exposition(), media_type=CONTENT_TYPE)

    return metrics
