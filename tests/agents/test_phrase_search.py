"""Which searches looked for the person's own phrase and found nothing
(`agents.phrase_search`), read from the shell's results."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from pilothouse.agents.phrase_search import persons_phrase, searched_phrase
from pilothouse.tools.shell.respell import grep_pattern


@pytest.mark.parametrize(("argv", "pattern"), [
    ("grep -rn 'retry a charge' src", "retry a charge"),
    ("grep -rin --include=*.py max_retries src", "max_retries"),
    ("egrep -rn -A 3 timeout .", "timeout"),
    ("grep -rn -- -v .", "-v"),
    # A pattern of its own kind (an expression given by option, whole words only, inverted).
    ("grep -rn -e timeout .", None),
    ("grep -rnw 'pool size' .", None),
    ("git log -n 5", None),
])
def test_the_pattern_a_grep_looks_for_is_read_from_its_arguments(
        argv: str, pattern: str | None) -> None:
    assert grep_pattern(shlex.split(argv)) == pattern


def ran(command: str, **result: Any) -> dict[str, Any]:
    return {"status": "ok", "exit_code": 1, "stdout": "", "command": command, **result}


def test_only_a_lone_grep_that_matched_nothing_even_respelled_is_a_search_that_failed() -> None:
    assert searched_phrase(ran("grep -rn 'retry a charge' src")) == "retry a charge"
    assert searched_phrase(ran("grep -rn 'retry a charge' src", exit_code=0,
                               stdout="src/pay.py:3: retry a charge")) is None
    # The shell's respelled search found lines: those are the answer.
    assert searched_phrase(ran("grep -i -E -rn 'db[-_. ]?pool' .",
                               exit_code=0, stdout="x", retried_from="grep -rn 'db pool' .")
                           ) is None
    # After a pipe, grep reads another command's output, not the files.
    assert searched_phrase(ran("ps aux | grep 'db connection'")) is None
    assert searched_phrase(ran("grep -rn 'db connection' . && ls")) is None
    assert searched_phrase({"status": "error", "exit_code": 2, "command": "grep -rn x"}) is None
    assert searched_phrase(ran("grep -rn 'unbalanced")) is None


def test_only_several_unquoted_words_of_the_question_in_a_row_are_the_persons_phrase() -> None:
    question = "how many times do we retry a charge on our end?"
    assert persons_phrase("retry a charge on our end", question)
    assert persons_phrase("Retry A Charge", question)
    # One word is a term the code may hold; words the person did not write in a row are not
    # their sentence.
    assert not persons_phrase("charge", question)
    assert not persons_phrase("retry charge", question)
    assert not persons_phrase("max_attempts", question)
    # What the person quoted is text they want found as it is.
    assert not persons_phrase("connection refused", 'where do we log "connection refused"?')
    assert not persons_phrase("connection refused", "grep for `connection refused`")
    assert not persons_phrase("connection refused", "where do we log 'connection refused'")
    assert persons_phrase("connection refused", "what's logged when the connection refused?")
