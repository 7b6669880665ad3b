"""The one place Pilothouse relies on llama-cpp-python behaviour that is not public API.

Everything else in the local model uses public API: `Llama.tokenize/detokenize/generate/reset`,
`Llama.ctx`/`Llama.model`, llama.cpp's C functions as `llama_cpp` exports them, and
`llama_grammar.json_schema_to_gbnf`/`LlamaGrammar.from_string` for grammars.

What is left is KV prefix reuse across *different* prompts. The public way, `Llama.save_state`
with `load_state` (which `LlamaRAMCache` stores), copies the whole context plus `Llama.scores`,
an n_batch x n_vocab float array: 512 x 151,936 x 4 B = 297 MiB per snapshot for Qwen2.5, on
top of the KV cache, so a 512 MiB budget would hold one snapshot and each save would copy
~300 MB. llama.cpp's per-sequence state API copies only the KV cache of sequence 0 (~28 KiB per
token here), but then Llama's own record of what the cache holds (`input_ids`, `n_tokens`) must
be set by hand. That bookkeeping is what this module touches; `tests/models/
test_local_llama_adapter.py` fails loudly if an upgrade changes it (llama-cpp-python is pinned).
"""

from __future__ import annotations

import ctypes
from typing import Any


def cached_tokens(llm: Any) -> list[int]:
    """The tokens whose keys and values the context holds, in order."""
    return [int(t) for t in llm.input_ids[: llm.n_tokens]]


def save_sequence(llm: Any, llama_cpp: Any) -> tuple[tuple[int, ...], bytes]:
    """(the cached tokens, the KV state of sequence 0) for `restore_sequence`."""
    size = llama_cpp.llama_state_seq_get_size(llm.ctx, 0)
    buf = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(llm.ctx, buf, size, 0)
    return tuple(cached_tokens(llm)), bytes(buf)[:written]


def restore_sequence(llm: Any, llama_cpp: Any, tokens: tuple[int, ...], data: bytes) -> None:
    """Put back a KV state saved by `save_sequence`.

    `reset()` first: it marks the logits in memory stale, so `generate()` decodes at least one
    token before it samples (the logits belong to whatever prompt ran last).
    """
    llm.reset()
    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if not llama_cpp.llama_state_seq_set_data(llm.ctx, buf, len(data), 0):
        raise RuntimeError("llama_state_seq_set_data failed")
    llm.input_ids[: len(tokens)] = tokens
    llm.n_tokens = len(tokens)
