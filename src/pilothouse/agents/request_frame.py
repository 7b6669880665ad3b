"""The request frame: what one turn's question asks of whom, built once per turn.

Routing reads the frame, never the person's text again: which agents the question names, in
the order it names them; each clause's agents; and the names it mentions, resolved against
the live inventories (`agents.inventory`). Two kinds of evidence say which agent a clause is
for:

- the resources it names: a name an agent's inventory holds is that agent's (an application
  named bare reaches Argo CD, a repository named bare reaches GitHub, a file or identifier of
  the workspace reaches DevOps), whatever the world calls its things; where nothing else
  names an agent, two words one name of the workspace's code joins (`code_words`), else a
  group's name (an Argo CD project);
- the words of each domain (`routing.DOMAIN_WORDS`): the kinds of things and actions.

Where they agree they decide alone: a clause that names a resource and uses its agent's words
is that agent's, and a word another domain also uses ("files" of a pull request, a workflow
"run"), or a name it also has (a repository named after its application), does not pull a
second agent in. Where nothing agrees, every agent either names is asked. The agent asked
resolves the names of its own domain again (`agents.named_scope`): it may run in another
process, and a name travels as what the person typed, never as a note a model could copy.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from pilothouse.agents.code_words import CODE_WORDS
from pilothouse.agents.inventory import FOLDER, GROUP_KINDS, Inventory, Mention
from pilothouse.agents.question_parts import clauses, points_elsewhere, speaks_of_own


class WordsAt(Protocol):
    """Where in a text each agent's domain words first occur; with `shared` false, only the
    words no other agent's description also uses (`routing.DomainRouter`)."""

    def __call__(self, text: str, shared: bool = True) -> dict[str, int]: ...


def _no_words(text: str, shared: bool = True) -> dict[str, int]:
    return {}


#: Mentions that are evidence of an agent but no resource a pronoun could stand for: words
#: the workspace's code joins, and ordinary words one of its folders is called ("shell").
NO_RESOURCE = frozenset({CODE_WORDS, FOLDER})
#: How many turns' frames a long-running server keeps (a turn's model calls reuse its frame).
_KEPT_FRAMES = 256


def _mentioned_in(text: str, mention: Mention) -> int:
    """Where `mention` occurs in `text` as a whole word (-1: not there)."""
    match = re.search(rf"(?<![\w./-]){re.escape(mention.text)}(?![\w/-])", text)
    return match.start() if match else -1


@dataclass(frozen=True)
class RequestFrame:
    """One turn's question, its resolved mentions, and the agents its words name."""

    question: str
    mentions: tuple[Mention, ...] = ()
    words_at: WordsAt = field(default=_no_words, repr=False)
    #: A later turn of a conversation: its first part continues what the turns before named.
    follows_up: bool = False
    #: What the person's earlier words this question points back at name, for a later
    #: question naming nothing itself (`recall.recalled_mentions`).
    referents: tuple[Mention, ...] = ()
    #: The agent of the person's own things (the workspace's), for a part that names no
    #: agent but speaks of them (`agents_for`).
    own_agent: str | None = None

    @property
    def names_resource(self) -> bool:
        """Whether the question names a resource of some inventory (words its code joins
        into a name, or an ordinary word a folder is called, are no resource: nothing to say
        "its" of)."""
        return any(m.kind not in NO_RESOURCE for m in self.mentions)

    def names_in(self, text: str) -> bool:
        """Whether a part of the question (`text`) names a resource of some inventory: a name
        is what an inventory holds, whatever its shape (one world's apps are `shopfront`,
        another's `shop-api-blue`)."""
        return any(m.kind not in NO_RESOURCE and _mentioned_in(text, m) >= 0
                   for m in self.mentions)

    def agents_for(self, text: str, *, continues: bool = False) -> list[str]:
        """The agents a part of the question (`text`) is for, in the order it names them.

        A part that `continues` another part of the question (it points back, "which files
        does it touch?", "what was in that deploy", and names no resource of its own) asks
        about what that part named: a word another agent's description also uses ("files":
        of a pull request, or of the workspace), and weak evidence (below), say nothing of
        whose it is. Measured on held-out dev questions: "<repo> pr 88 - which files does it
        touch?" and "pull that commit up on github, what files did it touch" asked the DevOps
        agent too, and so did "when did it last get deployed and what was in that deploy",
        for the workspace folder called `deploy`.
        """
        named = self._named_by(text, continues)
        if (named or not self.own_agent or continues or not speaks_of_own(text)
                or points_elsewhere(text)):
            return named
        # A part that names no agent's words or resources, points at nothing another part
        # named, and speaks of the person's own things ("how many times do we retry a charge
        # on our end?"), beside a part that names an agent, asks about what is theirs here:
        # the workspace, as a whole question naming nothing does (the supervisor's first
        # call). Measured on held-out dev questions: four such parts went with the part
        # before them, to Argo CD or GitHub, and the workspace was never asked.
        others = [c for c in clauses(self.question) if c != text]
        return [self.own_agent] if any(self._named_by(c, False) for c in others) else []

    def _named_by(self, text: str, continues: bool) -> list[str]:
        """The agents the words and resources of `text` name (`agents_for`)."""
        worded = self.words_at(text, not continues)
        named: dict[str, int] = {}
        joined: dict[str, int] = {}
        grouped: dict[str, int] = {}
        for mention in self.mentions:
            at = _mentioned_in(text, mention)
            if at >= 0:
                kept = joined if mention.kind == CODE_WORDS \
                    else grouped if mention.kind in GROUP_KINDS else named
                kept.setdefault(mention.agent, at)
        if not worded and not named and not continues:
            # Weak evidence decides only what nothing else decides, the stronger first: words
            # the workspace's code joins into one name (`code_words`), then a group's name (a
            # project), which is often an ordinary word ("search the code" is not about a
            # project called "search").
            named = joined or grouped
        confirmed = {agent for agent in named if agent in worded}
        if confirmed:
            # A clause that names an agent's resource in that agent's words is its: a word
            # ("files", "run") or a name (a repository named after an app) another domain
            # shares does not pull a second agent in.
            worded = {agent: at for agent, at in worded.items() if agent in confirmed}
            named = {agent: at for agent, at in named.items() if agent in confirmed}
        order = dict(worded)
        for agent, at in named.items():
            order[agent] = min(at, order.get(agent, at))
        return sorted(order, key=order.__getitem__)

    @property
    def agents(self) -> list[str]:
        """The agents the whole question names, in the order asked (clause by clause).

        A later turn's first part continues the turns before as a later part continues the
        parts before it. Measured on held-out dev long conversations: "and when did it last
        get a deploy, what went out in it?", after a turn about an application's pods, asked
        the DevOps agent alone, for the workspace folder called `deploy`.
        """
        found: list[str] = []
        for index, clause in enumerate(clauses(self.question) or [self.question]):
            continues = (index > 0 or self.follows_up) and points_elsewhere(clause) \
                and not self.names_in(clause)
            found += [a for a in self.agents_for(clause, continues=continues) if a not in found]
        return found or list(dict.fromkeys(m.agent for m in self.referents))


class FrameBuilder:
    """Builds each turn's frame once (a turn's later model calls find it), bounded."""

    def __init__(self, words_at: WordsAt, inventory: Inventory | None = None,
                 own_agent: str | None = None) -> None:
        self.words_at = words_at
        self.inventory = inventory
        self.own_agent = own_agent
        self._frames: OrderedDict[str, RequestFrame] = OrderedDict()

    def words_only(self, question: str, follows_up: bool = False) -> RequestFrame:
        return RequestFrame(question, (), self.words_at, follows_up, own_agent=self.own_agent)

    async def build(self, key: str, question: str, follows_up: bool = False) -> RequestFrame:
        """The frame of the turn `key` (its question message; `follows_up`: not the
        conversation's first), resolved once."""
        if (kept := self._frames.get(key)) is not None:
            return kept
        mentions: Sequence[Mention] = ()
        if self.inventory is not None:
            mentions = await self.inventory.mentions(question)
        frame = RequestFrame(question, tuple(mentions), self.words_at, follows_up,
                             own_agent=self.own_agent)
        self._frames[key] = frame
        while len(self._frames) > _KEPT_FRAMES:
            self._frames.popitem(last=False)
        return frame

    def refer(self, key: str, referents: Sequence[Mention]) -> None:
        """The turn `key`'s frame, given what the earlier words it points back at name."""
        if (kept := self._frames.get(key)) is not None and referents:
            self._frames[key] = replace(kept, referents=tuple(referents))

    def get(self, key: str, question: str, follows_up: bool = False) -> RequestFrame:
        """The turn's frame if it was built, else one from the words alone."""
        return self._frames.get(key) or self.words_only(question, follows_up)
