"""The in-memory rate limiter: a burst, then one event per interval, per key, memory bounded."""

from __future__ import annotations

import pytest

from pilothouse.rate_limit import RateLimiter, retry_after


class Clock:
    """A clock the test moves by hand: the limiter's only notion of time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_of_limit_events_then_a_wait_that_says_how_long() -> None:
    clock = Clock()
    limiter = RateLimiter(3, 60, clock=clock)
    assert [limiter.hit("a") for _ in range(3)] == [None, None, None]
    assert limiter.hit("a") == pytest.approx(20.0)  # one event earned back each 60/3 s
    assert limiter.blocked("a") == pytest.approx(20.0)
    clock.now += 5
    assert limiter.blocked("a") == pytest.approx(15.0)
    assert limiter.hit("a") == pytest.approx(15.0)  # a refused event is not counted again
    clock.now += 15  # exactly the time it named
    assert limiter.blocked("a") is None and limiter.hit("a") is None
    assert limiter.hit("a") == pytest.approx(20.0)


def test_blocked_records_nothing_and_keys_are_apart() -> None:
    limiter = RateLimiter(2, 1, clock=Clock())
    for _ in range(100):
        assert limiter.blocked("a") is None
    assert limiter.hit("a") is None and limiter.hit("a") is None
    assert limiter.blocked("a") is not None
    assert limiter.blocked("b") is None and limiter.hit("b") is None


def test_a_quiet_key_earns_back_its_whole_burst_but_no_more() -> None:
    clock = Clock()
    limiter = RateLimiter(4, 60, clock=clock)
    for _ in range(4):
        limiter.hit("a")
    clock.now += 3600  # an hour of silence is worth one burst, not sixty
    assert [limiter.hit("a") for _ in range(5)][-2:] == [None, pytest.approx(15.0)]


def test_a_clock_that_goes_back_refunds_nothing() -> None:
    clock = Clock()
    limiter = RateLimiter(1, 60, clock=clock)
    limiter.hit("a")
    clock.now -= 30
    assert limiter.blocked("a") == pytest.approx(60.0)


def test_memory_stays_bounded_and_the_oldest_key_is_forgotten_first() -> None:
    limiter = RateLimiter(1, 60, clock=Clock(), max_keys=100)
    for n in range(10_000):
        limiter.hit(f"10.0.{n // 256}.{n % 256}")
    assert limiter.tracked_keys == 100
    assert limiter.blocked("10.0.39.15") is not None  # the newest (n = 9,999) is remembered
    assert limiter.blocked("10.0.0.0") is None  # the oldest was forgotten: forgiven
    limiter.hit("10.0.39.15")  # touched again: now the newest, kept past 99 more keys
    for n in range(99):
        limiter.hit(f"fresh-{n}")
    assert limiter.blocked("10.0.39.15") is not None


@pytest.mark.parametrize(("limit", "per", "keys"), [(0, 60, 1), (1, 0, 1), (1, float("nan"), 1),
                                                    (1, 60, 0)])
def test_a_limiter_that_could_not_work_is_refused(limit: int, per: float, keys: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        RateLimiter(limit, per, max_keys=keys)


@pytest.mark.parametrize(("seconds", "header"), [(0.001, "1"), (1.0, "1"), (2.1, "3"),
                                                 (20.0, "20")])
def test_retry_after_is_whole_seconds_rounded_up(seconds: float, header: str) -> None:
    assert retry_after(seconds) == header
