"""The codebase RAG tools as an MCP server: `index_directory` and `retrieve_code_context`.

Indexing never blocks an answer. A question that needs the code (a retrieval) starts the index
of the workspace in the background when it is a code repository within the cap
(`files.survey`), waits a few seconds for it while forwarding its progress ("indexing 1,240
files: 35%"), and then answers from what it can: the passages indexed so far, plus a bounded
keyword scan of the files (`scan.py`) while the index is partial or was not built (a folder
that is not a repository, or one over PILOTHOUSE_INDEX_MAX_FILES). The answer says which.
With `warm_up` (a standalone server, whose clients come to search code) the index of a
repository within the cap is built as soon as the server starts; the DevOps agent's server
waits for a question that needs the code, so a first question about anything else never
competes with an index run for the CPU.

The server's root is its workspace jail (`tools/workspace_jail.py`, the shell's too): every
caller of one server shares what it searches, so `index_directory` refuses a folder outside the
workspace (it would be read without anyone's approval and then served to every caller), and
retrieval and quoting only ever touch collections and files of roots inside it.
Failures are raised as `PilothouseError`s; `ToolServer` answers them in the one tool-error shape.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from pilothouse.errors import UserInputError
from pilothouse.tools.mcp_support import tool_result
from pilothouse.tools.rag import views
from pilothouse.tools.rag.answers import render_hits, report_payload, trim_snippet
from pilothouse.tools.rag.files import DEFAULT_MAX_FILES, Survey
from pilothouse.tools.rag.index import CodeIndex, Hit
from pilothouse.tools.rag.runs import Indexer, outside_hint, progress_text
from pilothouse.tools.rag.scan import scan_sources
from pilothouse.tools.tool_filter import READS, WRITES
from pilothouse.tools.tool_server import ToolServer
from pilothouse.tools.workspace_jail import WorkspaceJail

__all__ = ["build_rag_server", "outside_hint"]

MAX_K = 20
#: Fewer passages than this lose answers the index holds: the passage that answers is often
#: second or third (`bench/rag_bench.py`: recall@1 against recall@3), and a model asked a
#: one-fact question tends to ask for one.
MIN_K = 3
#: How long, and how many files, a keyword scan may read for one retrieval: reading is cheap
#: next to embedding, so a folder over the index cap is still scanned (within these bounds).
SCAN_SECONDS = 3.0
SCAN_MAX_FILES = 20_000
#: How long `index_directory` waits for its run before it answers with the progress (below
#: the default tool timeout of 60 s: the run goes on in the background).
INDEX_CALL_SECONDS = 45.0
INSTRUCTIONS = (
    "Search the code of a repository. retrieve_code_context(query) returns the most relevant "
    "code chunks with file paths and line ranges; index_directory(path) (re)indexes a folder "
    "of the workspace incrementally and makes it the one searched."
)


def build_rag_server(
    store_dir: Path,
    default_root: Path,
    *,
    index: CodeIndex | None = None,
    warm_up: bool = True,
    index_wait_seconds: float = 5.0,
    max_files: int = DEFAULT_MAX_FILES,
) -> ToolServer:
    """An MCP server over `default_root`, its workspace, storing into `store_dir`.

    Only folders inside `default_root` (symlinks followed) are indexed or searched. A folder
    is indexed unasked (`warm_up` at start, or for a retrieval) only when it is a code
    repository of at most `max_files` files; `index_directory` indexes any folder of the
    workspace within the cap. A retrieval waits up to `index_wait_seconds` for an index run,
    then answers from what is indexed so far and a keyword scan.
    """
    indexer = Indexer(index or CodeIndex(store_dir), WorkspaceJail.at(default_root),
                      max_files=max_files)

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            indexer.tasks = tasks
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
        root = indexer.jailed(Path(path) if path else indexer.root)
        found = await indexer.survey(root)
        if found.files > found.max_files:
            raise UserInputError(
                f"{root} has more than {found.max_files:,} files to index, the cap "
                "(PILOTHOUSE_INDEX_MAX_FILES).",
                hint=f"Index a folder inside it, or run `pilothouse index {root}` in a terminal "
                     "(no cap, with a progress bar); retrieve_code_context meanwhile answers "
                     "from a keyword scan.")
        run = indexer.start(root, again=True)
        await indexer.wait(run, INDEX_CALL_SECONDS, ctx)
        if run.error is not None:
            raise run.error
        indexer.root = root  # the one searched from now on, even while its run goes on
        if run.report is None:  # still going: it goes on in the background
            status = run.status()
            return tool_result({"root": str(root), "indexing": status, "note": (
                f"Still {progress_text(status['files_done'], status['files_total'])}; it goes "
                "on in the background, and retrieve_code_context answers from what is indexed "
                "so far.")}, is_error=False, view=views.report_view)
        return tool_result(report_payload(run.report), is_error=False, view=views.report_view)

    # No example query in the description: the local model copied the one it had ("where is
    # auth checked") as the query of an unrelated request (`pilothouse eval`). What it cannot
    # answer is said: the local model retrieved passages to count files or to read git.
    @server.tool(structured_output=False, annotations=READS)
    async def retrieve_code_context(
        query: str, k: int = 5, path_filter: str | None = None, ctx: Context | None = None
    ) -> CallToolResult:
        """What the source code says about a behaviour, a concept or a name: how something
        works, where it is defined, handled or set. Returns the few passages (file paths, line
        ranges, snippets) most similar to the query, so it cannot count files or lines, list
        every place a word occurs, or see the git history: a shell command does those.

        query: what you are looking for: the question's own words, or a function or class name.
        k: how many chunks (3-20). path_filter: a glob ("src/**/*.py") or part of a path.
        """
        k = max(MIN_K, min(k, MAX_K))
        root = indexer.jailed(indexer.root)
        run, refused = await indexer.refresh(root)
        if run is not None:
            await indexer.wait(run, index_wait_seconds, ctx)
        indexed = str(root) in indexer.index.indexed_roots()
        partial = indexer.building(root)
        hits: list[Hit] = []
        if indexed:
            try:
                hits = await anyio.to_thread.run_sync(
                    lambda: indexer.index.retrieve_code_context(
                        query, k, path_filter or None, root=root))
            except UserInputError:
                if not partial:  # a filter no file of a whole index matches
                    raise
        note = None
        if not indexed or partial:
            scanned = await anyio.to_thread.run_sync(lambda: scan_sources(
                root, query, k, max_files=SCAN_MAX_FILES, seconds=SCAN_SECONDS,
                path_filter=path_filter or None,
                hidden=refused is None or refused.repository is not None))
            hits = _merged(hits, scanned.hits, k)
            note = _scan_note(indexer.status(root), refused, scanned.files_read,
                              scanned.complete)
        # Where each name of the query occurs, from a whole index only (a partial one would
        # leave files out of a list that says "every").
        occurrences = await anyio.to_thread.run_sync(
            lambda: indexer.index.occurrences(query, root=root)) if indexed and not partial \
            else None
        # A refresh of a whole index (this server's first retrieval) is not worth a word.
        return _hits(render_hits(str(root), query, hits,
                                 indexing=indexer.status(root) if partial else None, note=note,
                                 occurrences=occurrences))

    @server.tool(structured_output=False, annotations=READS)
    async def find_named_code(question: str, limit: int = 4) -> CallToolResult:
        """The code a question names by path or symbol (exact matches first), with snippets.

        Used by the agent runtime for dynamic context expansion; answers from what is indexed
        now and never waits for (or starts) an index run.
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


def _merged(indexed: list[Hit], scanned: list[Hit], k: int) -> list[Hit]:
    """The index's hits, then the scan's that do not overlap one of them, `k` at most."""
    merged = list(indexed)
    for hit in scanned:
        if not any(h.path == hit.path and h.start_line <= hit.end_line
                   and hit.start_line <= h.end_line for h in merged):
            merged.append(hit)
    return merged[:k]


def _scan_note(status: dict[str, int] | None, refused: Survey | None, files_read: int,
               complete: bool) -> str:
    """What the passages of a retrieval without a whole index come from, and what to do."""
    scanned = f"a keyword scan of {files_read:,} files" + ("" if complete else
                                                           " (stopped at its bound)")
    if status is not None:
        done, total = status["files_done"], status["files_total"]
        progress = progress_text(done, total) if total else "indexing: listing files"
        return (f"The index is being built ({progress}): these passages come from the files "
                f"indexed so far and {scanned}. Ask again later for the whole index, or grep and "
                "read the files meanwhile.")
    why = refused.reason() if refused is not None else "the folder is not indexed"
    return (f"{why[:1].upper()}{why[1:]}: these passages come from {scanned}. To search it "
            "by meaning, index_directory a repository folder inside it, or run "
            "`pilothouse index PATH` in a terminal.")


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
