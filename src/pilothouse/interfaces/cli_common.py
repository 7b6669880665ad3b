"""What every `pilothouse` command shares and Typer needs before any command runs.

Exit codes, the usage error, and the `--agent` / `--thread` options are read when the CLI
registers its commands, i.e. by `pilothouse --help` and `pilothouse version` too. So this
module imports nothing but Typer and the errors: the agents, LangChain and the servers load
inside the commands that use them (`tests/interfaces/test_import_cost.py` holds that line).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Annotated

import typer

from pilothouse.errors import UserInputError

#: The specialists `--agent` offers, in the order of `agents.registry.SPECIALISTS` (the
#: registry imports every agent, too much for registering an option; a test keeps them equal).
SPECIALIST_NAMES: tuple[str, ...] = ("argocd", "github", "devops")


class ExitCode(IntEnum):
    ANSWERED = 0
    ERROR = 1
    USAGE = 2
    WAITING_FOR_APPROVAL = 3
    TOOLS_FAILED = 4


EXIT_CODES_HELP = (
    "Exit codes: 0 answered; 1 error (the message says what to do); 2 usage (a wrong option, "
    "an unknown agent, a thread of another agent, nothing to approve); 3 waiting for your "
    "approval (the command to answer it is printed); 4 every tool call of the turn failed "
    "(e.g. Argo CD unreachable: the answer explains the failure)."
)


class CommandLineMisuse(UserInputError):
    """The command line asks for something that cannot work as written (exit code 2)."""


def agent_help() -> str:
    return ("Who answers: supervisor (the default, also 'auto': routes to every configured "
            "agent) or one specialist: " + ", ".join(SPECIALIST_NAMES) +
            ". A thread keeps its agent.")


AgentOption = Annotated[str | None, typer.Option("--agent", help=agent_help())]
ThreadOption = Annotated[str | None, typer.Option(
    "--thread", help="Continue this conversation (the id a previous command printed).")]
