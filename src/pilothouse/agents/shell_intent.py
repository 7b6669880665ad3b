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
  so does the `cat` (or `head`, `tail`) of a file the person asks to be shown or asks what
  it says, and the `grep -rn` of a folder they ask to grep for a word (measured: a manifest's
  image was asked of a retrieval filtered to its path, one passage without the image line; a
  grep of a folder went to a file the model made up);
- a task of several changing steps, or a request that asks for a plan by name, is offered
  `propose_plan` alone: the plan is approved before anything runs;
- a request for a shell action (a command's name, a file shown whole, a count of lines or
  files, a size) is offered `run_command` alone (both by `agents.tool_hints`).

Anything else (how the code works, where something is) keeps the whole menu, where the
prompt leads to retrieval. Only a turn's first call is steered: later calls follow results.
"""

from __future__ import annotations

import re
import shlex

from langchain.agents.middleware import ModelRequest, ModelResponse

from pilothouse.agents.shell_approval import SHELL_TOOL
from pilothouse.agents.tool_hints import ToolHint
from pilothouse.context.rewrite import (
    RequestRewriteMiddleware,
    calling,
    first_call,
    question_text,
)

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
#: A file a question names by its path or extension ("deploy/k8s/deployment.yaml").
FILE_PATH = re.compile(rf"(?<![\w/.-])(?:{_FILE})", re.IGNORECASE)
_SHOW_FILE = re.compile(
    r"\b(?:show|print|read|open|display|view|dump|output)\b(?:\s+me)?(?:\s+the)?"
    r"(?:\s+(?P<part>top|head|beginning|start|end|bottom|tail|contents?|text|"
    r"(?P<edge>first|last)\s+(?P<lines>\d+)\s+lines)\s+of)?(?:\s+the)?"
    r"(?:\s+(?:file|manifest))?\s+`?(?P<file>" + _FILE + ")",
    re.IGNORECASE)
#: Lines shown of "the top of" a file (a changelog's newest entries, a manifest's header).
TOP_LINES = 40
#: A question about what a named file says ("which port does charts/api/values.yaml open?"):
#: the file itself answers it, read whole (the shell's output is bounded).
_ASKS_ABOUT_FILE = re.compile(
    r"^\s*(?:what|which|who|when|where|does|do|is|are)\b[^\n]*?(?<![\w/.-])`?(?P<file>"
    + _FILE + ")", re.IGNORECASE)
#: Where "grep" looks when the person names the whole workspace, not a folder of it.
_WHOLE_WORKSPACE = frozenset({"workspace", "repo", "repository", "code", "codebase", "project"})
#: Words in a folder's place that point back ("grep it for X"): the model reads what they mean.
_POINTING_BACK = frozenset({"it", "this", "that", "them", "these", "those", "there", "here",
                            "file", "files", "folder", "me", "us"})
_OWNER = r"(?:(?:the|our|my)\s+)?(?:(?:workspace|repo|repository)'s\s+)?"
_TERM = r"`?(?P<term>[\w.:/-]*\w)`?"
#: "grep the src folder for X", "grep for X in lib", "grep X in the workspace".
_GREP = (
    re.compile(rf"\bgrep\s+{_OWNER}(?P<folder>(?!for\b)[\w./-]+)"
               rf"(?:\s+(?:folder|directory|dir|tree))?\s+for\s+{_TERM}", re.IGNORECASE),
    re.compile(rf"\bgrep\s+(?:for\s+)?{_TERM}\s+(?:in|under|across)\s+{_OWNER}"
               rf"(?P<folder>[\w./-]+)", re.IGNORECASE),
)
#: "how many .py files": a count of files of a kind is a count of files.
_MEASURE = re.compile(
    r"\b(?:how\s+many\s+(?:[\w.*-]+\s+)?(?:lines|files|folders|directories)|line\s+counts?|lines\s+of\s+code|"
    r"how\s+big|disk\s+usage|(?:file|folder|directory)\s+sizes?|size\s+on\s+disk|"
    r"list\s+(?:the\s+|all\s+)?(?:files|folders|directories)|"
    r"(?:what|which)\s+files\s+(?:are|does)\s+)", re.IGNORECASE)
_NAMES_PROGRAM = re.compile(rf"(?<![\w./-])(?:{_PROGRAM})(?![\w/-])", re.IGNORECASE)

#: Imperative verbs of a step that changes something, put as a request or as a question
#: asking for it ("can you bump ...").
CHANGE_VERB = re.compile(
    r"^(?:please\s+|(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?)?"
    r"(?:update|change|edit|modify|set|raise|lower|bump|increase|decrease|add|"
    r"remove|delete|rename|move|create|write|commit|push|tag|release|deploy|apply|install|"
    r"upgrade|build|run|test|open|merge|fix|refactor|revert|rollback|roll\s+back)\b",
    re.IGNORECASE)
STEP_BOUNDARY = re.compile(r"\s*(?:[:;]|,\s*(?:and\s+|then\s+)?|\s+and\s+then\s+|\s+then\s+|"
                           r"\.\s+)\s*", re.IGNORECASE)


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


def file_command(question: str) -> str | None:
    """The command that shows the file `question` asks to see (or asks what it says): `cat`,
    or `head`/`tail` for its top or end; None when it asks for no file."""
    found = _SHOW_FILE.search(question)
    if found is None:
        asked = _ASKS_ABOUT_FILE.search(question)
        # A count or a program by name is the model's command to write (`wc -l`, `sed`).
        if asked is None or _MEASURE.search(question) or _NAMES_PROGRAM.search(question):
            return None
        return f"cat {shlex.quote(asked.group('file'))}"
    path, part = found.group("file"), (found.group("part") or "").lower()
    if found.group("edge"):
        program = "head" if found.group("edge").lower() == "first" else "tail"
        return f"{program} -n {int(found.group('lines'))} {shlex.quote(path)}"
    if part in ("top", "head", "beginning", "start"):
        return f"head -n {TOP_LINES} {shlex.quote(path)}"
    if part in ("end", "bottom", "tail"):
        return f"tail -n {TOP_LINES} {shlex.quote(path)}"
    return f"cat {shlex.quote(path)}"


def grep_command(question: str) -> str | None:
    """`grep -rn` of the word `question` asks to grep a folder for, with line numbers (where,
    not only which files); None when it asks for no grep of a folder."""
    for pattern in _GREP:
        found = pattern.search(question)
        if found is not None:
            folder = found.group("folder").rstrip(".")
            if folder.lower() in _POINTING_BACK:
                return None
            folder = "." if folder.lower() in _WHOLE_WORKSPACE else folder
            return f"grep -rn -- {shlex.quote(found.group('term'))} {shlex.quote(folder)}"
    return None


def changing_steps(question: str) -> int:
    """How many parts of `question` are steps that change something."""
    return sum(bool(CHANGE_VERB.match(part.strip()))
               for part in STEP_BOUNDARY.split(question) if part.strip())


#: "plan" as a word of the request, with the program before it when there is one
#: ("terraform plan" is a command, not a request for a plan).
_PLAN_WORD = re.compile(r"(?:(?P<program>[\w.-]+)\s+)?\bplan\b", re.IGNORECASE)


def asks_for_plan(question: str) -> bool:
    """Whether `question` asks for a plan by name ("plan it first", "need a plan for ..."):
    the person says what they want before anything runs, and a plan is the answer the
    seed's planning step gives, approved before any step runs."""
    return any((m.group("program") or "").lower() not in PROGRAMS
               for m in _PLAN_WORD.finditer(question))


def asks_for_shell(question: str) -> bool:
    """Whether `question` asks for a shell action: a program by name, a file shown whole, a
    count of lines or files, a size."""
    return bool(_NAMES_PROGRAM.search(question) or _SHOW_FILE.search(question)
                or _MEASURE.search(question))


#: The DevOps agent's first-call hints: a plan asked for by name or several changing steps get
#: the plan, a shell action the shell (a spelled command never reaches the model:
#: `SpelledCommandMiddleware`).
DEVOPS_HINTS = (ToolHint((PLAN_TOOL,), lambda question: asks_for_plan(question)
                         or changing_steps(question) >= 2),
                ToolHint((SHELL_TOOL,), asks_for_shell))


class SpelledCommandMiddleware(RequestRewriteMiddleware):
    """Runs the command a turn's question spells out (or the `cat` of the file it asks to
    see or asks about, the grep it asks for), as its first call, without the model: the
    model, asked to show a manifest, grepped it for one field and missed the rest."""

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        if not first_call(request) \
                or not any(getattr(t, "name", None) == SHELL_TOOL for t in request.tools):
            return None
        question = question_text(request)
        command = spelled_command(question) or grep_command(question) \
            or file_command(question)
        if command is None:
            return None
        return calling(SHELL_TOOL, {"command": command})
