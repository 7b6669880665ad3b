"""Tests of retry_with_backoff: attempts, delays and which errors are retried."""

from __future__ import annotations

import random

import pytest

from orders.retry import MAX_ATTEMPTS, RetryExhausted, RetryPolicy, retry_with_backoff


def test_succeeds_after_transient_failures() -> None:
    calls, sleeps = [], []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("connection reset")
        return "ok"

    assert retry_with_backoff(flaky, sleep=sleeps.append, rng=random.Random(1)) == "ok"
    assert len(calls) == 3
    assert len(sleeps) == 2


def test_gives_up_after_max_attempts() -> None:
    def down() -> None:
        raise TimeoutError("db timeout")

    with pytest.raises(RetryExhausted) as caught:
        retry_with_backoff(down, sleep=lambda _: None)
    assert caught.value.attempts == MAX_ATTEMPTS


def test_other_errors_are_not_retried() -> None:
    calls = []

    def broken() -> None:
        calls.append(1)
        raise ValueError("bad input")

    with pytest.raises(ValueError):
        retry_with_backoff(broken, sleep=lambda _: None)
    assert calls == [1]


def test_delays_are_capped() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1.0, max_delay=2.0)
    rng = random.Random(7)
    assert policy.delay_before(1, rng) == 0.0
    assert all(policy.delay_before(n, rng) <= 2.0 for n in range(2, 11))
