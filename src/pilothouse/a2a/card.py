"""An agent's A2A card: who it is, where it listens, and one skill per tool it can use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol
from langchain_core.tools import BaseTool

from pilothouse import __version__

#: Where the REST (HTTP+JSON) binding lives under an agent's base URL.
REST_SUFFIX = "rest"
#: The card's name for the API-key scheme every call must satisfy when keys are configured.
BEARER_SCHEME = "bearer"


def _first_sentence(text: str, limit: int = 300) -> str:
    sentence = text.strip().split("\n", 1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 3] + "..."


def tool_skills(tools: Sequence[BaseTool], agent: str) -> list[AgentSkill]:
    """One skill per tool: what a caller can ask this agent to do."""
    return [
        AgentSkill(
            id=tool.name,
            name=tool.name.replace("_", " "),
            description=_first_sentence(tool.description or tool.name),
            tags=[agent],
            input_modes=["text/plain"],
            output_modes=["text/plain"],
        )
        for tool in tools
    ]


def bearer_security() -> dict[str, Any]:
    """The card fields saying: send `Authorization: Bearer <key>` on every call."""
    return {
        "security_schemes": {BEARER_SCHEME: SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="bearer", description="A key from the server's PILOTHOUSE_API_KEYS."))},
        "security_requirements": [SecurityRequirement(schemes={BEARER_SCHEME: StringList()})],
    }


def agent_card(
    name: str, description: str, tools: Sequence[BaseTool], base_url: str, *,
    requires_key: bool = False,
) -> AgentCard:
    """The card served at `<base_url>/.well-known/agent-card.json`.

    `base_url` ends with a slash: the JSON-RPC endpoint is the base itself, and Starlette would
    answer a POST without the slash with a redirect no client follows. With `requires_key`
    the card declares the bearer scheme callers must use (the card itself stays public).
    """
    base = base_url if base_url.endswith("/") else base_url + "/"
    security: dict[str, Any] = bearer_security() if requires_key else {}
    return AgentCard(
        name=name,
        description=description,
        version=__version__,
        provider=AgentProvider(organization="Pilothouse", url=base),
        supported_interfaces=[
            AgentInterface(url=base, protocol_binding=TransportProtocol.JSONRPC,
                           protocol_version=PROTOCOL_VERSION_CURRENT),
            AgentInterface(url=base + REST_SUFFIX, protocol_binding=TransportProtocol.HTTP_JSON,
                           protocol_version=PROTOCOL_VERSION_CURRENT),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=tool_skills(tools, name),
        **security,
    )


def rebase_card(card: AgentCard, base_url: str) -> AgentCard:
    """`card` with its interfaces moved to `base_url`: where the caller actually reached it.

    An agent behind a proxy or a container name advertises the address it knows; the caller
    already knows a working one, so it keeps using that.
    """
    base = base_url if base_url.endswith("/") else base_url + "/"
    rebased = AgentCard()
    rebased.CopyFrom(card)
    for interface in rebased.supported_interfaces:
        if interface.protocol_binding == TransportProtocol.HTTP_JSON:
            interface.url = base + REST_SUFFIX
        else:
            interface.url = base
    return rebased
