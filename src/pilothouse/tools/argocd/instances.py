"""Several Argo CD instances behind one tool server: an optional `instance` on every tool.

With `ARGOCD_INSTANCES` set (Settings.argocd_instances), each tool gains an `instance`
argument; the tool's body is unchanged and talks to `InstanceClients`, which hands every call
to the client of the instance the current call chose (a context variable, so concurrent calls
never mix). Listing and searching without an instance run on every instance: the caps apply
per instance (each is searched as it would be alone), the answer has a per-instance breakdown,
and a dead instance is reported while the others answer. Errors name their instance.
With one instance nothing changes, and the schemas stay as short as they were.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Annotated, Any, cast

from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult
from pydantic import Field

from pilothouse.config import DEFAULT_ARGOCD_INSTANCE, Settings
from pilothouse.errors import PilothouseError, UserInputError
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.output import fit
from pilothouse.tools.http_api import server as tool_base
from pilothouse.tools.mcp_support import tool_result
from pilothouse.tools.tool_filter import WRITES
from pilothouse.tools.views import number, page_header, table

CURRENT: ContextVar[str | None] = ContextVar("argocd_instance", default=None)
#: Tools that, without an instance, answer for every instance at once.
FAN_OUT = ("list_applications", "search_argocd_resources")


def instances_env(settings: Settings) -> dict[str, str]:
    """The variables that reproduce `settings`' named instances in a child process."""
    if not settings.argocd_instances:
        return {}
    env = {"ARGOCD_INSTANCES": ",".join(i.name for i in settings.argocd_instances)}
    for item in settings.argocd_instances:
        values = {"URL": item.url, "TOKEN": item.token, "USERNAME": item.username,
                  "PASSWORD": item.password,
                  "VERIFY_SSL": "true" if item.verify_ssl else "false",
                  "CA_BUNDLE": str(item.ca_bundle) if item.ca_bundle else None}
        env.update({item.prefix + k: v for k, v in values.items() if v})
    return env


def instance_settings(settings: Settings) -> dict[str, Settings]:
    """Settings per instance name: the default one (ARGOCD_URL) first, if it is set."""
    found: dict[str, Settings] = {}
    if settings.argocd_url:
        found[DEFAULT_ARGOCD_INSTANCE] = settings
    for item in settings.argocd_instances:
        found[item.name] = dataclasses.replace(
            settings, argocd_url=item.url, argocd_token=item.token,
            argocd_username=item.username, argocd_password=item.password,
            argocd_verify_ssl=item.verify_ssl, argocd_ca_bundle=item.ca_bundle,
            argocd_instances=())
    return found


class InstanceClients:
    """Stands in for an `ArgoCDClient`: every attribute is the current instance's client's."""

    def __init__(self, by_name: Mapping[str, Settings], default: str) -> None:
        self._settings = dict(by_name)
        self._default = default
        self._clients: dict[str, ArgoCDClient] = {}

    def current(self) -> ArgoCDClient:
        name = CURRENT.get() or self._default
        if name not in self._clients:
            self._clients[name] = ArgoCDClient.from_settings(self._settings[name])
        return self._clients[name]

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.current(), attribute)

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()


def client_factory(settings: Settings) -> Callable[[], ArgoCDClient]:
    """The runner's client factory: one client, or one per instance behind `InstanceClients`."""
    by_name = instance_settings(settings)
    if len(by_name) <= 1:
        return lambda: ArgoCDClient.from_settings(settings)
    return lambda: cast(ArgoCDClient, InstanceClients(by_name, next(iter(by_name))))


def _named(error: PilothouseError, name: str) -> PilothouseError:
    error.message = f"Argo CD instance '{name}': {error.message}"
    return error


def _merged(tool: str, answers: dict[str, dict[str, Any]],
            errors: dict[str, str]) -> dict[str, Any]:
    """One page per instance, side by side, with the totals per instance."""
    pages = [a.get("pagination") or {} for a in answers.values()]
    first = pages[0] if pages else {}
    items = [{**row, "instance": name} for name, answer in answers.items()
             for row in answer.get("items") or []]
    by_instance: dict[str, Any] = {
        name: {"total_items": (a.get("pagination") or {}).get("total_items", 0)}
        for name, a in answers.items()}
    for name, message in errors.items():
        by_instance[name] = {"error": message}
    for name, answer in answers.items():
        if answer.get("warning"):
            by_instance[name]["warning"] = answer["warning"]
    return {
        "tool": tool,
        "pagination": {"page": first.get("page", 1), "page_size": first.get("page_size", 20),
                       "total_items": sum(p.get("total_items", 0) for p in pages),
                       "total_pages": max((p.get("total_pages", 1) for p in pages), default=1),
                       "has_next": any(p.get("has_next") for p in pages),
                       "has_prev": any(p.get("has_prev") for p in pages)},
        "instances": by_instance, "items": items}


def merged_view(payload: Mapping[str, Any]) -> str:
    """The page line, one line per instance (dead ones included), and a table with instances."""
    lines = [page_header(payload.get("pagination") or {}, "items",
                         f" across {len(payload.get('instances') or {})} Argo CD instances")]
    for name, facts in (payload.get("instances") or {}).items():
        lines.append(f"- {name}: " + (f"unreachable or refused ({facts['error']})"
                                      if "error" in facts else
                                      f"{number(facts.get('total_items', 0))} items"))
    items = payload.get("items") or []
    if items:
        columns = ["instance", *[c for c in ("type", "name", "project", "sync", "health")
                                 if any(c in i for i in items)]]
        lines.append("\n" + table(items, columns))
    return "\n".join(lines)


def with_instance_argument(tools: list[Tool], settings: Settings) -> list[Tool]:
    """`tools` with an `instance` argument, when more than one instance is configured."""
    names = list(instance_settings(settings))
    if len(names) <= 1:
        return tools
    return [_wrap(tool, names, settings.max_tool_output_size) for tool in tools]


def _wrap(tool: Tool, names: list[str], max_chars: int) -> Tool:
    body: Callable[..., Awaitable[CallToolResult]] = tool.fn
    fan_out = tool.name in FAN_OUT

    async def on(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> CallToolResult:
        token = CURRENT.set(name)
        try:
            return await body(*args, **kwargs)
        except PilothouseError as error:
            raise _named(error, name) from None
        finally:
            CURRENT.reset(token)

    @functools.wraps(body)
    async def call(*args: Any, instance: str | None = None, **kwargs: Any) -> CallToolResult:
        if instance is not None and instance not in names:
            raise UserInputError(f"There is no Argo CD instance {instance!r}.",
                                 hint="Use one of: " + ", ".join(names) + ".")
        if instance is not None or not fan_out:
            return await on(instance or names[0], args, kwargs)
        answers: dict[str, dict[str, Any]] = {}
        errors: dict[str, str] = {}
        for name in names:  # one at a time: memory stays one instance's page
            try:
                result = await on(name, args, kwargs)
            except PilothouseError as error:
                errors[name] = error.message.split(": ", 1)[-1][:300]
                continue
            payload = dict(result.structured_content or {})
            if result.is_error:
                errors[name] = str(payload.get("error", "failed"))[:300]
            else:
                answers[name] = payload
        merged = _merged(tool.name, answers, errors)
        return tool_result(fit(merged, max_chars), is_error=not answers, view=merged_view)

    signature = inspect.signature(body, eval_str=True)
    extra = inspect.Parameter(
        "instance", inspect.Parameter.KEYWORD_ONLY, default=None,
        annotation=Annotated[str | None, Field(description=(
            "Argo CD instance: " + ", ".join(names)
            + ("; default: all" if fan_out else f"; default: {names[0]}")))])
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), extra])
    del call.__wrapped__  # the schema must come from the new signature
    # A tool without annotations counts as one that writes (as in `tool_filter`).
    return tool_base.tool(call, tool.description, annotations=tool.annotations or WRITES)
