"""What a DevOps request asks of the workspace, read from the person's words.

Measured with `pilothouse eval` on the local model: requests for a shell action were answered
without one. A command the person spelled out ("... with this command: <command>") became
`index_directory` of a path in it, so a chained `rm` was never refused by the policy and the
answer said nothing of it; "use sed to ..." became a retrieval and a typed sed command; a
request to print a file became a retrieval (passages, not the file); a secret file asked for
by name got an invented answer; a line count became a plan; a task of several steps became
`update_plan_step` with no plan. The model is good at writing a command once it is asked to,
so code decides *which tool* from the words and the model keeps the arguments:

- a command the person spelled out runs as spelled, with no model call: the shell policy
  allows it, asks the person, or refuses it (with its reason), exactly as for any command;
- a request for a shell action (a command's name, a file shown whole, a count of lines or
  files, a size) is offered `run_command` alone;
- a task of several changing steps is offered `propose_plan` alone: the plan is approved
  before anything runs.

Anything else (how the code works, where something is) keeps the whole menu, where the
prompt leads to retrieval. Only a turn's first call is steered: later calls follow results.
"""

from __future__ import annotations

import re
from enum import Enum
from uuid import uuid4

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage

from pilothouse.agents.shell_approval import SHELL_TOOL
from pilothouse.context.rewrite import RequestRewriteMiddleware, question_text

PLAN_TOOL = "propose_plan"

#: Programs a person names when they want a command run. English words that are also
#: programs ("find", "sort", "head", "test", "file") are left out: "find where X is checked"
#: is a question about the code.
PROGRAMS = frozenset({
    "cat", "grep", "egrep", "rg", "sed", "awk", "wc", "ls", "du", "df", "rm", "mv", "cp",
    "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "tar", "git", "kubectl", "helm", "jq",
    "yq", "stat", "tree", "pwd", "whoami", "uname", "sha256sum", "md5sum", "diff", "make",
    "pytest", "npm", "pip", "docker", "terraform", "curl", "wget",
})
_PROGRAM = "|".join(sorted(PROGRAMS, key=len, reverse=True))
#: "... with this command: <command>", "run: <command>": everything after the colon.
_AFTER_COLON = re.compile(r"\b(?:command|run|execute)\s*:\s*(?P<command>\S.*)$",
                          re.IGNORECASE | re.DOTALL)
#: `<command>` in backticks, when it starts with a program.
_BACKTICKS = re.compile(rf"`(?P<command>(?:{_PROGRAM})\b[^`\n]*)`")
#: "run <program> ...": up to the end of the sentence or a joining word.
_RUN_PROGRAM = re.compile(
    rf"\b(?:run|execute)\s+(?P<command>(?:{_PROGRAM})\b.*?)\s*(?:[?]|\.(?:\s|$)|,\s|\s+and\s|$)",
    re.IGNORECASE | re.DOTALL)

#: A file's name or path: a word with a known extension, or a path with a folder.
_FILE = (r"(?:[\w.-]+/)*[\w.-]+\.(?:ya?ml|json|toml|md|txt|cfg|ini|conf|py|sh|js|ts|go|env|"
         r"lock|sql|tf|xml|csv|log)\b|\.env\b|(?:[\w.-]+/)*(?:Dockerfile|Makefile)\b")
_SHOW_FILE = re.compile(
    r"\b(?:show|print|read|open|display|view|dump|output)\b(?:\s+me)?(?:\s+the)?"
    r"(?:\s+(?:top|head|beginning|start|end|bottom|tail|contents?|text|first\s+\d+\s+lines|"
    r"last\s+\d+\s+lines)\s+of)?(?:\s+the)?(?:\s+(?:file|manifest))?\s+`?(?:" + _FILE + ")",
    re.IGNORECASE)
_MEASURE = re.compile(
    r"\b(?:how\s+many\s+(?:lines|files|folders|directories)|line\s+counts?|lines\s+of\s+code|"
    r"how\s+big|disk\s+usage|(?:file|folder|directory)\s+sizes?|size\s+on\s+disk|"
    r"list\s+(?:the\s+|all\s+)?(?:files|folders|directories)|"
    r"(?:what|which)\s+files\s+(?:are|does)\s+)", re.IGNORECASE)
_NAMES_PROGRAM = re.compile(rf"(?<![\w./-])(?:{_PROGRAM})(?![\w/-])", re.IGNORECASE)

#: Imperative verbs of a step that changes something.
_CHANGE_VERB = re.compile(
    r"^(?:please\s+)?(?:update|change|edit|modify|set|raise|lower|bump|increase|decrease|add|"
    r"remove|delete|rename|move|create|write|commit|push|tag|release|deploy|apply|install|"
    r"upgrade|build|run|test|open|merge|fix|refactor|revert|rollback|roll\s+back)\b",
    re.IGNORECASE)
_STEP_BOUNDARY = re.compile(r"\s*(?:[:;]|,\s*(?:and\s+|then\s+)?|\s+and\s+then\s+|\s+then\s+|"
                            r"\.\s+)\s*", re.IGNORECASE)


class ShellIntent(Enum):
    """What the request asks of the DevOps agent's tools."""

    COMMAND = "command"  # run the command the person spelled out
    SHELL = "shell"      # a shell action: the model writes the command
    PLAN = "plan"        # several changing steps: plan first
    OPEN = "open"        # anything else: the model chooses


def spelled_command(question: str) -> str | None:
    """The command `question` spells out, as spelled; None when it spells none."""
    found = _AFTER_COLON.search(question) or _BACKTICKS.search(question) \
        or _RUN_PROGRAM.search(question)
    if found is None:
        return None
    # A spelled command is one line; what follows is not the person's (a sub-agent's
    # question ends with the supervisor's note on the answer's length).
    command = found.group("command").strip().splitlines()[0].strip().strip("`").strip()
    first = command.split(maxsplit=1)[0].lower() if command else ""
    return command if first in PROGRAMS or (found.re is _AFTER_COLON and command) else None


def changing_steps(question: str) -> int:
    """How many parts of `question` are steps that change something."""
    return sum(bool(_CHANGE_VERB.match(part.strip()))
               for part in _STEP_BOUNDARY.split(question) if part.strip())


def shell_intent(question: str) -> ShellIntent:
    """What `question` asks of the workspace (see the module's docstring)."""
    if spelled_command(question):
        return ShellIntent.COMMAND
    if changing_steps(question) >= 2:
        return ShellIntent.PLAN
    if _NAMES_PROGRAM.search(question) or _SHOW_FILE.search(question) \
            or _MEASURE.search(question):
        return ShellIntent.SHELL
    return ShellIntent.OPEN


def _first_call(request: ModelRequest) -> bool:
    return bool(request.messages) and isinstance(request.messages[-1], HumanMessage)


def _offered(request: ModelRequest, name: str) -> bool:
    return any(getattr(t, "name", None) == name for t in request.tools)


class ShellIntentMiddleware(RequestRewriteMiddleware):
    """Steers a DevOps turn's first call by `shell_intent`."""

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        if not _first_call(request) or not _offered(request, SHELL_TOOL):
            return None
        command = spelled_command(question_text(request))
        if command is None:
            return None
        call = {"name": SHELL_TOOL, "args": {"command": command},
                "id": f"call_{uuid4().hex[:24]}", "type": "tool_call"}
        return ModelResponse(result=[AIMessage(content="", tool_calls=[call])])

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        if not _first_call(request):
            return request
        intent = shell_intent(question_text(request))
        tool = {ShellIntent.SHELL: SHELL_TOOL, ShellIntent.PLAN: PLAN_TOOL}.get(intent)
        if tool is None or not _offered(request, tool):
            return request
        return request.override(
            tools=[t for t in request.tools if getattr(t, "name", None) == tool],
            tool_choice="required")
