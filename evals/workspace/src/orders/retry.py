"""Retries with exponential backoff and full jitter for calls to flaky dependencies.

Used around database connections (`orders.db`) and payments gateway calls
(`orders.payments`). Only errors listed as retryable are retried; anything else is raised at
once. The delay before attempt n (n >= 2) is a random value in
[0, min(MAX_DELAY_SECONDS, BASE_DELAY_SECONDS * 2 ** (n - 2))] ("full jitter"), which spreads
retries of many pods out instead of having them hammer a recovering database together.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, TypeVar

MAX_ATTEMPTS = 5
BASE_DELAY_SECONDS = 0.2
MAX_DELAY_SECONDS = 5.0

T = TypeVar("T")
log = logging.getLogger(__name__)


class RetryExhausted(Exception):
    """Every attempt failed; `last_error` is the final one."""

    def __init__(self, attempts: int, last_error: BaseException) -> None:
        super().__init__(f"gave up after {attempts} attempts: {last_error}")
        self.attempts = attempts
        self.last_error = last_error


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry, and which exceptions count as transient."""

    max_attempts: int = MAX_ATTEMPTS
    base_delay: float = BASE_DELAY_SECONDS
    max_delay: float = MAX_DELAY_SECONDS
    retry_on: tuple[type[BaseException], ...] = field(
        default_factory=lambda: (ConnectionError, TimeoutError))

    def delay_before(self, attempt: int, rng: random.Random) -> float:
        """Seconds to sleep before `attempt` (1-based); 0 before the first."""
        if attempt <= 1:
            return 0.0
        cap = min(self.max_delay, self.base_delay * 2 ** (attempt - 2))
        return rng.uniform(0, cap)


def retry_with_backoff(fn: Callable[[], T], policy: RetryPolicy | None = None, *,
                       sleep: Callable[[float], None] = time.sleep,
                       rng: random.Random | None = None) -> T:
    """Call `fn` until it succeeds or `policy.max_attempts` is spent."""
    policy = policy or RetryPolicy()
    rng = rng or random.Random()
    last: BaseException | None = None
    for attempt in range(1, policy.max_attempts + 1):
        delay = policy.delay_before(attempt, rng)
        if delay:
            sleep(delay)
        try:
            return fn()
        except policy.retry_on as error:
            last = error
            log.warning("attempt %d/%d failed: %s", attempt, policy.max_attempts, error)
    assert last is not None
    raise RetryExhausted(policy.max_attempts, last)


def retrying(policy: RetryPolicy | None = None) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator form of `retry_with_backoff`."""

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        @wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> T:
            return retry_with_backoff(lambda: fn(*args, **kwargs), policy)

        return wrapper

    return decorate
