"""Identities from API keys, and what each may see and do with conversations over REST."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from fastapi import FastAPI
from interfaces_support import RESTARTED, OpenAgent, in_process, kinds, parse_sse

from pilothouse.errors import ConfigurationError
from pilothouse.interfaces.api.identity import KeyRing, generated_name
from pilothouse.testing.scripted_model import tool_call

ALICE, BOB, ROOT = ("alice-secret-0f3a9c2e7b5d1a8c4e6f", "bob-secret-5c8e1a7d3f9b2e6a0c4d8f",
                     "root-secret-9a2c6e0f4b8d1a5c7e3f")
KEYS = [f"alice={ALICE}", f"bob={BOB}"]
ADMIN = [f"root={ROOT}"]
A_KEY, BARE, ROOT_KEY = ("a-secret-7e1c9a3f5b0d2e8c6a4f1b9d", "bare-secret-3b8f1d6a9c2e5f0a7d4c",
                         "r-secret-6d0b4f8a2c7e1d5b9f3a0c7e")
B64 = "cGlsb3Rob3VzZSBiYXNlNjQga2V5IHdpdGggcGFkZGluZw=="  # a bare key with base64 padding


def test_keys_are_name_key_pairs_and_a_bare_key_gets_a_stable_name() -> None:
    ring = KeyRing.parse([f"alice={A_KEY}", BARE, B64], [f"root={ROOT_KEY}"])
    assert ring.names == ("alice", generated_name(BARE), generated_name(B64), "root")
    assert ring.identify(A_KEY) is not None and ring.identify(A_KEY).name == "alice"
    bare = ring.identify(BARE)
    assert bare is not None and bare.name.startswith("key-") and "bare" not in bare.name
    assert ring.identify(B64) is not None  # base64 padding is not a name=key pair
    root = ring.identify(ROOT_KEY)
    assert root is not None and root.admin
    assert ring.identify("nope") is None and ring.identify("") is None
    assert ring.identify(A_KEY[:-1]) is None and ring.identify(A_KEY + "x") is None
    assert not KeyRing.parse([" ", ""])


def test_the_ring_keeps_only_digests_of_the_keys() -> None:
    ring = KeyRing.parse([f"alice={A_KEY}", BARE], [f"root={ROOT_KEY}"])
    kept = repr(ring) + repr(ring.entries)
    assert all(len(secret) == 32 for secret, _ in ring.entries)  # SHA-256 digests
    assert not [k for k in (A_KEY, BARE, ROOT_KEY) if k in kept or k.encode() in
                b"".join(secret for secret, _ in ring.entries)]


@pytest.mark.parametrize(("entry", "problem"), [
    ("alice=", "has an empty key"),  # not the literal key "alice="
    ("alice= ", "has an empty key"),
    ("alice==", "has an empty key"),
    ("a", "a key of 1 characters"),
    ("alice=a", "a key of 1 characters"),
    ("alice=" + "k" * 31, "a key of 31 characters"),
    ("k" * 31, "a key of 31 characters"),
    ("abc==", "has an empty key"),  # padding after a short head: no key at all
])
def test_an_empty_or_short_key_is_refused_and_says_how_to_make_one(
        entry: str, problem: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        KeyRing.parse([f"ok={A_KEY}"], [entry])
    message, hint = refused.value.message, refused.value.hint or ""
    assert problem in message and "Entry 1 of PILOTHOUSE_ADMIN_KEYS" in message
    assert "pilothouse keys new" in hint and "32" in hint + message
    secret = entry.partition("=")[2] or entry
    assert len(secret) < 8 or secret not in message + hint  # a real key is never echoed


def test_a_key_of_32_characters_is_the_shortest_accepted() -> None:
    ring = KeyRing.parse(["ci=" + "k" * 32])
    assert ring.names == ("ci",) and ring.identify("k" * 32) is not None


SECRET_1, SECRET_2 = "secret-1-" + "0" * 24, "secret-2-" + "0" * 24


@pytest.mark.parametrize(("keys", "problem"), [
    ([f"al ice={SECRET_1}"], "invalid name"),
    ([f"alice={SECRET_1}", f"alice={SECRET_2}"], "two different keys"),
    ([f"alice={SECRET_1}", f"bob={SECRET_1}"], "reuses a key"),
    ([f"local={SECRET_1}"], "reserved name"),
])
def test_clashing_keys_are_refused_without_echoing_a_key(keys: list[str], problem: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        KeyRing.parse(keys)
    assert problem in refused.value.message
    assert "secret" not in refused.value.message + (refused.value.hint or "")


async def test_each_identity_sees_and_acts_on_its_own_conversations_only(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    restart = tool_call("restart_application", name="payments-api")
    app = make_app(make_open_agent([restart, "Restarted.", "Second answer."]), api_keys=KEYS,
                   admin_keys=ADMIN)
    alice, bob, root = ({"Authorization": f"Bearer {k}"} for k in (ALICE, BOB, ROOT))
    async with in_process(app) as client:
        created = await client.post("/conversations", json={"title": "mine"}, headers=alice)
        thread = created.json()["id"]
        assert created.json()["owner"] == "alice"
        asked = await client.post(f"/conversations/{thread}/ask",
                                  json={"question": "restart payments-api"}, headers=alice)
        assert "interrupt" in kinds(parse_sse(asked.text))
        bobs = await client.post("/conversations", json={"title": "bob's"}, headers=bob)

        # Bob: alice's conversation does not exist for him, whatever he tries.
        path = f"/conversations/{thread}"
        attempts = [
            await client.get(path, headers=bob),
            await client.delete(path, headers=bob),
            await client.post(f"{path}/ask", json={"question": "hi"}, headers=bob),
            await client.post(f"{path}/approvals", json={"decision": "approve"}, headers=bob),
            await client.get(f"{path}/pending", headers=bob),
        ]
        assert [a.status_code for a in attempts] == [404] * 5
        assert {a.json()["error"] for a in attempts} == {f"There is no conversation {thread}."}
        listed = (await client.get("/conversations", headers=bob)).json()
        assert [c["id"] for c in listed["conversations"]] == [bobs.json()["id"]]
        assert RESTARTED == []  # bob's approval ran nothing

        # The admin lists and reads everyone's, but cannot act on alice's.
        everyone = (await client.get("/conversations", headers=root)).json()
        assert {c["owner"] for c in everyone["conversations"]} == {"alice", "bob"}
        assert (await client.get(path, headers=root)).status_code == 200
        assert (await client.post(f"{path}/approvals", json={"decision": "approve"},
                                  headers=root)).status_code == 404
        assert (await client.delete(path, headers=root)).status_code == 404

        # Alice approves her own, continues it and deletes it.
        approved = await client.post(f"{path}/approvals", json={"decision": "approve"},
                                     headers=alice)
        assert "answer" in kinds(parse_sse(approved.text)) and RESTARTED == ["payments-api"]
        again = await client.post(f"{path}/ask", json={"question": "and now?"}, headers=alice)
        assert again.status_code == 200
        assert (await client.delete(path, headers=alice)).status_code == 204


async def test_agent_and_internal_threads_are_not_addressable(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["hi"]))  # no keys: the local caller, who owns the rest
    async with in_process(app) as client:
        for thread in ("sub:argocd:t-alice-1", "a2a:bob:argocd:ctx-1"):
            assert (await client.get(f"/conversations/{thread}")).status_code == 404
            asked = await client.post(f"/conversations/{thread}/ask", json={"question": "hi"})
            assert asked.status_code == 404  # like any id that is not the caller's
            assert asked.json()["error"] == f"There is no conversation {thread}."
            assert (await client.delete(f"/conversations/{thread}")).status_code == 404


async def test_metrics_are_open_to_this_machine_and_need_a_key_from_others(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["hi"]), api_keys=KEYS)
    async with app.router.lifespan_context(app):
        for client_host, headers, status in (
            ("127.0.0.1", {}, 200),
            ("10.1.2.3", {}, 401),
            ("10.1.2.3", {"Authorization": "Bearer wrong"}, 401),
            ("10.1.2.3", {"Authorization": f"Bearer {BOB}"}, 200),
        ):
            transport = httpx.ASGITransport(app=app, client=(client_host, 40000))
            async with httpx.AsyncClient(transport=transport,
                                         base_url="http://127.0.0.1") as client:
                assert (await client.get("/metrics", headers=headers)).status_code == status
                assert (await client.get("/healthz")).status_code == 200
