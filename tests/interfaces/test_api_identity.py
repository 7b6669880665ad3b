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

KEYS = ["alice=alice-secret", "bob=bob-secret"]
ADMIN = ["root=root-secret"]


def test_keys_are_name_key_pairs_and_a_bare_key_gets_a_stable_name() -> None:
    ring = KeyRing.parse(["alice=a-secret", "bare-secret", "b64key=="], ["root=r-secret"])
    assert ring.names == ("alice", generated_name("bare-secret"), generated_name("b64key=="),
                          "root")
    assert ring.identify("a-secret") is not None and ring.identify("a-secret").name == "alice"
    bare = ring.identify("bare-secret")
    assert bare is not None and bare.name.startswith("key-") and "bare" not in bare.name
    assert ring.identify("b64key==") is not None  # base64 padding is not a name=key pair
    root = ring.identify("r-secret")
    assert root is not None and root.admin
    assert ring.identify("nope") is None and ring.identify("") is None
    assert not KeyRing.parse([" ", ""])


@pytest.mark.parametrize(("keys", "problem"), [
    (["al ice=secret-1"], "invalid name"),
    (["alice=secret-1", "alice=secret-2"], "two different keys"),
    (["alice=secret-1", "bob=secret-1"], "reuses a key"),
    (["local=secret-1"], "reserved name"),
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
    alice, bob, root = ({"Authorization": f"Bearer {k}"} for k in
                        ("alice-secret", "bob-secret", "root-secret"))
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
            assert asked.status_code == 400 and "reserved" in asked.json()["error"]
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
            ("10.1.2.3", {"Authorization": "Bearer bob-secret"}, 200),
        ):
            transport = httpx.ASGITransport(app=app, client=(client_host, 40000))
            async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
                assert (await client.get("/metrics", headers=headers)).status_code == status
                assert (await client.get("/healthz")).status_code == 200
