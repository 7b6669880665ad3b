"""The TUI while an answer takes time: a status line with the phase and a clock, tokens streaming.

The model is the scripted OpenAI-compatible server behind the real ChatOpenAI client: it waits
before calling a tool, then writes its answer word by word, as a slow local model does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from test_tui import answers, ask, until
from textual.widgets import Static
from ui_support import (
    APPS_VIEW,
    ARGOCD_SLOW,
    LEAD,
    STREAMING_SCRIPT,
    SUB_LEAD,
    served_model_settings,
    streaming_agent,
    supervisor_agent,
)

from pilothouse.config import Settings
from pilothouse.interfaces.tui import PilothouseApp
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.testing.scripted_model import tool_call
from pilothouse.testing.scripted_server import running_scripted_server


async def test_the_status_line_says_what_runs_and_tokens_stream_into_the_chat(
    home: Path, tmp_path: Path
) -> None:
    seen: list[str] = []
    with running_scripted_server(STREAMING_SCRIPT) as (url, _state):
        app = PilothouseApp(streaming_agent(home, url),
                            registry_path=tmp_path / "conversations.sqlite")
        async with app.run_test(size=(130, 40)) as pilot:
            await until(pilot, app.ready.is_set, "the agent to open")

            def status() -> str:
                text = str(app.status.content)
                if not seen or seen[-1] != text:
                    seen.append(text)
                return text

            def drafts() -> list[str]:
                return [str(w.content) for w in app.query("#chat .streaming").results(Static)]

            await ask(pilot, app, "Which apps are in payments?")
            # The model takes a while before its tool call: the clock moves meanwhile.
            await until(pilot, lambda: re.fullmatch(r". thinking · [1-9]\d*s", status())
                        is not None, "the clock to pass a second while the model thinks")
            # Words arrive one by one: a draft that is a strict start of the answer. The status
            # is read on every poll (asking can take past the first second on a busy machine,
            # and the spinner must be seen turning while the model still thinks).
            await until(pilot, lambda: bool(status()) and any(
                0 < len(d) < len(LEAD) and LEAD.startswith(d) for d in drafts()),
                "a partly streamed answer")
            assert re.fullmatch(r". writing the answer · \d+s", status())
            await until(pilot, lambda: answers(app) == [f"{LEAD}\n\n{APPS_VIEW}"],
                        "the whole answer")
            assert not drafts()
            await until(pilot, lambda: not app.busy, "the turn to end")
            assert re.fullmatch(r"answered in \d+s", status())
    # The spinner turned while waiting (a frame per tick), not one frozen line.
    assert len({line[0] for line in seen if "thinking" in line}) > 1


async def test_a_sub_agents_answer_streams_as_a_draft_until_the_supervisor_answers(
    home: Path, tmp_path: Path, make_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    with running_scripted_server(ARGOCD_SLOW) as (url, _state):
        open_agent = supervisor_agent(
            make_settings(), tmp_path,
            supervisor=scripted_setup([tool_call("ask_argocd", question="Apps in payments?")]),
            argocd=setup_model(served_model_settings(home, url)),
            devops=scripted_setup(["unused"]))
        app = PilothouseApp(open_agent, registry_path=tmp_path / "conversations.sqlite")
        async with app.run_test(size=(130, 40)) as pilot:
            await until(pilot, app.ready.is_set, "the agent to open")

            def drafts() -> list[str]:
                return [str(w.content)
                        for w in app.query("#chat .subagent-draft").results(Static)]

            await ask(pilot, app, "Which apps are in payments?")
            prefix = "argocd agent ▸ "
            await until(pilot, lambda: any(
                d.startswith(prefix) and 0 < len(d) - len(prefix) < len(SUB_LEAD)
                and SUB_LEAD.startswith(d[len(prefix):]) for d in drafts()),
                "the argocd agent's answer, partly written")
            assert re.fullmatch(r". argocd agent: writing its answer · \d+s",
                                str(app.status.content))
            await until(pilot, lambda: not app.busy, "the turn to end")
            assert drafts() == []  # the supervisor's answer took its place
            assert answers(app)[0].startswith(SUB_LEAD)
