"""The agents a text names by its domain words alone: the request frame with no names resolved.

Routing tests of the words use the frame's own `agents_for`, the one the product runs, with
no inventory behind it, so what they check is what a question naming no resource gets.
"""

from __future__ import annotations

from pilothouse.agents.registry import SPECIALISTS
from pilothouse.agents.request_frame import RequestFrame
from pilothouse.agents.routing import DOMAIN_WORDS, DomainRouter

#: The router the supervisor builds: the domain words, and what each agent's description says.
DESCRIPTIONS = {name: spec.description for name, spec in SPECIALISTS.items()}
ROUTER = DomainRouter(DOMAIN_WORDS, DESCRIPTIONS)


def agents_by_words(text: str) -> list[str]:
    """The agents `text`'s domain words name, in the order it names them."""
    return RequestFrame(text, (), ROUTER.words_at).agents_for(text)
