"""How long an id and a message may be: one rule for every door (REST API, web UI and A2A).

An id names a conversation, an A2A context or task; a message is a question, an answer to an
approval, an A2A message's text. Every door checks them here before any work or storage, so a
10,000-character id or a 60,000-character message is refused the same way whether it comes in
by `POST /conversations/{id}/ask` or by A2A `SendMessage`, and the error says the limit. The
request body limit (PILOTHOUSE_API_MAX_BODY_BYTES) bounds the bytes; this bounds what a turn
and its stored history may hold.
"""

from __future__ import annotations

import re

#: The longest id (conversation, A2A context, task, message) any door accepts.
MAX_ID_CHARS = 64
#: The longest question (REST `question`, the text of an A2A message) any door accepts.
MAX_MESSAGE_CHARS = 20_000
#: What an id may hold: ':' for namespaced ids, '-' for UUIDs; no '/' or spaces (ids sit in
#: URL paths and thread keys).
ID_PATTERN = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_.:-]{{0,{MAX_ID_CHARS - 1}}}$")
ID_RULE = (f"letters, digits, '-', '_', '.', ':', starting with a letter or digit, at most "
           f"{MAX_ID_CHARS} characters")


def is_valid_id(value: str) -> bool:
    """True when `value` is an id every door accepts."""
    return bool(ID_PATTERN.match(value))


def id_problem(value: str, what: str = "id") -> str | None:
    """Why `value` is not an acceptable `what` (e.g. "context id"), or None when it is.

    Only the length and a short prefix of the value are quoted: the value itself may be the
    oversized thing.
    """
    if is_valid_id(value):
        return None
    if len(value) > MAX_ID_CHARS:
        return (f"The {what} is {len(value):,} characters long; the limit is {MAX_ID_CHARS} "
                f"({ID_RULE}).")
    return f"{value[:MAX_ID_CHARS]!r} is not a valid {what}: use {ID_RULE}."


def message_problem(text: str, what: str = "message") -> str | None:
    """Why `text` is too long for a `what`, or None when it fits."""
    if len(text) <= MAX_MESSAGE_CHARS:
        return None
    return (f"The {what} is {len(text):,} characters long; the limit is "
            f"{MAX_MESSAGE_CHARS:,}. Send a shorter one, or split it over several turns.")
