"""Dynamic few-shot: the two or three bank examples nearest the question go into the prompt.

A whole bank in every prompt would cost the local model ~600 tokens per call (~7 s on two
cores); the two or three nearest examples cost ~80 and show the argument shapes that matter for
this question. Nearness is the cosine of the project's offline MiniLM embeddings
(`tools.rag.embeddings`, no download); the bank is embedded once per process, the question once
per turn (a few milliseconds). Examples naming a tool the agent does not have (a read-only
Argo CD has no `sync_application`) are never shown, and neither is one below `MIN_SIMILARITY`:
an unrelated example misleads more than none.

Both sides are compared with their resource names masked (`intent_text`): MiniLM scores short
requests mostly by their names, so "undo the last release of invoices-ledger-staging" was
nearest to an example about the logs of another invoices app, not to the rollback example.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from langchain.agents.middleware import ModelRequest
from langchain_core.messages import HumanMessage

from pilothouse.agents.example_bank import Example
from pilothouse.context.rewrite import RequestRewriteMiddleware, add_turn_note, question_text

if TYPE_CHECKING:
    from pilothouse.tools.rag.embeddings import MiniLMEmbeddings

log = logging.getLogger("pilothouse.agents")

#: Examples shown per question.
TOP_K = 3
#: Below this cosine an example is unrelated to the question (MiniLM scores unrelated
#: platform sentences 0.1-0.3 and same-intent requests 0.45+).
MIN_SIMILARITY = 0.35

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

#: Resource-like words: owner/repo, hyphenated names (apps, clusters, branches), numbers.
_NAMES = re.compile(r"\b[\w.]+/[\w.-]+\b|\b[a-z0-9]+(?:-[a-z0-9]+)+\b|\b\d+\b", re.I)


def intent_text(request: str) -> str:
    """`request` with its resource names masked: what is asked, not about what."""
    return _NAMES.sub("X", request)


class MiniLMEmbedder:
    """The project's offline embeddings as texts -> unit vectors, loaded on first use.

    Vectors are kept per text: the example banks are embedded once per process, however many
    agents select from them.
    """

    def __init__(self) -> None:
        self._model: MiniLMEmbeddings | None = None
        self._known: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()
        self._warming: threading.Thread | None = None

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            if self._model is None:
                # Imported here: it brings ChromaDB (a third of a second), which a command
                # pays only when a question is embedded, not when the agents are built.
                from pilothouse.tools.rag.embeddings import MiniLMEmbeddings

                self._model = MiniLMEmbeddings()
            missing = list(dict.fromkeys(t for t in texts if t not in self._known))
            if missing:
                vectors = np.asarray(self._model(missing), dtype=np.float32)
                self._known.update(zip(missing, vectors, strict=True))
            return np.stack([self._known[t] for t in texts]) if texts else np.zeros(
                (0, 0), dtype=np.float32)

    def warm_in_background(self, texts: Sequence[str]) -> threading.Thread:
        """Load the model and embed `texts` in a thread, while the caller waits on something
        else (a tool server starting): a command's first question then finds them ready."""
        thread = threading.Thread(target=self, args=(list(texts),), daemon=True,
                                  name="pilothouse-embeddings-warm-up")
        thread.start()
        self._warming = thread
        return thread

    def finish_warming(self) -> None:
        """Wait for a warm-up still running. A process must not exit under it: the runtime
        aborts ("terminate called without an active exception", exit -6) when a thread is
        stopped inside onnxruntime (measured: a command that failed before its first question)."""
        if self._warming is not None:
            self._warming.join()


def bank_intents(bank: Sequence[Example]) -> list[str]:
    """What the selector embeds of each example of `bank`."""
    return [intent_text(e.request) for e in bank]


class ExampleSelector:
    """The examples of one bank nearest a question, among the tools an agent has."""

    def __init__(self, bank: Sequence[Example], tools: Sequence[str], embed: Embed) -> None:
        self.examples = [e for e in bank if e.tool in set(tools)]
        self._embed = embed
        self._vectors: npt.NDArray[np.float32] | None = None
        self._lock = threading.Lock()

    def _bank_vectors(self) -> npt.NDArray[np.float32]:
        with self._lock:
            if self._vectors is None:
                self._vectors = self._embed(bank_intents(self.examples))
            return self._vectors

    def nearest(self, question: str, k: int = TOP_K,
                offered: Collection[str] | None = None) -> list[Example]:
        """The `k` examples nearest `question`, of the tools `offered` (default: all)."""
        if not self.examples or not question.strip():
            return []
        scores = self._bank_vectors() @ self._embed([intent_text(question)])[0]
        order = [i for i in np.argsort(-scores)
                 if offered is None or self.examples[i].tool in offered][:k]
        return [self.examples[i] for i in order if scores[i] >= MIN_SIMILARITY]


def examples_block(examples: Sequence[Example], with_arguments: bool = True) -> str:
    """The prompt lines for `examples` (empty when there are none): each request with its
    call, or with the tool alone (`example_bank.TOOL_ONLY_BANKS`)."""
    if not examples:
        return ""
    answers = "call" if with_arguments else "tool"
    return (f"\n\nSimilar requests and the {answers} that answers them:\n"
            + "\n".join(e.line(with_arguments) for e in examples))


class FewShotMiddleware(RequestRewriteMiddleware):
    """Adds the nearest examples after the question, on a turn's first model call."""

    def __init__(self, selector: ExampleSelector, *, with_arguments: bool = True) -> None:
        super().__init__()
        self.selector = selector
        self.with_arguments = with_arguments

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        messages = request.messages
        if not messages or not isinstance(messages[-1], HumanMessage):
            return request
        try:
            # Only examples of tools this call offers: the menu may be narrowed to one
            # resource's tools, and an example of a tool the model cannot call shows it
            # nothing but a neighbour to reach for.
            offered = {str(getattr(t, "name", "")) for t in request.tools} or None
            chosen = self.selector.nearest(question_text(request), offered=offered)
        except Exception as error:  # missing embedding files: answer without examples
            log.warning("Few-shot examples unavailable: %s", error)
            return request
        block = examples_block(chosen, self.with_arguments)
        return add_turn_note(request, block.strip()) if block else request
