"""Command-line entry points: `pilothouse index PATH` and `pilothouse mcp rag`.

The main CLI mounts them with `app.command("index")(index_command)` and
`mcp_app.add_typer(mcp_cli, name="rag")`. Heavy modules (ChromaDB, onnxruntime, the MCP SDK)
are imported inside the commands, so mounting them costs the CLI's start-up nothing. Settings
come from `Settings.from_env`, the only reader of the environment; `--home` overrides where the
index is stored.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, PilothouseError, UserInputError
from pilothouse.private_files import secure_home
from pilothouse.tools.filter_options import ExcludeToolsOption, ReadOnlyOption, ToolsOption

if TYPE_CHECKING:
    from pilothouse.tools.rag.index import IndexReport

_err = Console(stderr=True, soft_wrap=True)  # an error stays whole in a pipe
_out = Console()


def _yield_cpu() -> None:
    """Serve below the default CPU priority (nice 10): an index run is background work, and
    on a small machine it must not slow the model that is writing an answer meanwhile.

    First thing in the process: threads started later (the index runs', ONNX's) inherit it.
    """
    with contextlib.suppress(OSError, AttributeError):  # not POSIX, or not allowed
        os.nice(10)


def store_dir(home: Path | None) -> Path:
    """Where the code index lives: `<home>/rag`, home defaulting to the configured one."""
    return (home if home is not None else _settings().home).expanduser() / "rag"


def private_store(home: Path | None) -> Path:
    """`store_dir(home)`, after the start-up check that the home's state is owner-only."""
    store = store_dir(home)
    try:
        secure_home(store.parent)
    except PilothouseError as error:
        _fail(error, code=2)
    return store


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except PilothouseError as error:
        _fail(error, code=2)


def _fail(error: PilothouseError, code: int = 1) -> NoReturn:
    _err.print(f"[bold red]Error:[/] {error.message}", highlight=False)
    if error.hint:
        _err.print(f"[yellow]What to do:[/] {error.hint}", highlight=False)
    raise typer.Exit(code)


def summary_table(report: IndexReport, store: Path) -> Table:
    """The outcome of an index run as a two-column table."""
    table = Table(title="Code index", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", justify="right", overflow="fold")
    seconds = max(report.seconds, 1e-9)
    rows = [
        ("root", report.root),
        ("files indexed", str(report.files_indexed)),
        ("files unchanged", str(report.files_skipped_unchanged)),
        ("files removed", str(report.files_removed)),
        ("chunks written", str(report.chunks)),
        ("chunks in index", str(report.total_chunks)),
        ("time", f"{report.seconds:.1f} s"),
        ("speed", f"{report.files_indexed / seconds:.1f} files/s"),
        ("", f"{report.chunks / seconds:.1f} chunks/s"),
        ("store", str(store)),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def skipped_table(report: IndexReport) -> Table:
    """What was left out, by reason, with a few example paths each."""
    table = Table(title="Skipped", title_justify="left")
    table.add_column("reason")
    table.add_column("count", justify="right")
    table.add_column("for example", overflow="fold")
    for reason, count in report.skipped.items():
        table.add_row(reason, f"{count:,}", ", ".join(report.skipped_examples.get(reason, [])))
    return table


def nothing_indexed(report: IndexReport, path: Path) -> UserInputError:
    """Why a run left the index of `path` empty, and what to do about it."""
    if report.root_ignored_by:
        gitignore = Path(report.root_ignored_by)
        return UserInputError(
            f"Nothing was indexed: {path} is itself ignored by {gitignore}, so every file "
            "under it is skipped (as git would).",
            hint=f"Index the checkout (`pilothouse index {gitignore.parent}`) or a folder it "
                 f"does not ignore, or remove the pattern from {gitignore}.")
    if not report.skipped:
        return UserInputError(f"Nothing was indexed: {path} holds no files.",
                              hint="Pass the folder of a checkout, e.g. `pilothouse index .` "
                                   "inside the repository.")
    reasons = "; ".join(f"{count} {reason}" for reason, count in report.skipped.items())
    return UserInputError(
        f"Nothing was indexed: every entry of {path} was skipped ({reasons}).",
        hint="Only UTF-8 text files up to 512 KiB that no .gitignore ignores are indexed; "
             "the table above shows what was skipped and why.")


def index_command(
    path: Annotated[Path, typer.Argument(help="The folder to index (a checkout).")] = Path("."),
    home: Annotated[
        Path | None, typer.Option(help="Pilothouse home; the index goes to HOME/rag.")
    ] = None,
) -> None:
    """Index a folder's code for retrieval (incremental: only changed files are re-embedded)."""
    from pilothouse.tools.rag.index import CodeIndex, resolve_root

    store = private_store(home)
    try:
        root = resolve_root(path)
        index = CodeIndex(store)
        with Progress(
            TextColumn("[bold]indexing[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files"),
            TimeElapsedColumn(),
            TextColumn("[dim]{task.description}[/]"),
            console=_err,
            transient=True,
        ) as bar:
            task = bar.add_task("", total=None)

            def progress(done: int, total: int, current: str) -> None:
                bar.update(task, completed=done, total=total, description=current[-60:])

            report = index.index_directory(root, progress=progress)
    except UserInputError as error:
        _fail(error, code=2)
    except PilothouseError as error:
        _fail(error)
    _out.print(summary_table(report, store))
    if report.skipped:
        _out.print(skipped_table(report))
    if report.files_in_index == 0:
        _fail(nothing_indexed(report, root), code=1)  # an empty index answers nothing


mcp_cli = typer.Typer(
    help="Serve the codebase RAG tools (index_directory, retrieve_code_context) over MCP.",
    invoke_without_command=True,
    no_args_is_help=False,
)


@mcp_cli.callback()
def serve(
    root: Annotated[Path | None, typer.Option(
        help="The workspace: searched by default, and nothing outside it is indexed or "
             "searched [default: PILOTHOUSE_WORKSPACE or the current folder].",
        show_default=False)] = None,
    home: Annotated[
        Path | None, typer.Option(help="Pilothouse home; the index goes to HOME/rag.")
    ] = None,
    transport: Annotated[
        str, typer.Option(help="stdio (for a local client) or streamable-http.")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="Address for streamable-http.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for streamable-http.")] = 8765,
    warm_up: Annotated[bool, typer.Option(
        help="Index the workspace as soon as the server starts, when it is a code repository "
             "of at most PILOTHOUSE_INDEX_MAX_FILES files; with --no-warm-up, the first "
             "retrieval starts it.")] = True,
    read_only: ReadOnlyOption = False,
    tools: ToolsOption = None,
    exclude_tools: ExcludeToolsOption = None,
) -> None:
    """Run the RAG MCP server until the client disconnects."""
    from pilothouse.tools.mcp_http import mcp_http
    from pilothouse.tools.rag.index import resolve_root
    from pilothouse.tools.rag.server import build_rag_server
    from pilothouse.tools.tool_filter import apply_tool_filter, filter_for, with_cli_filters

    _yield_cpu()
    settings = _settings()
    chosen = filter_for(with_cli_filters(settings, "rag", read_only=read_only, tools=tools,
                                         exclude_tools=exclude_tools), "rag")
    try:
        resolved = resolve_root(root if root is not None else settings.workspace)
        server = build_rag_server(private_store(home), resolved, warm_up=warm_up,
                                  max_files=settings.index_max_files)
        apply_tool_filter(server, chosen)
        http = (mcp_http(server, settings, host=host, port=port)
                if transport == "streamable-http" else None)
    except (UserInputError, ConfigurationError) as error:
        _fail(error, code=2)
    except PilothouseError as error:
        _fail(error)
    if transport == "stdio":
        server.run("stdio")
    elif http is not None:
        _err.print(f"Code RAG MCP server at {escape(http.summary())}", highlight=False)
        http.run(settings.log_level)
    else:
        unknown = UserInputError(f"Unknown transport '{transport}'.", hint="stdio, streamable-http")
        _fail(unknown, code=2)
