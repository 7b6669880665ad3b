"""`pilothouse`: the command line (Typer + Rich)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Annotated, Any, NoReturn, cast

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pilothouse import __version__
from pilothouse.agents.supervisor import SUPERVISOR
from pilothouse.config import PROVIDERS, Settings
from pilothouse.errors import PilothouseError
from pilothouse.evals.cli import eval_command
from pilothouse.interfaces.cli_threads import (
    CommandLineMisuse,
    agent_help,
    checked_thread,
    chosen_agent,
    claim_thread,
)
from pilothouse.interfaces.cli_turns import EXIT_CODES_HELP, ExitCode
from pilothouse.interfaces.doctor import doctor_command
from pilothouse.interfaces.serve import serve_command
from pilothouse.observability.operations import operations
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
    epilog=EXIT_CODES_HELP,
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
app.command("doctor")(doctor_command)
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
    except BaseExceptionGroup as group:  # raised inside the task groups of MCP sessions
        inner = first_pilothouse_error(group)
        if inner is None:
            raise
        fail(inner)


def first_pilothouse_error(error: BaseException) -> PilothouseError | None:
    """The first `PilothouseError` inside (nested) exception groups, if any."""
    if isinstance(error, PilothouseError):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = first_pilothouse_error(inner)
            if found is not None:
                return found
    return None


def fail(error: PilothouseError, code: int | None = None) -> NoReturn:
    """Say what went wrong and what to do; exit 2 for a command line that cannot work."""
    # Text, not markup: a message may quote what the person typed, brackets and all.
    err.print(Text.assemble(("Error: ", "bold red"), error.message), soft_wrap=True)
    if error.hint:
        err.print(Text.assemble(("What to do: ", "yellow"), error.hint), soft_wrap=True)
    if code is None:
        code = ExitCode.USAGE if isinstance(error, CommandLineMisuse) else ExitCode.ERROR
    raise typer.Exit(code)


AgentOption = Annotated[str | None, typer.Option("--agent", help=agent_help())]
ThreadOption = Annotated[str | None, typer.Option(
    "--thread", help="Continue this conversation (the id a previous command printed).")]


@app.command(epilog=EXIT_CODES_HELP)
def ask(
    question: Annotated[str | None, typer.Argument(
        help="The question or task (none with --approve/--reject).")] = None,
    thread: ThreadOption = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print events as JSON lines, one object per line; the last is "
                       '{"kind": "done", "data": {"thread_id": ...}}.')] = False,
    agent: AgentOption = None,
    approve: Annotated[bool, typer.Option(
        "--approve", help="Approve the action the conversation (--thread) waits for.")] = False,
    reject: Annotated[bool, typer.Option(
        "--reject", help="Reject the action the conversation (--thread) waits for.")] = False,
    message: Annotated[str | None, typer.Option(
        "--message", help="With --reject: why (the agent reads it).")] = None,
) -> None:
    """Ask one question (or answer a pending approval), print the answer and exit."""
    from pilothouse.interfaces.cli_conversation import AskRequest, run_ask

    try:
        request = AskRequest.checked(question, checked_thread(thread), chosen_agent(agent),
                                     as_json=as_json, approve=approve, reject=reject,
                                     message=message)
    except PilothouseError as error:
        fail(error)
    settings = load_settings()
    raise typer.Exit(run_async(settings, run_ask(settings, request, out, err)))


@app.command(epilog=EXIT_CODES_HELP)
def chat(thread: ThreadOption = None, agent: AgentOption = None) -> None:
    """Chat interactively; a pending approval is asked first, and approvals inline."""
    from pilothouse.interfaces.cli_conversation import run_chat

    try:
        thread, agent = checked_thread(thread), chosen_agent(agent)
    except PilothouseError as error:
        fail(error)
    settings = load_settings()
    raise typer.Exit(run_async(settings, run_chat(settings, thread, agent, out, err)))


@app.command()
def tui(
    thread: Annotated[str | None, typer.Option(help="Open this conversation.")] = None,
    agent: AgentOption = None,
) -> None:
    """Chat in the terminal UI: streaming answers, tool activity, approvals, conversations."""
    from pilothouse.interfaces.tui import run_tui

    try:
        thread, requested = checked_thread(thread), chosen_agent(agent)
    except PilothouseError as error:
        fail(error)
    settings = load_settings()
    try:
        with operations(settings):
            # A thread keeps its agent; a new one is the requested agent's (or the supervisor's).
            name = requested or SUPERVISOR
            if thread:
                thread, name = asyncio.run(claim_thread(settings, thread, requested,
                                                        command="tui"))
            run_tui(settings, thread_id=thread, agent=name)
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
def demo(
    question: Annotated[list[str] | None, typer.Argument(help="Questions to ask.")] = None,
    scenario: Annotated[str, typer.Option(
        help="overview: questions about the fleet; rollback: what changed before a Degraded "
             "app broke, then its rollback, approved on evidence.")] = "overview",
    approve: Annotated[bool, typer.Option(
        "--approve", help="rollback: approve the rollback (default: ask at a terminal, "
                          "else reject).")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="rollback: reject it.")] = False,
) -> None:
    """Run the demo on embedded defaults: the offline model answers real questions."""
    from pilothouse.interfaces.demo import SCENARIOS, Scenario, Verdict, run_demo

    misused = (approve and reject) or ((approve or reject) and scenario != "rollback") or \
        bool(question and scenario != "overview")
    if scenario not in SCENARIOS or misused:
        given = [f"--scenario {scenario}", *(["--approve"] if approve else []),
                 *(["--reject"] if reject else []), *(["questions"] if question else [])]
        fail(CommandLineMisuse(
            f"These demo options do not go together: {', '.join(given)}.",
            hint=f"Choose --scenario {' or '.join(SCENARIOS)}; questions go with overview, "
                 "--approve or --reject (one of them) with rollback."))
    settings = load_settings()
    verdict: Verdict | None = "approve" if approve else "reject" if reject else None
    raise typer.Exit(run_async(settings, run_demo(
        settings, question or [], out, err, scenario=cast(Scenario, scenario), verdict=verdict,
        interactive=sys.stdin.isatty() and err.is_terminal)))


@app.command()
def version() -> None:
    """Print the version."""
    out.print(__version__)


def main(argv: list[str] | None = None) -> Any:
    """Console entry point."""
    return app(args=argv if argv is not None else sys.argv[1:])
