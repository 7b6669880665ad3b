"""The DevOps agent: safe shell, codebase RAG, planning, and code the question names.

Tools come from two MCP servers started for the workspace: the shell server (policy, jail,
approval tokens) and the RAG server (index and retrieval; it indexes the workspace only when a
question needs the code, and answers from a keyword scan until the index is built). Shell
commands that need a person stop at the evidence gate (the command, its directory and the files
it names, checked again just before the command runs); multi-step tasks get a plan first, and
a request for a shell action gets a command (`shell_intent`); and the files or symbols a
question names are pulled from the index into the model's context before it answers.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from pilothouse.agents.grounded_args import GroundedArgsMiddleware
from pilothouse.agents.inventory import Mention, candidates
from pilothouse.agents.phrase_search import PhraseSearchMiddleware
from pilothouse.agents.reads_for_questions import ReadsForQuestionsMiddleware
from pilothouse.agents.search_query import (
    RETRIEVAL_TOOL,
    GroundedSearchQueryMiddleware,
    grounded_retrieval,
)
from pilothouse.agents.shell_approval import SHELL_TOOL, ShellPolicy, shell_gate
from pilothouse.agents.shell_intent import DEVOPS_HINTS, SpelledCommandMiddleware
from pilothouse.agents.tool_hints import tool_hints
from pilothouse.agents.toolkit import Toolkit
from pilothouse.agents.workspace_names import WorkspaceNames, folder_entries
from pilothouse.config import Settings
from pilothouse.context.intelligence import ExpansionMiddleware
from pilothouse.context.rewrite import (
    RequestRewriteMiddleware,
    add_turn_note,
    first_call,
    question_text,
)
from pilothouse.models.tokens import turn_messages
from pilothouse.runtime.held_contexts import entered_together
from pilothouse.runtime.tool_choice import ToolChoiceMiddleware
from pilothouse.tools.mcp_connect import call_for_payload, open_mcp_tools, stdio_server
from pilothouse.tools.shell.connection import shell_stdio_parameters
from pilothouse.tools.tool_filter import cli_arguments

DEVOPS_SYSTEM_PROMPT = (
    "You are the DevOps agent of Pilothouse. You run shell commands in the user's workspace "
    "with run_command (read-only commands run at once; others wait for the user's approval; "
    "dangerous ones are refused, so suggest a safer command), and you answer questions about "
    "the codebase with retrieve_code_context, which searches the indexed workspace "
    "(index_directory only for another folder inside the workspace that the user names). "
    "A question about how the code works, what it does or where something is defined or set: "
    "retrieve_code_context first, then answer from what it found. It returns a few passages, "
    "so it cannot count, list every file or line that mentions a name, or see git: for "
    "those, a read-only command (find, wc, grep -rn, git log, git status). A task of several "
    "steps: "
    "propose_plan first. The user sees each tool result below your words: cite files with "
    "line ranges, keep answers short."
)


@dataclass(frozen=True)
class FoundCode:
    """A snippet named by the question, as `ExpansionMiddleware` expects it."""

    path: str
    start_line: int
    end_line: int
    text: str


class IndexLookup:
    """Asks the RAG server for the code a question names (paths, symbols), through MCP."""

    def __init__(self, tools: Sequence[BaseTool]) -> None:
        self.tool = next((t for t in tools if t.name == "find_named_code"), None)

    async def __call__(self, question: str) -> list[FoundCode]:
        if self.tool is None:
            return []
        try:
            found = (await call_for_payload(self.tool, {"question": question})).get("items", [])
        except Exception:  # an index that is not built yet is not an error for the question
            return []
        return [FoundCode(str(f["path"]), int(f["start_line"]), int(f["end_line"]),
                          str(f.get("text", ""))) for f in found]


#: The tool that indexes a folder. The workspace itself is indexed by the first retrieval, so
#: its one use is a folder the person names.
INDEX_TOOL = "index_directory"


def names_folder(root: Path, question: str) -> bool:
    """Whether a word of `question` is a path ("deploy/k8s", "/srv/other": one outside the
    workspace is the tool's to refuse, with what to do instead) or a folder of `root`."""
    for word in question.split():
        word = word.strip("`'\".,;:?!()[]{}<>")
        if "/" in word:
            return True
        try:
            if word not in ("", ".", "..") and (root / word).is_dir():
                return True
        except OSError:  # a word too long for a path names no folder
            continue
    return False


class NamedFolderMiddleware(RequestRewriteMiddleware):
    """Tells the turn's first call what a folder the question names is, and offers
    `index_directory` only to a question that names a folder (a path, or a folder of the
    workspace).

    A name the person uses is resolved against the agent's inventory, as Argo CD's and
    GitHub's are: an ordinary word that is one of the workspace's folders ("our helm
    values") is that folder. The agent is told its path (the person's word, respelled as the
    workspace spells it) and the paths of what it holds. A folder of a program's source is
    not described: it is the code's own name, whose files retrieval reads by meaning.
    Measured on held-out dev questions: with no note, "whats the max replicas for prod
    autoscaling in our helm values" became `helm get values your-chart`, a release the model
    made up; told the folder alone, it wrote `helm/values.yaml` for `deploy/helm/values.yaml`;
    told a code package's files, it filtered a retrieval about "the orders service" to the
    package's `__init__.py`, or grepped every file listed; told the package's path alone, it
    grepped the question's words there (`grep -rn 'refund endpoint' src/<package>/`) where a
    retrieval answers. And a question about uncommitted changes became
    `index_directory()`, a re-index that answers nothing: a tool whose one use is a folder
    the person names is not offered when they name none.
    """

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.names = WorkspaceNames(root)

    def _described(self, folder: Mention) -> str | None:
        """The folder's path and what it holds; None for a folder of a program's source."""
        shown, count, code = folder_entries(self.root, folder.name)
        if code:
            return None
        said = f"'{folder.text}' is the folder {folder.name}/ of the workspace"
        more = f" and {count - len(shown)} more" if count > len(shown) else ""
        return f"{said}, which holds {', '.join(shown)}{more}" if shown else said

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        question = question_text(request)
        folders = self.names.folders(candidates(question)) if first_call(request) else []
        described = [d for m in {m.name: m for m in folders}.values()
                     if (d := self._described(m))]
        if described:
            request = add_turn_note(request, "Resolved against the workspace: "
                                             + "; ".join(described) + ".")
        if names_folder(self.root, question):
            return request
        offered = [t for t in request.tools if getattr(t, "name", None) != INDEX_TOOL]
        return request if len(offered) == len(request.tools) else request.override(
            tools=offered)


class OwnPathMiddleware(RequestRewriteMiddleware):
    """A command that failed on a path the model wrote, where the workspace has close paths,
    is corrected by the model: the next call must call a tool, once a turn.

    The shell answers a path that does not exist with the workspace's closest paths
    (`tools.shell.near_paths`: the result's `missing_path` and `closest_paths`). Measured on
    held-out dev questions: told "`helm/values.yaml` does not exist; the closest paths in the
    workspace are `deploy/helm/values.yaml`", the local model answered with that sentence
    instead of running its command on the path. A path the person wrote is theirs to correct
    (the result shows them the candidates), and a second miss is reported, not chased.
    """

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        if first_call(request) or request.tool_choice not in (None, "auto") \
                or not request.messages or not isinstance(request.messages[-1], ToolMessage):
            return request
        missed = [m.artifact for m in turn_messages(request.messages)
                  if isinstance(m, ToolMessage) and isinstance(m.artifact, Mapping)
                  and m.artifact.get("closest_paths")]
        newest = request.messages[-1].artifact
        if len(missed) != 1 or missed[0] is not newest \
                or str(newest.get("missing_path")) in question_text(request):
            return request
        return request.override(tool_choice="required")


#: Paths the model may only pass when a person said them. Measured on the local model: asked
#: how "the orders service" checks tokens, it filtered retrieval to `src/orders.py` (no such
#: file: an error instead of the passages); a hostile request's `../canary` became
#: `index_directory(path=...)`. Without the argument, retrieval searches the whole index.
GROUNDED_NAMES = {"retrieve_code_context": ("path_filter",), "index_directory": ("path",)}

#: Tools whose view answers the question that calls them (`runtime.tool_choice`): retrieved
#: code is shown whole. Not `run_command`: a task can take several commands.
ANSWERING_TOOLS = frozenset({"retrieve_code_context"})
#: How the first call's line of reasoning opens (`runtime.tool_choice`). Measured on the local
#: model's first call over 35 dev requests: without it, a question about the last commit,
#: uncommitted files, a count of files or every file that mentions a name went to code
#: retrieval (a command for 0 of 9 held-out ones); after saying how the answer is found it
#: ran a command for 6 of 9, and one of 4 retrieval questions became a command. Whole turns:
#: dev DevOps 23 -> 25 of 35; the test split's DevOps category 3/12 before and after.
REASON_FIRST = "The answer is found by "


@asynccontextmanager
async def open_devops_toolkit(settings: Settings) -> AsyncIterator[Toolkit]:
    """Start the shell and RAG servers for the workspace and yield the agent's toolkit."""
    secret = settings.approval_secret or secrets.token_hex(32)
    shell = shell_stdio_parameters(
        settings.workspace, approval_secret=secret, policy_file=settings.shell_policy_file,
        timeout_seconds=settings.shell_timeout_seconds,
        extra_args=cli_arguments(settings, "shell"),
    )
    # No start-up index: the agent indexes when a question needs the code, so a first
    # question about anything else never competes with an index run for the CPU (measured:
    # indexing the checkout a person stood in took 5 CPU-minutes, and "what is Argo CD?" on
    # the local model timed out behind it).
    rag = stdio_server("pilothouse.tools.rag",
                       {"PILOTHOUSE_HOME": str(settings.home),
                        "PILOTHOUSE_INDEX_MAX_FILES": str(settings.index_max_files)},
                       ["--root", str(settings.workspace), "--home", str(settings.home),
                        "--no-warm-up", *cli_arguments(settings, "rag")])
    # One policy decides both what waits for a person and what a question is nudged off.
    policy = ShellPolicy(settings.workspace, settings.shell_policy_file, secret)
    gate = shell_gate(policy)
    # Both tool servers start side by side: each is a process that takes most of a second.
    async with entered_together({"shell": partial(open_mcp_tools, "shell", shell),
                                 "rag": partial(open_mcp_tools, "rag", rag)}) as opened:
        failed = [value for value in opened.values() if isinstance(value, Exception)]
        if failed:
            raise failed[0]
        served = [t for value in opened.values() if not isinstance(value, Exception)
                  for t in value]
        # The agent decides on approval; the policy dry run is for people, not the model.
        tools = [t for t in served if t.name != "check_command"]
        visible = [t for t in tools if t.name != "find_named_code"]
        # Every turn starts with a tool call (a retrieval, a command or a plan), as for the
        # data agents: an answer about this codebase must come from this codebase.
        yield Toolkit(
            name="devops",
            prompt=DEVOPS_SYSTEM_PROMPT,
            tools=visible,
            approvals=gate.approvals,
            after_approval=gate.inside,
            extra_middleware=[ExpansionMiddleware(IndexLookup(tools)),
                              NamedFolderMiddleware(Path(settings.workspace)),
                              OwnPathMiddleware(),
                              ToolChoiceMiddleware(ANSWERING_TOOLS, REASON_FIRST),
                              ReadsForQuestionsMiddleware(policy.reason_to_ask),
                              *gate.outside,
                              GroundedArgsMiddleware({}, names=GROUNDED_NAMES),
                              GroundedSearchQueryMiddleware(RETRIEVAL_TOOL,
                                                            grounded_retrieval),
                              *tool_hints(settings, DEVOPS_HINTS,
                                          spelled=[SpelledCommandMiddleware()]),
                              # After a grep for the person's phrase that found nothing.
                              PhraseSearchMiddleware(SHELL_TOOL, RETRIEVAL_TOOL)],
            planning=True,
        )
