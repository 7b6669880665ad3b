"""Index runs in the background of the RAG server, and their progress to whoever waits.

A run belongs to the server, not to the call that started it: a retrieval that starts the first
index of a repository waits a few seconds (forwarding "indexing 1,240 files: 35%" as MCP
progress), then answers from what it can, while the run goes on for the next question. Runs of
one folder queue behind each other; ONNX inference and ChromaDB calls block, so each runs in a
worker thread, and `stop` ends it after the current file when the server shuts down.

Every root is checked against the workspace jail (`tools/workspace_jail.py`) before anything
is read, and a root is indexed without anyone asking only when `files.survey` says it is a code
repository within the cap.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.abc import TaskGroup
from mcp.server.mcpserver import Context

from pilothouse.errors import PilothouseError
from pilothouse.tools.rag.files import DEFAULT_MAX_FILES, Survey, survey
from pilothouse.tools.rag.index import CodeIndex, IndexReport, resolve_root
from pilothouse.tools.workspace_jail import WorkspaceJail

log = logging.getLogger(__name__)

#: progress(files_done, files_total), called from the run's worker thread.
Listener = Callable[[int, int], None]


def outside_hint(path: str | Path) -> str:
    """What to do when a folder outside the workspace should be searched."""
    return (f"Search {path} with a server whose workspace it is: start the DevOps agent with "
            f"PILOTHOUSE_WORKSPACE={path} (or `pilothouse mcp rag --root {path}`). Index "
            "folders inside the workspace here.")


def progress_text(done: int, total: int) -> str:
    """What a person sees of a run: "indexing 1,240 files: 35%"."""
    files = "file" if total == 1 else "files"
    return f"indexing {total:,} {files}: {done * 100 // max(total, 1)}%"


class Run:
    """One index run of `root`: its progress, who listens to it, and how it ended."""

    def __init__(self, root: Path, *, building: bool, after: Run | None = None) -> None:
        self.root = root
        #: No index of `root` existed when it started: until it ends, the index is partial.
        self.building = building
        self.after = after
        self.done = self.total = 0
        self.finished = anyio.Event()
        self.report: IndexReport | None = None
        self.error: PilothouseError | None = None
        self.listeners: list[Listener] = []

    def status(self) -> dict[str, int]:
        """Files done and total (of the run it queues behind, while that one goes on)."""
        if self.after is not None and not self.after.finished.is_set():
            return self.after.status()
        return {"files_done": self.done, "files_total": self.total}

    def progress(self, done: int, total: int, _current: str = "") -> None:
        self.done, self.total = done, total
        for listen in list(self.listeners):
            try:
                listen(done, total)
            except Exception:  # a caller that went away must not stop the run
                log.debug("Dropped index progress for a caller that left.", exc_info=True)


class Indexer:
    """The server's index runs over `jail`'s workspace, the root searched, and what is known
    of each root (its survey, whether this server has brought its index up to date)."""

    def __init__(self, index: CodeIndex, jail: WorkspaceJail, *,
                 max_files: int = DEFAULT_MAX_FILES) -> None:
        self.index = index
        self.jail = jail
        self.root = jail.root
        self.max_files = max_files
        self.stop = threading.Event()
        #: Set by the server's lifespan: runs outlive the calls that start them.
        self.tasks: TaskGroup | None = None
        self.runs: dict[str, Run] = {}
        self._fresh: set[str] = set()
        self._surveys: dict[str, Survey] = {}

    def jailed(self, path: str | Path) -> Path:
        """`path` (relative to the workspace) as an existing folder inside it, or an error.

        The jail comes first, so the error for an outside path says nothing of what is there.
        """
        inside = self.jail.require(path, action="index or search code", hint=outside_hint(path))
        return resolve_root(inside)

    def status(self, root: Path) -> dict[str, int] | None:
        """Files done and total of the run indexing `root`, or None when none is."""
        run = self.runs.get(str(root))
        return run.status() if run is not None else None

    def building(self, root: Path) -> bool:
        """Whether a run is building `root`'s first index (so it is still partial)."""
        run = self.runs.get(str(root))
        return run is not None and (run.building or (run.after is not None
                                                     and run.after.building))

    async def survey(self, root: Path) -> Survey:
        """Whether `root` is a repository within the cap (counted once per server)."""
        known = self._surveys.get(str(root))
        if known is None:
            known = await anyio.to_thread.run_sync(lambda: survey(root, self.max_files))
            self._surveys[str(root)] = known
        return known

    def start(self, root: Path, *, again: bool = False) -> Run:
        """The run bringing `root` up to date: the one going, or (`again`: after it) a new one."""
        key = str(root)
        current = self.runs.get(key)
        if current is not None and not again:
            return current
        building = key not in self.index.indexed_roots()
        run = self.runs[key] = Run(root, building=building, after=current)
        if self.tasks is None:
            raise RuntimeError("The RAG server is not running: no task group for index runs.")
        self.tasks.start_soon(self._execute, run)
        return run

    async def refresh(self, root: Path) -> tuple[Run | None, Survey | None]:
        """Start bringing `root` up to date once per server, when it may be indexed unasked.

        Returns the run going (None when there is none) and, when `root` may not be indexed
        unasked, the survey that says why.
        """
        run = self.runs.get(str(root))
        if run is not None or str(root) in self._fresh:
            return run, None
        found = await self.survey(root)
        if not found.indexable:
            return None, found
        return self.start(root), None

    async def wait(self, run: Run, seconds: float, ctx: Context | None) -> None:
        """Wait up to `seconds` for `run`, forwarding its progress to the caller meanwhile."""
        listen = _forwarder(ctx)
        if listen is not None and ctx is not None:
            status = run.status()
            if status["files_total"]:  # how far it is now, before the next 5% step
                with contextlib.suppress(Exception):  # progress is news, never a failure
                    await _report(ctx, status["files_done"], status["files_total"])
            run.listeners.append(listen)
        try:
            if seconds > 0:
                with anyio.move_on_after(seconds):
                    await run.finished.wait()
        finally:
            if listen is not None:
                run.listeners.remove(listen)

    async def warm_up(self) -> None:
        """Index the default root in the background when it is a repository within the cap."""
        try:
            found = await self.survey(self.root)
            if found.indexable:
                await self.start(self.root).finished.wait()
            else:
                log.debug("No start-up index: %s.", found.reason())
        except PilothouseError as error:  # surfaces again, to the model, on the first call
            log.warning("RAG warm-up index of %s failed: %s", self.root, error)

    async def _execute(self, run: Run) -> None:
        key = str(run.root)
        try:
            if run.after is not None:
                await run.after.finished.wait()
            run.report = await anyio.to_thread.run_sync(
                lambda: self.index.index_directory(run.root, run.progress, stop=self.stop),
                # At shutdown, do not wait: `stop` ends the run after the current file.
                abandon_on_cancel=True,
            )
            if run.report.complete:
                self._fresh.add(key)
        except PilothouseError as error:
            run.error = error
            log.warning("Indexing %s failed: %s", run.root, error)
        except Exception as error:  # a background run must not take the server down
            run.error = PilothouseError(f"Indexing {run.root} failed ({type(error).__name__}).",
                                        hint="Check the RAG server's log; try index_directory.")
            log.exception("Indexing %s failed.", run.root)
        finally:
            if self.runs.get(key) is run:
                del self.runs[key]
            run.finished.set()


async def _report(ctx: Context, done: int, total: int) -> None:
    await ctx.report_progress(done, total, progress_text(done, total))


def _forwarder(ctx: Context | None) -> Listener | None:
    """Forward a run's progress from its worker thread to the caller, about every 5%."""
    if ctx is None:
        return None
    last = -1

    def forward(done: int, total: int) -> None:
        nonlocal last
        step = max(1, total // 20)
        if done == total or done // step != last:
            last = done // step
            anyio.from_thread.run(_report, ctx, done, total)

    return forward
