"""`pilothouse`: the command line (Typer + Rich).

Registering the commands stays cheap: `pilothouse --help`, `version`, `models`, `doctor`,
`keys`, `sandbox ...` and `mcp <server>` start without loading LangChain, LangGraph, the agents,
ChromaDB or the A2A SDK. So this module, and every command module it registers, imports Typer,
Rich, the settings and small helpers at its top, never an agent, a server or an SDK; a command
imports what it runs inside its body, and the `mcp` and `sandbox` groups import a server's
module only when that server is run or described (`cli_lazy`).
`tests/interfaces/test_import_cost.py` holds the line; `bench/cli_latency.py` times it.
"""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from typing import Annotated, Any, NoReturn, cast

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pilothouse import __version__
from pilothouse.config import PROVIDERS, Settings
from pilothouse.errors import PilothouseError
from pilothouse.evals.cli import eval_command
from pilothouse.interfaces.cli_common import (
    EXIT_CODES_HELP,
    AgentOption,
    CommandLineMisuse,
    ExitCode,
    ThreadOption,
)
from pilothouse.interfaces.cli_lazy import lazy_group
from pilothouse.interfaces.doctor import doctor_command
from pilothouse.interfaces.keys_cli import keys_cli
from pilothouse.interfaces.serve_cli import serve_command
from pilothouse.private_files import restrict_umask, secure_home
from pilothouse.tools.rag.cli import index_command

app = typer.Typer(
    name="pilothouse",
    help="A multi-agent assistant for platform engineers that does not fall over.",
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)
out = Console()

# A tool server's process loads its own server only (and `pilothouse --help` none of them).
mcp_app = typer.Typer(help="Run a tool server (MCP, stdio or streamable HTTP).",
                      no_args_is_help=True, cls=lazy_group({
                          "shell": "pilothouse.tools.shell.cli:shell",
                          "argocd": "pilothouse.tools.argocd.cli:mcp_cli",
                          "rag": "pilothouse.tools.rag.cli:mcp_cli",
                          "github": "pilothouse.tools.github.cli:mcp_cli"}))
app.add_typer(mcp_app, name="mcp")
sandbox_app = typer.Typer(help="Run a sandbox that behaves like a real API (for demos and tests).",
                          no_args_is_help=True, cls=lazy_group({
                              "argocd": "pilothouse.sandbox.argocd.cli:sandbox_cli",
                              "github": "pilothouse.sandbox.github.cli:sandbox_cli"}))
app.add_typer(sandbox_app, name="sandbox")
model_app = typer.Typer(help="The shared local model service: is it running, and stop it.",
                        no_args_is_help=True, cls=lazy_group({
                            "status": "pilothouse.interfaces.model_cli:status_command",
                            "stop": "pilothouse.interfaces.model_cli:stop_command"}))
app.add_typer(model_app, name="model")
app.command("index")(index_command)
app.command("doctor")(doctor_command)
app.command("serve")(serve_command)
app.add_typer(keys_cli, name="keys")
app.command("eval")(eval_command)


def load_settings() -> Settings:
    """Settings from the environment, its home checked owner-only; or a message and exit 2."""
    try:
        settings = Settings.from_env()
        secure_home(settings.home)
        return settings
    except PilothouseError as error:
        fail(error, code=2)


def run_async(settings: Settings, work: Coroutine[Any, Any, int | None]) -> int:
    """Run one command's async work with logging and tracing configured; errors exit clearly."""
    import asyncio

    from pilothouse.observability.operations import operations

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
    from pilothouse.interfaces.cli_threads import checked_thread, chosen_agent

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
    from pilothouse.interfaces.cli_threads import checked_thread, chosen_agent

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
    import asyncio

    from pilothouse.agents.supervisor import SUPERVISOR
    from pilothouse.interfaces.cli_threads import checked_thread, chosen_agent, claim_thread
    from pilothouse.interfaces.tui import run_tui
    from pilothouse.observability.operations import operations

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
    restrict_umask()  # state, caches and the tool servers this starts: owner-only files
    return app(args=argv if argv is not None else sys.argv[1:])
