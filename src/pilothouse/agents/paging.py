"""Another page of what an agent showed: the product's own paging protocol, kept by code.

Every paged view opens with "PAGE N of M (...)" and ends "Ask for page N+1 for more"
(`tools.views`). So a follow-up that asks for another page ("next page", "page 3", "the rest")
is about the newest paged listing of the conversation, and the call that answers it is that
listing's call again with another `page`: same tool, same filters. The supervisor sends such a
follow-up to the agent that showed the listing (`routing`), and that agent makes the call
without a model call (`NextPageMiddleware`). Measured on the local model before: asked for the
next page of a filtered listing, it called page 2 of everything (the filter gone), or retyped
the previous page itself.

A follow-up that names something the agent's inventory holds ("page 2 of shopfront's events")
asks for a new listing, which the model writes: what a name is, the live inventory says, not
the word's shape (one world's apps are `shopfront`, another's `shop-api-blue`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from pilothouse.agents.inventory import Inventory
from pilothouse.context.rewrite import RequestRewriteMiddleware, calling, first_call, question_text
from pilothouse.models.tokens import turn_start
from pilothouse.runtime.answer_views import shown_text

#: A follow-up asking for another page of what was shown ("show page 2", "next page", "more").
PAGE_REQUEST = re.compile(
    r"(?<![\w-])(?:page\s*\d+|(?:the\s+)?(?:next|previous|another|last)\s+(?:page|\d+|one|ones"
    r"|two|three|four|five|ten|twenty|few|batch)|(?:show|list|give\s+me)\s+more|the\s+rest)"
    r"(?![\w-])", re.IGNORECASE)
#: The page line of a paged view: "PAGE 2 of 41".
PAGE_LINE = re.compile(r"\bPAGE (\d+)(?: of (\d+))?\b")
_PAGE_NUMBER = re.compile(r"(?<![\w-])page\s*(\d+)(?![\w-])", re.IGNORECASE)
_BACK = re.compile(r"(?<![\w-])previous(?![\w-])", re.IGNORECASE)
_LAST_PAGE = re.compile(r"(?<![\w-])last\s+page(?![\w-])", re.IGNORECASE)


def asks_for_a_page(question: str) -> bool:
    """Whether `question` asks for another page of a listing."""
    return PAGE_REQUEST.search(question) is not None


def wanted_page(question: str, shown: int, pages: int | None) -> int:
    """The page `question` asks for, after page `shown` of `pages` (None: unknown)."""
    if (number := _PAGE_NUMBER.search(question)) is not None:
        page = int(number.group(1))
    elif _LAST_PAGE.search(question) and pages:
        page = pages
    elif _BACK.search(question):
        page = shown - 1
    else:
        page = shown + 1
    return max(1, min(page, pages)) if pages else max(1, page)


#: A listing shown earlier: its call (name and args), the page shown, how many pages (or None).
Listing = tuple[dict[str, Any], int, int | None]


def newest_listing(messages: Sequence[BaseMessage]) -> Listing | None:
    """The call of the newest paged listing before this turn, with its page and page count."""
    earlier = messages[:max(turn_start(messages), 0)]
    for index in range(len(earlier) - 1, -1, -1):
        result = earlier[index]
        if not isinstance(result, ToolMessage) or result.status == "error":
            continue
        line = PAGE_LINE.search(shown_text(result)[:300])  # the page line opens the view
        if line is None:
            continue
        call = next((c for m in reversed(earlier[:index]) if isinstance(m, AIMessage)
                     for c in m.tool_calls if c.get("id") == result.tool_call_id), None)
        if call is None:
            return None
        pages = int(line.group(2)) if line.group(2) else None
        return {"name": call["name"], "args": dict(call["args"])}, int(line.group(1)), pages
    return None


class NextPageMiddleware(RequestRewriteMiddleware):
    """Answers "next page" with the newest listing's call for that page, without the model,
    unless the question names something `inventory` holds (the agent's own names)."""

    def __init__(self, inventory: Inventory | None = None) -> None:
        super().__init__()
        self.inventory = inventory

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        # "The next 5 apps of project X" is a new listing, which the model writes.
        if self.pages(request) and self.inventory is not None \
                and await self.inventory.mentions(question_text(request)):
            return await handler(request)
        return await super().awrap_model_call(request, handler)

    @staticmethod
    def pages(request: ModelRequest) -> bool:
        """Whether `request` is a turn's first call asking for another page."""
        return first_call(request) and asks_for_a_page(question_text(request))

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        if not self.pages(request):
            return None
        question = question_text(request)
        found = newest_listing(request.messages)
        if found is None:
            return None
        call, shown, pages = found
        offered = {getattr(t, "name", None): t for t in request.tools}
        tool = offered.get(call["name"])
        schema = getattr(tool, "args_schema", None)
        if not isinstance(schema, dict) or "page" not in (schema.get("properties") or {}):
            return None
        page = wanted_page(question, shown, pages)
        return calling(call["name"], {**call["args"], "page": page})
