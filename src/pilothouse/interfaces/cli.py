"""`pilothouse`: the command line (Typer + Rich)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Coroutine
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from pilothouse import __version__
from pilothouse.config import PROVIDERS, Settings
from pilothouse.errors import PilothouseError
from pilothouse.evals.cli import eval_command
from pilothouse.interfaces.render import EventPrinter, progress_bar
from pilothouse.interfaces.serve import serve_command
from pilothouse.observability.operations import operations
from pilothouse.runtime.events import TurnFailed, event_as_json
from pilothouse.runtime.session import ApprovalDecision, Conversation
from pilothouse.sandbox.argocd.cli import sandbox_cli as argocd_sandbox_cli
from pilothouse.sandbox.github.cli import sandbox_cli as github_sandbox_cli
from pilothouse.tools.argocd.cli import mcp_cli as argocd_mcp_cli
from pilothouse.tools.github.cli import mcp_cli as github_mcp_cli
from pilothouse.tools.rag.cli import index_command
from pilothouse.tools.rag.cli import mcp_cli as rag_mcp_cli
from pilothouse.tools.shell.cli import shell as shell_mcp_command

app = typer.Typer(
    name="pilothouse",
    help="A multi-agent assistant for platform engineers that does not fall over.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)
out = Console()

mcp_app = typer.Typer(help="Run a tool server (MCP, stdio or streamable HTTP).",
                      no_args_is_help=True)
mcp_app.add_typer(argocd_mcp_cli, name="argocd")
mcp_app.command("shell")(shell_mcp_command)
mcp_app.add_typer(rag_mcp_cli, name="rag")
mcp_app.add_typer(github_mcp_cli, name="github")
app.add_typer(mcp_app, name="mcp")
sandbox_app = typer.Typer(help="Run a sandbox that behaves like a real API (for demos and tests).",
                          no_args_is_help=True)
sandbox_app.add_typer(argocd_sandbox_cli, name="argocd")
sandbox_app.add_typer(github_sandbox_cli, name="github")
app.add_typer(sandbox_app, name="sandbox")
app.command("index")(index_command)
app.command("serve")(serve_command)
app.command("eval")(eval_command)


def load_settings() -> Settings:
    """Settings from the environment, or a clear message and exit code 2."""
    try:
        return Settings.from_env()
    except PilothouseError as error:
        fail(error, code=2)


def run_async(settings: Settings, work: Coroutine[Any, Any, int | None]) -> int:
    """Run one command's async work with logging and tracing configured; errors exit clearly."""
    try:
        with operations(settings):
            return asyncio.run(work) or 0
    except PilothouseError as error:
        fail(error)


def fail(error: PilothouseError, code: int = 1) -> NoReturn:
    err.print(f"[bold red]Error:[/] {error.message}")
    if error.hint:
        err.print(f"[yellow]What to do:[/] {error.hint}")
    raise typer.Exit(code)


AgentOption = Annotated[str, typer.Option(
    "--agent", help="auto (Argo CD when ARGOCD_URL is set, else a general assistant), "
                    "argocd, github, devops, or supervisor (over every configured agent).")]


async def _ask(settings: Settings, question: str, thread: str, as_json: bool,
               agent: str = "auto") -> int:
    from pilothouse.agents.factory import open_configured_agent

    printer = EventPrinter(out, err, as_json=as_json)
    with progress_bar(err) as progress:
        async with open_configured_agent(settings, agent=agent, progress=progress) as assistant:
            conversation = Conversation(assistant.graph, thread, assistant.name)
            failed = False
            async for event in conversation.ask(question):
                if as_json:
                    # One line per event, however narrow the terminal (or none, in a pipe).
                    out.print(event_as_json(event), markup=False, highlight=False,
                              soft_wrap=True)
                else:
                    printer.show(event)
                failed = failed or isinstance(event, TurnFailed)
            waiting = bool(await conversation.pending())
    if waiting:
        err.print("[yellow]This run is waiting for your approval.[/] Approve or reject it with "
                  f"`pilothouse chat --thread {thread}`.")
        return 3
    if not as_json:
        err.print(f"[dim]thread: {thread}  (continue with --thread {thread})[/]")
    return 1 if failed else 0


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question or task.")],
    thread: Annotated[str | None, typer.Option(help="Continue this conversation.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print events as JSON lines.")] = False,
    agent: AgentOption = "auto",
) -> None:
    """Ask one question, print the answer and exit: 0 answered, 1 failed, 3 awaits approval."""
    settings = load_settings()
    thread_id = thread or uuid.uuid4().hex[:12]
    raise typer.Exit(run_async(settings, _ask(settings, question, thread_id, as_json, agent)))


async def _chat(settings: Settings, thread: str, agent: str) -> None:
    from pilothouse.agents.factory import open_configured_agent

    printer = EventPrinter(out, err, as_json=False)
    with progress_bar(err) as progress:
        async with open_configured_agent(settings, agent=agent, progress=progress) as assistant:
            conversation = Conversation(assistant.graph, thread, assistant.name)
            err.print(f"[bold]Pilothouse[/] ({assistant.model.name}, window "
                      f"{assistant.model.window.tokens:,} tokens, {len(assistant.tools)} tools). "
                      "Type /exit to leave.")
            while True:
                try:
                    question = await asyncio.to_thread(input, "you> ")
                except EOFError:
                    break
                if question.strip() in {"/exit", "/quit"}:
                    break
                if question.strip():
                    async for event in conversation.ask(question):
                        printer.show(event)
                    await _answer_approvals(conversation, printer)
    err.print(f"[dim]thread: {thread}[/]")


async def _answer_approvals(conversation: Conversation, printer: EventPrinter) -> None:
    """Ask the person about each pending approval and continue the run with the decision."""
    while pending := await conversation.pending():
        value = pending[0].value or {}
        what = value.get("description") or f"{value.get('name')} {value.get('args')}"
        err.print(f"[yellow]Approval needed:[/] {what}")
        answer = (await asyncio.to_thread(input, "approve? [y/N/reason to reject] ")).strip()
        decision: ApprovalDecision = {"type": "approve"} if answer.lower() in {"y", "yes"} else {
            "type": "reject", "message": answer or "The user declined."}
        async for event in conversation.decide(decision, pending[0].id):
            printer.show(event)


@app.command()
def chat(
    thread: Annotated[str | None, typer.Option(help="Continue this conversation.")] = None,
    agent: AgentOption = "auto",
) -> None:
    """Chat interactively; approvals are asked inline (resume later with --thread)."""
    settings = load_settings()
    run_async(settings, _chat(settings, thread or uuid.uuid4().hex[:12], agent))


@app.command()
def tui(
    thread: Annotated[str | None, typer.Option(help="Open this conversation.")] = None,
    agent: AgentOption = "auto",
) -> None:
    """Chat in the terminal UI: streaming answers, tool activity, approvals, conversations."""
    from pilothouse.interfaces.tui import run_tui

    settings = load_settings()
    try:
        with operations(settings):
            run_tui(settings, thread_id=thread, agent=agent)
    except PilothouseError as error:
        fail(error)


@app.command()
def models() -> None:
    """List the providers, what each needs, and the configured model's context window."""
    from pilothouse.models.registry import PROVIDER_INFO
    from pilothouse.models.windows import resolve_context_window

    settings = load_settings()
    table = Table(title="Model providers (PILOTHOUSE_MODEL=provider:model)")
    for column in ("provider", "example", "needs"):
        table.add_column(column)
    for provider in PROVIDERS:
        info = PROVIDER_INFO[provider]
        table.add_row(provider, info.example, info.needs)
    out.print(table)
    try:
        window = resolve_context_window(settings)
        out.print(f"Configured: [bold]{settings.model}[/], window {window.tokens:,} tokens "
                  f"(from {window.source}).")
    except PilothouseError as error:
        out.print(f"Configured: [bold]{settings.model}[/]: {error}")


@app.command()
def doctor() -> None:
    """Check configuration, data directory, the local model and token counting."""
    from pilothouse.interfaces.doctor import run_checks

    settings = load_settings()
    results = run_checks(settings)
    table = Table(title="pilothouse doctor")
    for column in ("check", "status", "detail"):
        table.add_column(column)
    for name, ok, detail in results:
        table.add_row(name, "[green]ok[/]" if ok else "[red]problem[/]", detail)
    out.print(table)
    raise typer.Exit(0 if all(ok for _, ok, _ in results) else 1)


@app.command()
def demo(
    question: Annotated[list[str] | None, typer.Argument(help="Questions to ask.")] = None,
) -> None:
    """Run the demo on embedded defaults: the offline model answers real questions."""
    from pilothouse.interfaces.demo import run_demo

    settings = load_settings()
    raise typer.Exit(run_async(settings, run_demo(settings, question or [], out, err)))


@app.command()
def version() -> None:
    """Print the version."""
    out.print(__version__)


def main(argv: list[str] | None = None) -> Any:
    """Console entry point."""
    return app(args=argv if argv is not None else sys.argv[1:])
