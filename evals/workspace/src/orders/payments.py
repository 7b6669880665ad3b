"""The payments gateway client, behind a circuit breaker.

The orders service charges and refunds through `payments-gateway` (the payments team's
service, deployed by Argo CD as `payments-gateway-<env>`). When the gateway fails
FAILURE_THRESHOLD times in a row, the breaker opens and calls fail fast with `CircuitOpen` for
RESET_TIMEOUT_SECONDS; then one trial call is let through (half-open) and its outcome closes or
re-opens the breaker. Each call is retried on connection errors before it counts as a failure.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from orders.retry import RetryPolicy, retry_with_backoff

FAILURE_THRESHOLD = 5
RESET_TIMEOUT_SECONDS = 30.0


class CircuitOpen(Exception):
    """The breaker is open: the gateway failed too often; try again later."""


class CircuitBreaker:
    """Closed -> open after FAILURE_THRESHOLD failures -> half-open after the timeout."""

    def __init__(self, threshold: int = FAILURE_THRESHOLD,
                 reset_timeout: float = RESET_TIMEOUT_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold = threshold
        self.reset_timeout = reset_timeout
        self.clock = clock
        self.failures = 0
        self.opened_at: float | None = None
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        if self.opened_at is None:
            return "closed"
        if self.clock() - self.opened_at >= self.reset_timeout:
            return "half-open"
        return "open"

    def call(self, fn: Callable[[], Any]) -> Any:
        with self._lock:
            if self.state == "open":
                raise CircuitOpen(f"payments gateway circuit open for {self.reset_timeout} s")
        try:
            result = fn()
        except Exception:
            with self._lock:
                self.failures += 1
                if self.failures >= self.threshold or self.state == "half-open":
                    self.opened_at = self.clock()
            raise
        with self._lock:
            self.failures, self.opened_at = 0, None
        return result


class PaymentsClient:
    """Charges and refunds orders through the payments gateway's JSON API."""

    def __init__(self, base_url: str, timeout: float = 3.0,
                 breaker: CircuitBreaker | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.breaker = breaker or CircuitBreaker()

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.base_url}{path}", data=json.dumps(body).encode(), method="POST",
            headers={"content-type": "application/json"})

        def send() -> dict[str, Any]:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())

        return self.breaker.call(lambda: retry_with_backoff(send, RetryPolicy(max_attempts=3)))

    def charge(self, order_id: str, amount: Decimal, currency: str) -> str:
        """Charge an order; returns the gateway's payment id."""
        answer = self._post("/v1/charges", {"order_id": order_id, "amount": str(amount),
                                            "currency": currency})
        return str(answer["payment_id"])

    def refund(self, payment_id: str, amount: Decimal) -> str:
        """Refund (part of) a payment; returns the refund id."""
        answer = self._post("/v1/refunds", {"payment_id": payment_id, "amount": str(amount)})
        return str(answer["refund_id"])
