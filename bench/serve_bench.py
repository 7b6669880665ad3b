"""Benchmark `pilothouse serve`: throughput and memory under 50 concurrent conversations, and
the latency the supervisor hop adds.

Run: .venv/bin/python bench/serve_bench.py [--conversations 50] [--turns 4] [--sequential 30]
Prints a table and writes bench/results/serve_bench.json.
Scale-out: .venv/bin/python bench/serve_bench.py --scale [--conversations 50] [--turns 4]
writes bench/results/serve_scale.json (see `scale` below).

Two real processes on 127.0.0.1: `serve --agent argocd` (its Argo CD MCP server against the
sandbox) and `serve --agent supervisor` calling it over A2A. The model is the scripted
OpenAI-compatible server (answers in about a millisecond), so the figures are Pilothouse's own
cost: A2A, the task store, checkpoints, the context layers, not a model's thinking time.

- load: N conversations at once against the supervisor, each `turns` questions in a row
  (every question = supervisor model call, A2A call to the agent, agent model call, supervisor
  model call). Requests per second, latency percentiles, and both processes' RSS (current and
  peak, from /proc) after the run.
- hop: the same question asked one at a time to the agent directly and through the supervisor;
  the difference of the medians is what the supervisor hop adds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, TaskState

from pilothouse.sandbox.argocd.server import running_sandbox
from pilothouse.testing.postgres_cluster import running_cluster
from pilothouse.testing.scripted_server import running_scripted_server

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "serve_bench.json"
SCALE_RESULTS = ROOT / "bench" / "results" / "serve_scale.json"
SCRIPT = {"rules": [
    {"name": "supervisor-route", "when": {"tools_include": "ask_argocd", "last_role": "user"},
     "reply": {"tool_calls": [{"name": "ask_argocd", "arguments": {"question": "{question}"}}]}},
    {"name": "supervisor-combine", "when": {"tools_include": "ask_argocd", "last_role": "tool"},
     "reply": {"content": "Argo CD says: {last}"}},
    {"name": "agent-answer", "when": {"tools_include": "list_applications"},
     "reply": {"content": "3 production applications are degraded: payments-api, "
                          "checkout-web and ledger-worker."}},
]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: A load test starts conversations faster than any person: no per-minute quota here.
UNLIMITED = {"PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE": "100000"}


def start(agent: str, env: dict[str, str], home: Path,
          name: str | None = None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    name = name or agent
    log = (home / f"{name}.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.interfaces.serve", "--port", str(port),
         "--agent", agent], stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, **env, "PILOTHOUSE_HOME": str(home / name)})
    return process, f"http://127.0.0.1:{port}"


async def ready(url: str, process: subprocess.Popen[bytes]) -> None:
    async with httpx.AsyncClient() as http, asyncio.timeout(180):
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{url} exited with {process.returncode}")
            try:
                if (await http.get(f"{url}/.well-known/agent-card.json")).is_success:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)


def memory_mib(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return {"rss_mib": round(fields["VmRSS"], 1), "peak_rss_mib": round(fields["VmHWM"], 1)}


async def ask(client: Client, text: str, context_id: str) -> float:
    message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, context_id=context_id,
                      parts=[Part(text=text)])
    started = time.perf_counter()
    state = TaskState.TASK_STATE_UNSPECIFIED
    async for response in client.send_message(SendMessageRequest(message=message)):
        if response.HasField("status_update"):
            state = response.status_update.status.state
    if state != TaskState.TASK_STATE_COMPLETED:
        raise RuntimeError(f"a turn ended {TaskState.Name(state)}")
    return time.perf_counter() - started


async def client_for(http: httpx.AsyncClient, url: str) -> Client:
    return await ClientFactory(ClientConfig(httpx_client=http)).create_from_url(url)


def percentiles(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50_ms": round(pick(0.5) * 1000, 1), "p95_ms": round(pick(0.95) * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1)}


async def load(url: str, conversations: int, turns: int) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=conversations + 10)
    async with httpx.AsyncClient(timeout=httpx.Timeout(None, connect=10), limits=limits) as http:
        client = await client_for(http, url)

        async def conversation(index: int) -> list[float]:
            context = f"bench-{index}-{uuid.uuid4().hex[:8]}"
            return [await ask(client, f"which production apps are degraded? ({turn})", context)
                    for turn in range(turns)]

        started = time.perf_counter()
        runs = await asyncio.gather(*(conversation(i) for i in range(conversations)))
        elapsed = time.perf_counter() - started
    latencies = [s for run in runs for s in run]
    return {"conversations": conversations, "turns_each": turns, "requests": len(latencies),
            "seconds": round(elapsed, 2), "requests_per_second": round(len(latencies) / elapsed, 1),
            **percentiles(latencies)}


async def sequential(url: str, count: int) -> list[float]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(None, connect=10)) as http:
        client = await client_for(http, url)
        await ask(client, "warm up", uuid.uuid4().hex)
        return [await ask(client, "which production apps are degraded?", uuid.uuid4().hex)
                for _ in range(count)]


async def run(conversations: int, turns: int, count: int) -> dict[str, Any]:
    with running_sandbox(apps=200) as argocd, running_scripted_server(SCRIPT) as (model_url, _), \
            tempfile.TemporaryDirectory() as home:
        env = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model_url,
               "MAX_CONTEXT_TOKENS": "32000", "ARGOCD_URL": argocd.url,
               "ARGOCD_TOKEN": argocd.token, "PILOTHOUSE_LOG_LEVEL": "WARNING", **UNLIMITED}
        agent, agent_url = start("argocd", env, Path(home))
        supervisor, supervisor_url = start("supervisor", {
            **env, "PILOTHOUSE_AGENTS_ARGOCD_URL": f"{agent_url}/a2a/argocd"}, Path(home))
        try:
            await asyncio.gather(ready(agent_url, agent), ready(supervisor_url, supervisor))
            idle = {"supervisor": memory_mib(supervisor.pid), "agent": memory_mib(agent.pid)}
            direct = await sequential(f"{agent_url}/a2a/argocd", count)
            hop = await sequential(f"{supervisor_url}/a2a/supervisor", count)
            under_load = await load(f"{supervisor_url}/a2a/supervisor", conversations, turns)
            after = {"supervisor": memory_mib(supervisor.pid), "agent": memory_mib(agent.pid)}
        finally:
            for process in (supervisor, agent):
                process.terminate()
                process.wait(30)
    direct_ms, hop_ms = statistics.median(direct) * 1000, statistics.median(hop) * 1000
    return {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "load": under_load,
        "memory_idle": idle,
        "memory_after_load": after,
        "hop": {"requests": count, "agent_direct": percentiles(direct),
                "via_supervisor": percentiles(hop),
                "added_ms_median": round(hop_ms - direct_ms, 1)},
    }


async def rest_turn(http: httpx.AsyncClient, url: str, thread: str, text: str) -> float:
    """One question through the REST API (SSE read to its end); raises unless it answered."""
    started = time.perf_counter()
    response = await http.post(f"{url}/conversations/{thread}/ask", json={"question": text})
    kinds = [json.loads(line[6:])["kind"] for line in response.text.splitlines()
             if line.startswith("data: ")]
    if response.status_code != 200 or "error" in kinds or "answer" not in kinds:
        raise RuntimeError(f"{response.status_code} {kinds or response.text[:200]}")
    return time.perf_counter() - started


async def rest_load(urls: list[str], conversations: int, turns: int) -> dict[str, Any]:
    """`conversations` at once, turn k of conversation i on replica (i + k) mod len(urls): a
    conversation changes replica at every turn. Afterwards every thread is read back: an
    answered turn missing from its history is lost."""
    limits = httpx.Limits(max_connections=2 * conversations + 10)
    errors: list[str] = []
    async with httpx.AsyncClient(timeout=httpx.Timeout(300, connect=10), limits=limits) as http:

        answered: dict[str, int] = {}

        async def conversation(index: int) -> list[float]:
            created = await http.post(f"{urls[index % len(urls)]}/conversations", json={})
            thread = created.json()["id"]  # asking never creates one
            seconds: list[float] = []
            for turn in range(turns):
                try:
                    seconds.append(await rest_turn(http, urls[(index + turn) % len(urls)],
                                                   thread, f"degraded apps? ({turn})"))
                    answered[thread] = answered.get(thread, 0) + 1
                except Exception as error:
                    errors.append(f"{type(error).__name__}: {error}")
            return seconds

        started = time.perf_counter()
        runs = await asyncio.gather(*(conversation(i) for i in range(conversations)))
        elapsed = time.perf_counter() - started
        listed = (await http.get(f"{urls[-1]}/conversations", params={"limit": 200})).json()
        kept = {r["id"]: 0 for r in listed["conversations"]}
        for thread in kept:
            history = (await http.get(f"{urls[0]}/conversations/{thread}")).json()
            kept[thread] = sum(m["role"] == "user" for m in history["messages"])
        lost = sum(max(0, count - kept.get(thread, 0)) for thread, count in answered.items())
    latencies = [s for run in runs for s in run]
    return {"replicas": len(urls), "conversations": conversations, "turns_each": turns,
            "requests": len(latencies) + len(errors), "errors": len(errors),
            "error_samples": errors[:3], "lost_turns": lost, "seconds": round(elapsed, 2),
            "requests_per_second": round(len(latencies) / elapsed, 1),
            **(percentiles(latencies) if latencies else {})}


async def scale(conversations: int, turns: int) -> dict[str, Any]:
    """The same REST load on two supervisor replicas over one PostgreSQL (round-robin) and on
    one replica over SQLite; the Argo CD agent is its own process in both."""
    results: dict[str, Any] = {"machine": {
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "load_average_before": [round(x, 1) for x in os.getloadavg()]}}
    with running_sandbox(apps=200) as argocd, running_scripted_server(SCRIPT) as (model_url, _):
        base = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model_url,
                "MAX_CONTEXT_TOKENS": "32000", "ARGOCD_URL": argocd.url,
                "ARGOCD_TOKEN": argocd.token, "PILOTHOUSE_LOG_LEVEL": "WARNING", **UNLIMITED}
        with running_cluster() as postgres:
            database = {"PILOTHOUSE_DATABASE_URL": postgres.create_database("bench")}
            results["postgres_2_replicas"] = await _scale_run(
                {**base, **database}, 2, conversations, turns)
        results["sqlite_1_replica"] = await _scale_run(base, 1, conversations, turns)
    results["machine"]["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    return results


async def _scale_run(env: dict[str, str], replicas: int, conversations: int,
                     turns: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        agent, agent_url = start("argocd", env, Path(home))
        processes = [agent]
        try:
            try:
                await ready(agent_url, agent)
            except RuntimeError:
                print((Path(home) / "argocd.log").read_text()[-3000:], file=sys.stderr)
                raise
            supervisors = [start("supervisor", {
                **env, "PILOTHOUSE_AGENTS_ARGOCD_URL": f"{agent_url}/a2a/argocd"}, Path(home),
                name=f"supervisor-{i}") for i in range(replicas)]
            processes += [p for p, _ in supervisors]
            await asyncio.gather(*(ready(url, p) for p, url in supervisors))
            result = await rest_load([url for _, url in supervisors], conversations, turns)
            result["rss_per_replica"] = [memory_mib(p.pid) for p, _ in supervisors]
            result["agent_rss"] = memory_mib(agent.pid)
        finally:
            for process in reversed(processes):
                process.terminate()
                process.wait(30)
    return result


def print_scale(result: dict[str, Any]) -> None:
    runs = {"PostgreSQL, 2 replicas": result["postgres_2_replicas"],
            "SQLite, 1 replica": result["sqlite_1_replica"]}
    print(f"{'measure':34}" + "".join(f"{name:>26}" for name in runs))
    rows = [("conversations x turns", lambda r: f"{r['conversations']} x {r['turns_each']}"),
            ("requests/s", lambda r: r["requests_per_second"]),
            ("p50 / p95 (ms)", lambda r: f"{r.get('p50_ms')} / {r.get('p95_ms')}"),
            ("errors", lambda r: r["errors"]), ("lost turns", lambda r: r["lost_turns"]),
            ("RSS per replica MiB (peak)", lambda r: ", ".join(
                f"{m['rss_mib']} ({m['peak_rss_mib']})" for m in r["rss_per_replica"]))]
    for label, value in rows:
        print(f"{label:34}" + "".join(f"{value(r)!s:>26}" for r in runs.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--sequential", type=int, default=30)
    parser.add_argument("--scale", action="store_true",
                        help="two supervisor replicas on PostgreSQL vs one on SQLite (REST)")
    args = parser.parse_args()
    if args.scale:
        scaled = asyncio.run(scale(args.conversations, args.turns))
        print_scale(scaled)
        SCALE_RESULTS.parent.mkdir(parents=True, exist_ok=True)
        SCALE_RESULTS.write_text(json.dumps(scaled, indent=2) + "\n")
        print(f"written to {SCALE_RESULTS.relative_to(ROOT)}")
        return
    result = asyncio.run(run(args.conversations, args.turns, args.sequential))
    load_, hop = result["load"], result["hop"]
    print(f"{'measure':44} {'value':>12}")
    shape = f"{load_['conversations']} x {load_['turns_each']}"
    print(f"{'concurrent conversations x turns':44} {shape:>12}")
    print(f"{'requests per second (through supervisor)':44} {load_['requests_per_second']:>12}")
    print(f"{'latency under load p50 / p95 (ms)':44} {load_['p50_ms']:>5} / {load_['p95_ms']}")
    for name in ("supervisor", "agent"):
        before, after = result["memory_idle"][name], result["memory_after_load"][name]
        print(f"{name + ' RSS idle -> after (peak) MiB':44} "
              f"{before['rss_mib']:>5} -> {after['rss_mib']} ({after['peak_rss_mib']})")
    print(f"{'agent direct p50 (ms)':44} {hop['agent_direct']['p50_ms']:>12}")
    print(f"{'through supervisor p50 (ms)':44} {hop['via_supervisor']['p50_ms']:>12}")
    print(f"{'supervisor hop adds (median ms)':44} {hop['added_ms_median']:>12}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
