"""Rate limits of the API: wrong keys per address, new conversations per identity (429s).

The finding: 3,000 wrong keys in 12 s were all compared and answered 401, and one identity made
500 conversations in 5 s. Here the same traffic goes over real HTTP to uvicorn on 127.0.0.1;
only the limiter's clock is the test's, so "a minute later" needs no sleep.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import httpx
import pytest
from fastapi import FastAPI
from interfaces_support import OpenAgent, in_process, on_socket

from pilothouse.config import Settings
from pilothouse.interfaces.api.limits import ApiLimits
from pilothouse.rate_limit import RateLimiter

ALICE, BOB = "alice-key-2f6b0d4a8c3e7f1b5d9a04", "bob-key-7c1e5a9d3f6b0c4e8a2d5f31"
KEYS = [f"alice={ALICE}", f"bob={BOB}"]


class Clock:
    """The limiters' clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def limits(clock: Clock, *, failures: int = 20, conversations: int = 30) -> ApiLimits:
    return ApiLimits(auth_failures=RateLimiter(failures, 60, clock=clock),
                     new_conversations=RateLimiter(conversations, 60, clock=clock))


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_three_thousand_wrong_keys_get_429s_before_any_comparison(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI],
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    app = make_app(make_open_agent(["hi"]), api_keys=KEYS, limits=limits(clock))
    guesses = [f"guess-{n:04d}-{'x' * 30}" for n in range(3_000)]
    with on_socket(app) as url, caplog.at_level(logging.WARNING, logger="pilothouse.api"):
        async with httpx.AsyncClient(base_url=url, timeout=60,
                                     limits=httpx.Limits(max_connections=8)) as http:
            gate = asyncio.Semaphore(8)

            async def guess(key: str) -> httpx.Response:
                async with gate:
                    return await http.get("/conversations", headers=bearer(key))

            answers = await asyncio.gather(*(guess(k) for k in guesses))
            statuses = [a.status_code for a in answers]
            assert statuses.count(401) == 20 and statuses.count(429) == 2_980
            refused = next(a for a in answers if a.status_code == 429)
            assert refused.headers["retry-after"] == "3"  # one more guess every 60/20 s
            assert set(refused.json()) == {"error", "suggestion"}
            assert "Too many wrong API keys" in refused.json()["error"]
            assert "Retry after 3 s" in refused.json()["suggestion"]

            # Blocked means not compared: alice's own key is refused from this address too.
            assert (await http.get("/conversations", headers=bearer(ALICE))).status_code == 429
            # Probes and the page answer whoever asks; a request without a key is a 401.
            assert (await http.get("/healthz")).status_code == 200
            assert (await http.get("/conversations")).status_code == 401
            clock.now += 3  # Retry-After later, one guess more is compared
            assert (await http.get("/conversations", headers=bearer(ALICE))).status_code == 200
            assert (await http.get("/conversations", headers=bearer(guesses[0]))).status_code \
                == 401
            assert (await http.get("/conversations", headers=bearer(BOB))).status_code == 429
    warned = [r.getMessage() for r in caplog.records if "wrong API keys" in r.getMessage()]
    assert len(warned) == 2  # when the address was blocked, and blocked again; not per guess
    assert not [g for g in guesses if any(g in w for w in warned)]


async def test_wrong_keys_block_the_address_that_sent_them_only(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(make_open_agent(["hi"]), api_keys=KEYS, limits=limits(Clock(), failures=3))

    async def get(address: str, headers: dict[str, str]) -> int:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return (await http.get("/conversations", headers=headers)).status_code

    async with in_process(app):
        for _ in range(10):  # no key is no guess: never counted
            assert await get("10.0.0.1", {}) == 401
        assert [await get("10.0.0.1", bearer("wrong-" * 6)) for _ in range(4)] == \
            [401, 401, 401, 429]
        assert await get("10.0.0.1", bearer(ALICE)) == 429
        assert await get("10.0.0.2", bearer(ALICE)) == 200
        assert await get("10.0.0.2", bearer("wrong-" * 6)) == 401


async def test_one_identity_cannot_start_conversations_without_end(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI],
) -> None:
    clock = Clock()
    app = make_app(make_open_agent(["hi"]), api_keys=KEYS,
                   limits=limits(clock, conversations=3))
    with on_socket(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            made = [await http.post("/conversations", json={}, headers=bearer(ALICE))
                    for _ in range(5)]
            assert [m.status_code for m in made] == [201, 201, 201, 429, 429]
            refused = made[-1]
            assert refused.headers["retry-after"] == "20"
            assert set(refused.json()) == {"error", "suggestion"}
            assert "at most 3 a minute" in refused.json()["error"]
            assert "PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE" in refused.json()["suggestion"]
            # Another identity has its own quota; alice's existing conversations still work.
            assert (await http.post("/conversations", json={},
                                    headers=bearer(BOB))).status_code == 201
            mine = (await http.get("/conversations", headers=bearer(ALICE))).json()
            assert mine["total"] == 3
            thread = made[0].json()["id"]
            asked = await http.post(f"/conversations/{thread}/ask", json={"question": "hi"},
                                    headers=bearer(ALICE))
            assert asked.status_code == 200
            clock.now += 20
            assert (await http.post("/conversations", json={},
                                    headers=bearer(ALICE))).status_code == 201


async def test_the_local_caller_without_keys_has_a_quota_too(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(make_open_agent(["hi"]), limits=limits(Clock(), conversations=2))
    async with in_process(app) as http:
        made = [(await http.post("/conversations", json={})).status_code for _ in range(3)]
    assert made == [201, 201, 429]


def test_the_limits_come_from_the_settings() -> None:
    settings = Settings.from_env({"PILOTHOUSE_AUTH_FAILURES_PER_MINUTE": "5",
                                  "PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE": "7"})
    made = ApiLimits.from_settings(settings)
    assert (made.auth_failures.limit, made.new_conversations.limit) == (5, 7)
    assert made.auth_failures.per_seconds == made.new_conversations.per_seconds == 60
    default = ApiLimits.from_settings(Settings.from_env({}))
    assert (default.auth_failures.limit, default.new_conversations.limit) == (20, 30)
