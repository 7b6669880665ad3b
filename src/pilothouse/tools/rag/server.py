"""The codebase RAG tools as an MCP server: `index_directory` and `retrieve_code_context`.

The server starts an incremental index of its default repository as soon as it starts, so the
first question rarely waits; a retrieval that arrives while an index run is going answers from
what is indexed so far and says how far the run has got, instead of blocking for minutes.
Indexing and search run in worker threads because ONNX inference and ChromaDB calls block.
Failures are raised as `PilothouseError`s; `ToolServer` answers them in the one tool-error shape.

The server's root is its workspace jail (`tools/workspace_jail.py`, the shell's too): every
caller of one server shares what it searches, so `index_directory` refuses a folder outside the
workspace (it would be read without anyone's approval and then served to every caller), and
retrieval and quoting only ever touch collections and files of roots inside it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from pilothouse.errors import PilothouseError
from pilothouse.tools.mcp_support import tool_result
from pilothouse.tools.rag import views
from pilothouse.tools.rag.answers import render_hits, report_payload, trim_snippet
from pilothouse.tools.rag.index import CodeIndex, IndexReport, resolve_root
from pilothouse.tools.tool_filter import READS, WRITES
from pilothouse.tools.tool_server import ToolServer
from pilothouse.tools.workspace_jail import WorkspaceJail

MAX_K = 20
INSTRUCTIONS = (
    "Search the code of a repository. retrieve_code_context(query) returns the most relevant "
    "code chunks with file paths and line ranges; index_directory(path) (re)indexes a folder "
    "of the workspace incrementally and makes it the one searched."
)
log = logging.getLogger(__name__)


def outside_hint(path: str | Path) -> str:
    """What to do when a folder outside the workspace should be searched."""
    return (f"Search {path} with a server whose workspace it is: start the DevOps agent with "
            f"PILOTHOUSE_WORKSPACE={path} (or `pilothouse mcp rag --root {path}`). Index "
            "folders inside the workspace here.")


class _Indexer:
    """Runs index jobs in worker threads and remembers the searched root and the job running.

    Every root it indexes or searches is checked against `jail` first.
    """

    def __init__(self, index: CodeIndex, jail: WorkspaceJail) -> None:
        self.index = index
        self.jail = jail
        self.root = jail.root
        self.stop = threading.Event()
        self.running: str | None = None
        self.progress = (0, 0)
        self._finished: anyio.Event | None = None

    def status(self, root: Path) -> dict[str, int] | None:
        """Files done and total of the run indexing `root`, or None when none is."""
        if self.running != str(root):
            return None
        return {"files_done": self.progress[0], "files_total": self.progress[1]}

    def jailed(self, path: str | Path) -> Path:
        """`path` (relative to the workspace) as an existing folder inside it, or an error.

        The jail comes first, so the error for an outside path says nothing of what is there.
        """
        inside = self.jail.require(path, action="index or search code",
                                   hint=outside_hint(path))
        return resolve_root(inside)

    async def run(self, path: Path, ctx: Context | None) -> IndexReport:
        """Index `path` (incrementally) and make it the searched root."""
        resolved = self.jailed(path)
        forward = _forwarder(ctx)

        def progress(done: int, total: int, current: str) -> None:
            self.progress = (done, total)
            if forward is not None:
                forward(done, total, current)

        self.running, self.progress = str(resolved), (0, 0)
        self._finished = finished = anyio.Event()
        try:
            report = await anyio.to_thread.run_sync(
                lambda: self.index.index_directory(resolved, progress, stop=self.stop),
                # At shutdown, do not wait: `stop` ends the run after the current file.
                abandon_on_cancel=True,
            )
        finally:
            self.running = None
            finished.set()
        self.root = resolved
        return report

    async def settle(self, seconds: float) -> None:
        """Wait up to `seconds` for a running index job: a small repository is done by then."""
        finished = self._finished
        if finished is not None and seconds > 0:
            with anyio.move_on_after(seconds):
                await finished.wait()

    async def warm_up(self) -> None:
        """Bring the default root's index up to date in the background."""
        try:
            await self.run(self.root, None)
        except PilothouseError as error:  # surfaces again, to the model, on the first call
            log.warning("RAG warm-up index of %s failed: %s", self.root, error)


def _forwarder(ctx: Context | None) -> Callable[[int, int, str], None] | None:
    """Forward progress from the worker thread to the client, about every 5%."""
    if ctx is None:
        return None
    last = -1

    def report(done: int, total: int, path: str) -> None:
        nonlocal last
        step = max(1, total // 20)
        if done == total or done // step != last:
            last = done // step
            anyio.from_thread.run(ctx.report_progress, done, total, path or None)

    return report


def build_rag_server(
    store_dir: Path,
    default_root: Path,
    *,
    index: CodeIndex | None = None,
    warm_up: bool = True,
    index_wait_seconds: float = 10.0,
) -> ToolServer:
    """An MCP server over `default_root`, its workspace, storing into `store_dir`.

    Only folders inside `default_root` (symlinks followed) are indexed or searched. With
    `warm_up`, the default root is indexed (incrementally) as soon as the server starts.
    A retrieval during an index run waits up to `index_wait_seconds` for it, then answers from
    what is indexed so far.
    """
    indexer = _Indexer(index or CodeIndex(store_dir), WorkspaceJail.at(default_root))

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            if warm_up:
                tasks.start_soon(indexer.warm_up)
            try:
                yield
            finally:
                indexer.stop.set()
                tasks.cancel_scope.cancel()

    server = ToolServer(name="pilothouse-rag", instructions=INSTRUCTIONS, lifespan=lifespan)

    # Writes: it re-indexes, and changes which folder is searched.
    @server.tool(structured_output=False, annotations=WRITES)
    async def index_directory(path: str | None = None,
                              ctx: Context | None = None) -> CallToolResult:
        """Index a folder's code for retrieve_code_context (incremental: only changed files).

        path: a folder inside the workspace (relative to it, or absolute); default the one
        searched now. A folder outside the workspace is refused.
        """
        report = await indexer.run(Path(path) if path else indexer.root, ctx)
        return tool_result(report_payload(report), is_error=False, view=views.report_view)

    # No example query in the description: the local model copied the one it had ("where is
    # auth checked") as the query of an unrelated request (`pilothouse eval`).
    @server.tool(structured_output=False, annotations=READS)
    async def retrieve_code_context(
        query: str, k: int = 5, path_filter: str | None = None, ctx: Context | None = None
    ) -> CallToolResult:
        """Find the code most relevant to a question: file paths, line ranges and snippets.

        query: what you are looking for: the question's own words, or a function or class name.
        k: how many chunks (1-20). path_filter: a glob ("src/**/*.py") or part of a path.
        """
        await indexer.settle(index_wait_seconds)
        root = indexer.jailed(indexer.root)
        indexed = str(root) in indexer.index.indexed_roots()
        if not indexed and indexer.status(root) is None:
            await indexer.run(root, ctx)
        elif not indexed:  # the run has not written anything yet
            return _hits(render_hits(str(root), query, [], indexing=indexer.status(root)))
        hits = await anyio.to_thread.run_sync(
            lambda: indexer.index.retrieve_code_context(
                query, max(1, min(k, MAX_K)), path_filter or None, root=root
            )
        )
        return _hits(render_hits(str(root), query, hits, indexing=indexer.status(root)))

    @server.tool(structured_output=False, annotations=READS)
    async def find_named_code(question: str, limit: int = 4) -> CallToolResult:
        """The code a question names by path or symbol (exact matches first), with snippets.

        Used by the agent runtime for dynamic context expansion; answers from what is indexed
        now and never waits for an index run.
        """
        root = indexer.jailed(indexer.root)
        if str(root) not in indexer.index.indexed_roots():
            return tool_result({"items": [], "note": "not indexed yet"}, is_error=False,
                               view=views.named_view)
        hints = await anyio.to_thread.run_sync(
            lambda: indexer.index.find_files_for(question, root=root))
        items = []
        for hint in hints[: max(1, min(limit, 10))]:
            items.append({"path": hint.path, "start_line": hint.start_line,
                          "end_line": hint.end_line, "symbol": hint.symbol, "match": hint.match,
                          "text": _excerpt(indexer.jail, root / hint.path, hint.start_line,
                                           hint.end_line)})
        return tool_result({"items": items}, is_error=False, view=views.named_view)

    return server


def _hits(answer: str) -> CallToolResult:
    # `render_hits` sizes the answer as JSON (its budget is the server's output cap).
    return tool_result(json.loads(answer), is_error=False, view=views.hits_view)


def _excerpt(jail: WorkspaceJail, path: Path, start: int, end: int, limit: int = 1500) -> str:
    """Lines start..end of a file, at most `limit` characters ("" if it cannot be read).

    An indexed file may have become a symlink since: what it points at is read only when it
    lies inside the workspace.
    """
    real = jail.resolve(path)
    if not jail.contains(real):
        return ""
    try:
        with real.open(encoding="utf-8", errors="replace") as handle:
            lines = [line for number, line in enumerate(handle, 1) if start <= number <= end]
    except OSError:
        return ""
    return trim_snippet("".join(lines), limit)
