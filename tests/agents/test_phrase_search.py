"""Which patterns a search found nothing for are the person's own phrase
(`agents.phrase_search`); the shell says which pattern found nothing
(`tests/tools/shell/test_shell_respell.py`)."""

from __future__ import annotations

from pilothouse.agents.phrase_search import persons_phrase


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
