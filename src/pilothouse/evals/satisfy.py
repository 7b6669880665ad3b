"""Whether a case can be passed at all: its calls, made straight to the world's tools, answer it.

The oracle model (`oracle_model`) checks a case through the whole product, and the product has
code between the model and the tools (routing by words, calls made from the question, arguments
nobody wrote dropped) that can stop any model from passing. This check leaves the product out:
each expected call goes to the real tool of the agent that has it, on the case's world, and
the case is satisfiable when every tool exists on an expected agent, names only what exists
(or what the person wrote), and every fact occurs in what the calls return (a turn without
calls: in the conversation before it). A change that waits for a person is not made here, so
what an approved change reports is left to the oracle's run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pilothouse.evals.cases import Case
from pilothouse.evals.checks import args_match, mentions
from pilothouse.evals.environment import EvalWorld


def _text(output: Any) -> str:
    if isinstance(output, tuple):  # (content, artifact)
        output = output[0]
    if isinstance(output, list):
        return "\n".join(str(part.get("text", part)) if isinstance(part, dict) else str(part)
                         for part in output)
    return str(output)


async def case_problems(case: Case, world: EvalWorld) -> list[str]:
    """What stops `case` from being passed on `world`; empty when it can be passed."""
    tools = {tool.name: (agent, tool) for agent, handle in world.specialists.items()
             for tool in [*handle.tools, *(t for layer in handle.middleware
                                           for t in getattr(layer, "tools", None) or ())]}
    earlier = [text for e in case.history for text in (e.user, e.assistant)]
    problems: list[str] = []
    for number, turn in enumerate(case.turns, start=1):
        expect, where = turn.expect, f"turn {number}: "
        said = "\n".join([*earlier, turn.ask])
        outputs: list[str] = []
        for tool in expect.tools:
            found = tools.get(tool.name)
            if found is None:
                problems.append(f"{where}no agent has a tool {tool.name}")
                continue
            agent, runnable = found
            if agent not in expect.agents:
                problems.append(f"{where}{tool.name} belongs to {agent}, not an expected agent")
            if not args_match(tool.args, tool.call_args):
                problems.append(f"{where}{tool.name}: script_args do not contain args")
            if world.catalogue is not None:
                problems += [f"{where}{tool.name} names {kind} {name!r}, which does not exist"
                             for kind, name in world.catalogue.unknown(agent, tool.call_args)
                             if not mentions(said, name)]
            if expect.approval == "requested":
                continue  # a change: the person's approval is the product's to ask for
            try:
                outputs.append(_text(await runnable.ainvoke(tool.call_args)))
            except Exception as error:  # a tool that cannot be called: the case is wrong
                problems.append(f"{where}{tool.name} failed: {type(error).__name__}: {error}")
        pool = "\n".join(outputs) if expect.tools else said
        # What an approved change says comes from making it: the oracle's run checks that.
        checked = [] if expect.approval == "requested" else expect.facts
        problems += [f"{where}fact {fact!r} is in nothing the turn can read"
                     for fact in checked if not _any_mentioned(pool, fact)]
        earlier += [turn.ask, *outputs]
    return problems


def _any_mentioned(text: str, fact: str | Sequence[str]) -> bool:
    options = [fact] if isinstance(fact, str) else fact
    return any(mentions(text, option) for option in options)
