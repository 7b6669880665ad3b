"""Every shared store on a real PostgreSQL: checkpoints, the conversation list, turn locks across
replicas (two lock sessions = two replicas), the A2A task sweep, concurrent schema set-up."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import psycopg
import pytest
from a2a.server.context import ServerCallContext
from a2a.types.a2a_pb2 import Task, TaskState, TaskStatus
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from pilothouse.a2a import store as store_module
from pilothouse.a2a.store import INTERRUPTED_REASON, agent_task_store, open_task_engine
from pilothouse.config import Settings
from pilothouse.interfaces.api.server import open_registry
from pilothouse.runtime.checkpoint import open_checkpointer
from pilothouse.runtime.shared_locks import PostgresLocks
from pilothouse.runtime.turn_locks import ConversationBusy, TurnLocks

pytestmark = pytest.mark.postgres


def echo_graph(checkpointer: Any) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"echo {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=checkpointer)


async def test_a_conversation_written_by_one_replica_is_read_whole_by_another(
    database_url: str, make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DATABASE_URL=database_url)
    config = {"configurable": {"thread_id": "shared-1"}}
    async with open_checkpointer(settings) as a, open_checkpointer(settings) as b:
        await echo_graph(a).ainvoke({"messages": [HumanMessage("first")]}, config)
        await echo_graph(b).ainvoke({"messages": [HumanMessage("second")]}, config)
        state = await echo_graph(a).aget_state(config)

    assert [m.content for m in state.values["messages"]] == [
        "first", "echo first", "second", "echo second"]


async def test_every_replica_lists_the_same_conversations(
    database_url: str, make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DATABASE_URL=database_url)
    async with open_registry(settings) as a, open_registry(settings) as b:
        made = await a.create("deploy payments", owner="ops")
        touched = await b.touch(made.id, "ignored: it has a title", owner="someone-else")
        await b.touch("started-elsewhere", "why is billing degraded?", owner="ops")
        listed, total = await a.list(owner="ops")
        assert await b.delete(made.id) and not await a.delete(made.id)
        after, after_total = await a.list()

    assert touched.title == "deploy payments" and touched.owner == "ops"
    assert total == 2 and {r.id for r in listed} == {made.id, "started-elsewhere"}
    assert listed[0].id == "started-elsewhere"  # most recently used first
    assert after_total == 1 and after[0].title == "why is billing degraded?"


async def test_a_turn_claimed_on_one_replica_is_busy_on_the_other_until_released(
    database_url: str,
) -> None:
    async with AsyncExitStack() as stack:
        sessions = [await PostgresLocks(database_url).open() for _ in range(2)]
        for session in sessions:
            stack.push_async_callback(session.close)
        a, b = (TurnLocks(s) for s in sessions)

        lease = await a.claim("conv-1")
        with pytest.raises(ConversationBusy):
            await b.claim("conv-1")
        other = await b.claim("conv-2")  # other conversations are free
        lease.release()
        await asyncio.gather(*sessions[0]._releases)
        again = await b.claim("conv-1")
        with pytest.raises(ConversationBusy):
            await a.claim("conv-1")
        other.release()
        again.release()


async def backend_gone(locks: PostgresLocks, pid: int) -> None:
    """Wait until PostgreSQL has ended the server process of a closed session."""
    while True:
        row = await (await locks._connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,))).fetchone()
        if not row[0]:
            return
        await asyncio.sleep(0.01)


async def test_a_dead_replicas_turn_locks_are_freed_at_once(database_url: str) -> None:
    dying = await PostgresLocks(database_url).open()
    survivor = await PostgresLocks(database_url).open()
    try:
        held = await TurnLocks(dying).claim("conv-1")
        assert held.shared
        with pytest.raises(ConversationBusy):
            await TurnLocks(survivor).claim("conv-1")
        pid = dying._connection.info.backend_pid
        await dying._connection.close()  # its process died: the session ends, no clean-up
        await backend_gone(survivor, pid)
        lease = await TurnLocks(survivor).claim("conv-1")
        lease.release()
    finally:
        await survivor.close()


async def runners(database_url: str) -> list[str]:
    async with await psycopg.AsyncConnection.connect(database_url) as connection:
        rows = await (await connection.execute(
            "SELECT task_id FROM a2a_task_runners ORDER BY task_id")).fetchall()
    return [row[0] for row in rows]


def _task(task_id: str, state: int) -> Task:
    return Task(id=task_id, context_id=f"ctx-{task_id}", status=TaskStatus(state=state))


async def test_start_up_fails_only_the_tasks_of_replicas_that_are_gone(
    database_url: str, make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DATABASE_URL=database_url)
    call = ServerCallContext()
    live, gone = [await PostgresLocks(database_url).open() for _ in range(2)]
    try:
        async with open_task_engine(settings) as engine:
            store_live = await agent_task_store(engine, "argocd", replica_key=live.replica_key)
            store_gone = await agent_task_store(engine, "argocd", replica_key=gone.replica_key)
            await store_live.save(_task("running-here", TaskState.TASK_STATE_WORKING), call)
            await store_gone.save(_task("orphaned", TaskState.TASK_STATE_WORKING), call)
            await store_gone.save(_task("done", TaskState.TASK_STATE_COMPLETED), call)
            pid = gone._connection.info.backend_pid
            await gone.close()  # SIGKILL of that replica: its liveness lock is gone
            await backend_gone(live, pid)

            restarted = await PostgresLocks(database_url).open()
            try:
                store = await agent_task_store(engine, "argocd",
                                               replica_key=restarted.replica_key)
            finally:
                await restarted.close()
            kept = await store.get("running-here", call)
            failed = await store.get("orphaned", call)
            done = await store.get("done", call)
            runners_before = await runners(database_url)
            await store_live.save(_task("running-here", TaskState.TASK_STATE_COMPLETED), call)
            runners_after = await runners(database_url)
    finally:
        await live.close()

    assert kept is not None and kept.status.state == TaskState.TASK_STATE_WORKING
    assert failed is not None and failed.status.state == TaskState.TASK_STATE_FAILED
    assert failed.status.message.parts[0].text == INTERRUPTED_REASON
    assert done is not None and done.status.state == TaskState.TASK_STATE_COMPLETED
    # Who runs a task is kept while it runs, not after.
    assert runners_before == ["running-here"] and runners_after == []


async def test_a_running_replica_fails_the_tasks_of_one_that_dies_later(
    database_url: str, make_settings: Callable[..., Settings],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(store_module, "SWEEP_SECONDS", 0.05)
    settings = make_settings(PILOTHOUSE_DATABASE_URL=database_url)
    call = ServerCallContext()
    live, gone = [await PostgresLocks(database_url).open() for _ in range(2)]
    try:
        async with open_task_engine(settings) as engine:
            watcher = await agent_task_store(engine, "argocd", replica_key=live.replica_key)
            dying = await agent_task_store(engine, "argocd", replica_key=gone.replica_key)
            await dying.save(_task("orphaned-later", TaskState.TASK_STATE_WORKING), call)
            await watcher.save(_task("still-running", TaskState.TASK_STATE_WORKING), call)
            await gone.close()
            async with asyncio.timeout(60):
                while True:
                    task = await watcher.get("orphaned-later", call)
                    if task is None or task.status.state != TaskState.TASK_STATE_WORKING:
                        break
                    await asyncio.sleep(0.05)
            running = await watcher.get("still-running", call)
    finally:
        await live.close()

    assert task is not None and task.status.state == TaskState.TASK_STATE_FAILED
    assert running is not None and running.status.state == TaskState.TASK_STATE_WORKING


async def test_replicas_starting_at_once_set_up_the_schema_once(
    database_url: str, make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DATABASE_URL=database_url)

    async def start_replica() -> int:
        locks = await PostgresLocks(database_url).open()
        try:
            async with open_checkpointer(settings), open_registry(settings) as registry, \
                    open_task_engine(settings) as engine:
                await agent_task_store(engine, "supervisor", replica_key=locks.replica_key)
                return (await registry.list())[1]
        finally:
            await locks.close()

    assert await asyncio.gather(*(start_replica() for _ in range(4))) == [0, 0, 0, 0]
