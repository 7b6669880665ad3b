"""The rate limits of `pilothouse serve`: wrong keys per address, new conversations per caller.

Keys are long enough that guessing cannot succeed, but each wrong one still costs a request's
work, and one identity starting conversations without end costs disk and the model's time. So
after `auth_failures` wrong keys a minute an address is answered 429 before its key is even
compared, and after `new_conversations` a minute an identity's next conversation is a 429,
whichever door it comes in by (REST, web UI, or A2A: the A2A server takes the same
`new_conversations` limiter). Each 429 carries `Retry-After` and the usual `{error, suggestion}`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from pilothouse.config import Settings
from pilothouse.interfaces.api.identity import Identity
from pilothouse.interfaces.api.security import MINUTE, too_many
from pilothouse.rate_limit import RateLimiter


def _per_minute(limit: int) -> RateLimiter:
    return RateLimiter(limit, MINUTE)


@dataclass(frozen=True)
class ApiLimits:
    """The limiters one `pilothouse serve` process shares across its doors."""

    auth_failures: RateLimiter = field(
        default_factory=lambda: _per_minute(Settings.auth_failures_per_minute))
    new_conversations: RateLimiter = field(
        default_factory=lambda: _per_minute(Settings.new_conversations_per_minute))

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiLimits:
        return cls(auth_failures=_per_minute(settings.auth_failures_per_minute),
                   new_conversations=_per_minute(settings.new_conversations_per_minute))

    def count_new_conversation(self, caller: Identity) -> None:
        """Record that `caller` starts a conversation, or refuse it (429) over the limit."""
        wait = self.new_conversations.hit(caller.name)
        if wait is not None:
            raise too_many(
                f"Too many new conversations: at most {self.new_conversations.limit} a "
                "minute per caller.",
                "Continue an existing conversation (POST /conversations/{id}/ask), or wait "
                "and retry; the limit is PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE.", wait)


def app_limits(request: Request) -> ApiLimits:
    """The app's limits (`create_api_app` sets them; an app assembled without gets defaults)."""
    limits: ApiLimits | None = getattr(request.app.state, "limits", None)
    if limits is None:
        limits = request.app.state.limits = ApiLimits()
    return limits


#: A route parameter: the app's `ApiLimits`.
Limits = Annotated[ApiLimits, Depends(app_limits)]
