"""A scripted model behind an OpenAI-compatible HTTP API, for tests that span processes.

`ScriptedChatModel` is a Python object, so agents in other processes (`pilothouse serve`
started by a test) cannot share it. They run the real `ChatOpenAI` client against this server
instead (`PILOTHOUSE_MODEL=openai-compatible:scripted OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`):
the model is still the only fake, and everything between the agent and it is real HTTP.

A script is JSON: rules tried in order against each request, the first match answers.

    {"rules": [
       {"name": "route", "when": {"tools_include": "ask_argocd", "last_role": "user"},
        "reply": {"tool_calls": [{"name": "ask_argocd", "arguments": {"question": "..."}}]}},
       {"name": "combine", "when": {"tools_include": "ask_argocd", "last_role": "tool"},
        "reply": {"content": "Combined: {tool_results}", "chunk_delay": 0.05}}],
     "default": {"content": "No scripted answer."}}

Conditions: `tools_include`, `system_contains`, `last_role` (user | tool | assistant),
`last_contains`, `last_tool`, `any_contains`. Replies: `content` or `tool_calls` (placeholders
`{question}`, `{last}`, `{tool_results}`), `delay` before the first byte, `chunk_delay` between
streamed chunks. Every request is recorded (rule, messages, whether the client went away), in
memory and at `GET /_script/requests`, so a test can check what the agents really sent.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class Recorded:
    """One chat-completions request: which rule answered and what became of it."""

    rule: str
    messages: list[dict[str, Any]]
    tools: list[str]
    started: float
    finished: float | None = None
    aborted: bool = False


@dataclass
class ScriptState:
    """The script and the requests it answered; shared by the server thread and the test."""

    rules: list[dict[str, Any]]
    default: dict[str, Any] | None = None
    requests: list[Recorded] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def record(self, entry: Recorded) -> None:
        with self.changed:
            self.requests.append(entry)
            self.changed.notify_all()

    def touch(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def hits(self, rule: str) -> list[Recorded]:
        with self.changed:
            return [r for r in self.requests if r.rule == rule]

    def wait_for(self, rule: str, count: int = 1, timeout: float = 30.0) -> list[Recorded]:
        """Block until `rule` has answered `count` requests (or raise TimeoutError)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while len([r for r in self.requests if r.rule == rule]) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [r.rule for r in self.requests]
                    raise TimeoutError(f"rule {rule!r} hit fewer than {count} times: {seen}")
                self.changed.wait(left)
            return [r for r in self.requests if r.rule == rule]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _tool_names(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {c["id"]: c["function"]["name"] for m in messages
            for c in m.get("tool_calls") or [] if "id" in c}


def _matches(when: dict[str, Any], messages: list[dict[str, Any]], tools: list[str]) -> bool:
    last = messages[-1] if messages else {}
    system = " ".join(_text(m) for m in messages if m.get("role") == "system")
    checks = {
        "tools_include": lambda v: v in tools,
        "system_contains": lambda v: v.lower() in system.lower(),
        "last_role": lambda v: last.get("role") == v,
        "last_contains": lambda v: v.lower() in _text(last).lower(),
        "last_tool": lambda v: _tool_names(messages).get(last.get("tool_call_id", "")) == v,
        "any_contains": lambda v: any(v.lower() in _text(m).lower() for m in messages),
    }
    unknown = set(when) - set(checks)
    if unknown:
        raise ValueError(f"unknown rule conditions: {sorted(unknown)}")
    return all(checks[key](value) for key, value in when.items())


def _fill(template: str, messages: list[dict[str, Any]]) -> str:
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    question = _text(messages[last_user]) if last_user >= 0 else ""
    results = "\n".join(_text(m) for m in messages[last_user + 1:] if m.get("role") == "tool")
    last = _text(messages[-1]) if messages else ""
    return (template.replace("{question}", question).replace("{tool_results}", results)
            .replace("{last}", last))


def _fill_values(value: Any, messages: list[dict[str, Any]]) -> Any:
    """`_fill` every string inside tool-call arguments (before they become JSON)."""
    if isinstance(value, str):
        return _fill(value, messages)
    if isinstance(value, dict):
        return {k: _fill_values(v, messages) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_values(v, messages) for v in value]
    return value


def _chunk(completion_id: str, model: str, delta: dict[str, Any] | None,
           finish: str | None = None, usage: dict[str, int] | None = None) -> str:
    body: dict[str, Any] = {"id": completion_id, "object": "chat.completion.chunk",
                            "created": int(time.time()), "model": model,
                            "choices": [] if delta is None else
                            [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n"


class ScriptedServer:
    """The ASGI app answering `/v1/chat/completions` from a `ScriptState`."""

    def __init__(self, state: ScriptState) -> None:
        self.state = state
        self.app = Starlette(routes=[
            Route("/v1/chat/completions", self.completions, methods=["POST"]),
            Route("/v1/models", self.models, methods=["GET"]),
            Route("/_script/requests", self.requests, methods=["GET"]),
        ])

    async def models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

    async def requests(self, request: Request) -> Response:
        with self.state.changed:
            return JSONResponse([asdict(r) for r in self.state.requests])

    def _choose(self, messages: list[dict[str, Any]], tools: list[str]) -> tuple[str, dict]:
        for index, rule in enumerate(self.state.rules):
            if _matches(rule.get("when", {}), messages, tools):
                return str(rule.get("name", f"rule-{index}")), rule["reply"]
        if self.state.default is None:
            raise LookupError("no rule matches and the script has no default")
        return "default", self.state.default

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        messages: list[dict[str, Any]] = body.get("messages", [])
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        try:
            rule, reply = self._choose(messages, tools)
        except LookupError as error:
            return JSONResponse({"error": {"message": str(error)}}, status_code=500)
        entry = Recorded(rule, messages, tools, time.time())
        self.state.record(entry)
        content = _fill(str(reply.get("content", "")), messages)
        calls = [{"index": i, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                  "function": {"name": c["name"], "arguments": json.dumps(
                      _fill_values(c.get("arguments", {}), messages))}}
                 for i, c in enumerate(reply.get("tool_calls") or [])]
        usage = {"prompt_tokens": sum(len(_text(m)) for m in messages) // 4,
                 "completion_tokens": max(1, len(content) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        await asyncio.sleep(float(reply.get("delay", 0)))
        model = str(body.get("model", "scripted"))
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        if not body.get("stream"):
            entry.finished = time.time()
            self.state.touch()
            message: dict[str, Any] = {"role": "assistant", "content": content or None}
            if calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"}
                                         for c in calls]
            return JSONResponse({
                "id": completion_id, "object": "chat.completion", "created": int(time.time()),
                "model": model, "usage": usage,
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if calls else "stop"}]})
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        stream = self._stream(entry, completion_id, model, content, calls,
                              float(reply.get("chunk_delay", 0)), usage if include_usage else None)
        return StreamingResponse(stream, media_type="text/event-stream")

    async def _stream(self, entry: Recorded, completion_id: str, model: str, content: str,
                      calls: list[dict[str, Any]], chunk_delay: float,
                      usage: dict[str, int] | None) -> AsyncIterator[str]:
        try:
            yield _chunk(completion_id, model, {"role": "assistant", "content": ""})
            words = content.split(" ")
            for i, word in enumerate(words):
                await asyncio.sleep(chunk_delay)
                yield _chunk(completion_id, model, {"content": word if i == 0 else " " + word})
            if calls:
                await asyncio.sleep(chunk_delay)
                yield _chunk(completion_id, model, {"tool_calls": calls})
            yield _chunk(completion_id, model, {}, "tool_calls" if calls else "stop")
            if usage is not None:
                yield _chunk(completion_id, model, None, usage=usage)
            yield "data: [DONE]\n\n"
            entry.finished = time.time()
        except BaseException:
            # The client went away mid-answer (a cancelled run): tests assert on this.
            entry.aborted = True
            raise
        finally:
            self.state.touch()


def load_script(path: Path) -> ScriptState:
    """Read a script file into a fresh state."""
    data = json.loads(path.read_text())
    return ScriptState(rules=list(data.get("rules", [])), default=data.get("default"))


@contextmanager
def running_scripted_server(script: dict[str, Any]) -> Iterator[tuple[str, ScriptState]]:
    """Serve `script` on 127.0.0.1:<free port> in a thread; yields (base URL with /v1, state)."""
    from pilothouse.sandbox.serving import running_app

    state = ScriptState(rules=list(script.get("rules", [])), default=script.get("default"))
    with running_app(ScriptedServer(state).app) as url:
        yield f"{url}/v1", state


def main(argv: list[str] | None = None) -> None:
    """`python -m pilothouse.testing.scripted_server SCRIPT [--port N]`: serve until killed."""
    import argparse
    import socket

    import uvicorn

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("script", type=Path)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    state = load_script(args.script)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    config = uvicorn.Config(ScriptedServer(state).app, log_level="warning", lifespan="off",
                            ws="none", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
